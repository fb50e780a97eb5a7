"""Tolerances cover a student who follows the sheet: "round every answer to two decimals".

Such a student rounds the scaled (or masked) table, takes the softmax of the rounded table,
rounds A, multiplies the rounded A by V and rounds the output. Each step below is done by hand
with NumPy and Decimal, not with worksheetgen's arithmetic.
"""

from __future__ import annotations


def test_the_key_prints_every_margin_wider_than_the_printed_digits(runner, tmp_path):
    """A TA marking paper by hand sees the margin that grade and the exports accept."""
    import json
    import re

    from worksheetgen.cli import main

    result = runner.invoke(main, ["build", "--seed", "42", "--no-pdf", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (folder,) = tmp_path.iterdir()
    (sheet,) = json.loads((folder / "key.json").read_text(encoding="utf-8"))["sheets"]
    expected = []
    for q in sheet["questions"]:
        assert q["decimals"] == 2
        for part in q["parts"]:
            name = part["answer"]
            if q["kinds"][name] in ("matrix", "vector") and q["tolerance"][name] > 0.005:
                expected.append(f"{q['tolerance'][name]:.3f}".rstrip("0"))
    assert "0.01" in expected and any(len(m) == 5 for m in expected)  # A, and AV in 0.001s
    md = (folder / "key.md").read_text(encoding="utf-8")
    assert re.findall(r"_Accept each entry within ±([0-9.]+)\._", md) == expected
    tex = (folder / "key.tex").read_text(encoding="utf-8")
    assert re.findall(r"Accept each entry within \$\\pm([0-9.]+)\$", tex) == expected
    assert "Accept" not in (folder / "sheet.md").read_text(encoding="utf-8")
