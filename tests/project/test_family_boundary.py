"""A family owns its behaviour: no stage outside ``families/`` tests which family it has.

What differs between families is stated by the family (hooks on ``Family``, its ``carries``,
the display kinds of its shown values), so the stages, grading and the templates read those
and never compare a family's name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from worksheetgen.families import FAMILIES

PACKAGE = ROOT / "worksheetgen"
TEMPLATES = ROOT / "templates"


def _modules_outside_families() -> list[Path]:
    return sorted(
        p for p in PACKAGE.rglob("*.py") if "families" not in p.relative_to(PACKAGE).parts
    )


def _names_in(node: ast.AST) -> set[str]:
    """The family names among the string constants in ``node`` (a tuple, list, set too)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & set(FAMILIES)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_names_in(e) for e in node.elts))
    return set()


def family_tests(source: str) -> list[tuple[int, str]]:
    """Where ``source`` compares a family (anything spelled ``family``: ``spec.family``,
    ``family.name``) with a family's name, or asks for a family by a constant name
    (``get_family("heatmap")``, ``FAMILIES["heatmap"]``): (line, name). Words that only
    happen to be family names too (the ``causal`` given, the ``heatmap`` display kind, the
    ``softmax`` step) are not tests for a family."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        operands: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any("family" in ast.unparse(side).lower() for side in sides):
                operands = sides
        elif isinstance(node, ast.Call) and "get_family" in ast.unparse(node.func):
            operands = list(node.args)
        elif isinstance(node, ast.Subscript) and "FAMILIES" in ast.unparse(node.value):
            operands = [node.slice]
        line = getattr(node, "lineno", 0)
        for operand in operands:
            found += [(line, name) for name in sorted(_names_in(operand))]
    return found


def test_the_check_finds_a_stage_that_tests_for_a_family() -> None:
    assert family_tests('if spec.family == "heatmap":\n    pass\n') == [(1, "heatmap")]
    assert family_tests('x = spec.family in ("cross", "heads")\n') == [(1, "cross"), (1, "heads")]
    assert family_tests('f = get_family("spot-the-bug")\n') == [(1, "spot-the-bug")]
    assert family_tests('c = FAMILIES["multihead"]\n') == [(1, "multihead")]
    assert family_tests('if family.name != "projections":\n    pass\n') == [(1, "projections")]
    assert family_tests('if kind == "heatmap" or given.get("causal"):\n    pass\n') == []


@pytest.mark.parametrize(
    "path", _modules_outside_families(), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_module_outside_families_tests_for_a_family(path: Path) -> None:
    assert family_tests(path.read_text(encoding="utf-8")) == []


#: a template that looks at an item's or a question's family to decide what to show
TEMPLATE_TEST = re.compile(r"""\.family\b|['"]family['"]""")


def test_the_template_check_finds_a_family_test() -> None:
    assert TEMPLATE_TEST.search("selectattr('family', 'equalto', 'heatmap')")
    assert TEMPLATE_TEST.search("((* if item.spec.family == 'heatmap' *))")
    assert not TEMPLATE_TEST.search("((* if g.kind == 'matrix' *))")


@pytest.mark.parametrize(
    "path", sorted(TEMPLATES.rglob("*.j2")), ids=lambda p: str(p.relative_to(TEMPLATES))
)
def test_no_template_tests_for_a_family(path: Path) -> None:
    assert not TEMPLATE_TEST.search(path.read_text(encoding="utf-8"))
