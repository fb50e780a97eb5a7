"""The folder is the architecture: packages say what they are for, imports form no cycle, and
the imports made inside functions say why they wait.

The layers themselves are import-linter's contracts in pyproject.toml (``lint-imports``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "worksheetgen"
PACKAGES = sorted(p.parent for p in PACKAGE.glob("*/__init__.py"))


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: p.name)
def test_every_package_says_what_it_is_for_and_what_it_may_import(folder: Path) -> None:
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
    assert doc, folder
    if folder.name not in ("families", "export"):  # their __init__ is their registry
        assert "May import:" in doc, folder


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph("worksheetgen", exclude_type_checking_imports=True)
    assert _cycles(graph) == []


def test_only_the_version_1_reader_asks_the_families() -> None:
    """A current key is graded and exported from the file alone, and written from the solved
    records (solve/ attaches each question's title and carried steps): of keyjson, grading
    and export, only keyjson.legacy (version 1 keys) imports the families."""
    graph = grimp.build_graph("worksheetgen", exclude_type_checking_imports=True)
    asking = sorted(
        module
        for module in graph.modules
        if module.split(".")[1:2] in (["keyjson"], ["grading"], ["export"])
        and any(
            m.startswith("worksheetgen.families")
            for m in graph.find_modules_directly_imported_by(module)
        )
    )
    assert asking == ["worksheetgen.keyjson.legacy"]


def _lazy_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    top = {id(node) for node in tree.body}
    typing_only = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top | typing_only:
            found.append((node.lineno, ast.unparse(node), lines[: node.lineno]))
    return found


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_an_import_inside_a_function_says_why_it_waits(path: Path) -> None:
    for lineno, text, before in _lazy_imports(path):
        own = before[-1].strip()
        above = [line.strip() for line in before[:-1] if line.strip()]
        # the comment is on the line, or above this import or the imports right before it
        reasons = [own] + list(reversed(above))
        explained = False
        for line in reasons:
            if "#" in line:
                explained = True
                break
            if not line.startswith(("from ", "import ", ")")) and not line.endswith(","):
                break
        assert explained, f"{path.name}:{lineno}: {text}"
