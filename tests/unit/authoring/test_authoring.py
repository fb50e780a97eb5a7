"""The one front door for family authors: ``worksheetgen.authoring`` exports what a family
needs, in ``__all__``, and the example plugin imports nothing else of worksheetgen."""

from __future__ import annotations

from typing import get_args

from tests.conftest import ROOT
from worksheetgen import authoring
from worksheetgen.model import DISPLAY_KINDS, DisplayKind

EXAMPLE = ROOT / "examples" / "worksheetgen-dot-product" / "worksheetgen_dot_product"


def test_the_front_door_exports_everything_in_all():
    assert authoring.__all__ == sorted(authoring.__all__, key=lambda n: (not n.isupper(), n))
    for name in authoring.__all__:
        assert hasattr(authoring, name), name
    assert authoring.DISPLAY_KINDS == DISPLAY_KINDS == get_args(DisplayKind)


def test_the_example_plugin_imports_only_the_front_door():
    for path in sorted(EXAMPLE.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        imports = [
            line.strip()
            for line in source.splitlines()
            if line.strip().startswith(("from worksheetgen", "import worksheetgen"))
        ]
        assert set(imports) <= {"from worksheetgen.authoring import ("}, path.name
        assert source.count("worksheetgen.") == source.count("worksheetgen.authoring"), path.name
