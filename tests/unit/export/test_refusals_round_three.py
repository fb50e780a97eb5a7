"""Issue 34, sections 3 and 4: a refused pooled export names every failing pool and the bank
it came from; a pool of pick 2 or more whose picks Canvas would weigh by their blanks, not
their points, is refused for Canvas with what to change."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from worksheetgen.cli import main
from worksheetgen.errors import ExportError
from worksheetgen.export import export_bytes
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

TWO_POOLS = """\
sheet:
  id: two-pools
  title: Two pools
questions:
  - pool: one
    pick: 1
    from:
      - {id: a1, family: softmax, points: 4, params: {T: 2}}
      - {id: a2, family: heads, points: 5}
  - pool: two
    pick: 2
    from:
      - {id: b1, family: softmax, points: 3, params: {T: 2}}
      - {id: b2, family: cross, format: choice, points: 3, params: {numeric: true}}
      - {id: b3, family: heads, points: 3}
"""

#: three multiple-choice alternatives of equal points: one blank each, so Canvas's equal
#: split per blank is the sheet's split per pick
ALL_CHOICE = """\
sheet:
  id: all-choice
  title: Choices
questions:
  - pool: concepts
    pick: 2
    from:
      - {id: c1, family: concept, format: choice, points: 2, params: {ask: why-sqrt-dk}}
      - {id: c2, family: concept, format: choice, points: 2, params: {ask: mask-inf}}
      - {id: c3, family: concept, format: choice, points: 2, params: {ask: when-causal}}
"""


def _key(tmp_path: Path, text: str, versions: int = 6) -> dict:
    bank = tmp_path / "bank.yaml"
    bank.write_text(text, "utf-8")
    folder = build(
        BuildOptions(seed=42, versions=versions, banks=(str(bank),), out=str(tmp_path), pdf=False)
    ).folder
    return json.loads((folder / "key.json").read_text("utf-8"))


def test_a_refused_export_names_every_failing_pool(tmp_path):
    data = _key(tmp_path, TWO_POOLS)
    with pytest.raises(ExportError) as err:
        export_bytes(data, "qti")
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith("key.json: pool one: expected every sheet's graded points")
    assert "; pool two: expected each sheet's picks to keep their points in Canvas" in line
    with pytest.raises(ExportError) as err:
        export_bytes(data, "gift")
    assert "pool one:" in str(err.value) and "pool two:" in str(err.value)


def test_a_build_that_refuses_its_export_names_the_bank_not_a_key_json(tmp_path):
    bank = tmp_path / "two.yaml"
    bank.write_text(TWO_POOLS, "utf-8")
    out = tmp_path / "out"
    argv = ["build", "--seed", "1", "--versions", "4", "--no-pdf", "--bank", str(bank)]
    result = CliRunner().invoke(main, [*argv, "--out", str(out), "--export", "moodle"])
    assert result.exit_code != 0
    (line,) = [x for x in result.output.splitlines() if x.strip()]
    assert line.startswith(f"worksheetgen: error: {bank}: pool one: ")
    assert "key.json" not in line and "Traceback" not in result.output
    assert not out.exists() or not any(out.rglob("key.json"))  # nothing written


def test_a_pick_two_pool_whose_picks_canvas_would_weigh_by_blanks_is_refused(tmp_path):
    """A 3-point multiple-choice pick (1 blank) beside a 3-point table (4 blanks) would get
    1/5 of the item's 6 points from Canvas's scoring, not 3: refused for Canvas, naming the
    picks' points and blanks and what to change; Moodle's cloze weighs its gaps and keeps it."""
    data = _key(tmp_path, TWO_POOLS.replace("points: 5}", "points: 4}"))
    with pytest.raises(ExportError) as err:
        export_bytes(data, "qti")
    line = str(err.value)
    assert "pool one" not in line  # equal points now
    assert re.search(r"pool two: .* got b\d 3 point\(s\) over \d+ blank\(s\), b\d 3 point", line)
    assert "give the pool pick 1, or alternatives whose points are in proportion" in line
    assert "export it with --to moodle" in line
    assert export_bytes(data, "moodle")  # Moodle gives each gap its weight


def test_a_pick_two_pool_of_equal_blanks_per_point_exports_to_canvas(tmp_path):
    data = _key(tmp_path, ALL_CHOICE)
    with zipfile.ZipFile(__import__("io").BytesIO(export_bytes(data, "qti"))) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".xml") and "meta" not in n and "/" in n]
        xml = zf.read(name).decode("utf-8")
    items = re.findall(r'<item ident="[^"]*" title="1\. concepts \[([A-F])\]">(.*?)</item>', xml)
    assert len(items) == 6
    for _, body in items:
        assert body.count("<response_lid") == 2  # one letter blank per pick
        assert "<fieldentry>4</fieldentry>" in body
