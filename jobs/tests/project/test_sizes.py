"""No module over 600 lines and no function over 80, so that each can be read in one
sitting: the app (jobs/) and the rest of the tree (the site, the example host, the
benchmarks and scripts). Tests and migrations are left out (a migration is written by
Django; a test file is a list of cases), and so are hidden folders (.venv) and what tools
build (the docs site, the wheel's build tree).

A function's length is that of its `def` statement, decorators excluded, as `ast` gives
it (end_lineno - lineno + 1); a module's is its number of lines.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

pytestmark = pytest.mark.once  # the same on every database and Django (pytest.ini)

PACKAGE = Path(__file__).resolve().parents[2]
ROOT = PACKAGE.parent

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

# Still over, each being split on a branch of its own. Take a name out when its module
# or function is back under the limit (the last test below says when an entry is no
# longer needed).
MODULES_OVER: set[str] = set()
FUNCTIONS_OVER: set[str] = set()


class Length(NamedTuple):
    """The length in lines of a module ("path") or a function ("path::Class.name")."""

    name: str
    lines: int


LEFT_OUT = {"tests", "migrations", "node_modules", "site", "build", "dist"}


def _modules() -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if LEFT_OUT & set(parts) or any(part.startswith(".") for part in parts):
            continue
        yield path


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """Every function in `tree` by its qualified name (methods and nested functions too)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                yield name, node
            yield from _functions(node, f"{name}.")
        else:
            yield from _functions(node, prefix)


def module_lengths() -> list[Length]:
    return [
        Length(str(path.relative_to(ROOT)), len(path.read_text().splitlines()))
        for path in _modules()
    ]


def function_lengths() -> list[Length]:
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text())
        for name, node in _functions(tree):
            lines = node.end_lineno - node.lineno + 1  # type: ignore[attr-defined]
            found.append(Length(f"{path.relative_to(ROOT)}::{name}", lines))
    return found


def test_no_module_is_over_600_lines():
    over = [m for m in module_lengths() if m.lines > MAX_MODULE_LINES]
    assert [m for m in over if m.name not in MODULES_OVER] == []


def test_no_function_is_over_80_lines():
    over = [f for f in function_lengths() if f.lines > MAX_FUNCTION_LINES]
    assert [f for f in over if f.name not in FUNCTIONS_OVER] == []


def test_the_measure_finds_methods_by_their_class():
    tree = ast.parse("class A:\n    def f(self):\n        def g():\n            pass\n")
    assert [name for name, _node in _functions(tree)] == ["A.f", "A.f.g"]


def test_every_name_allowed_over_the_limits_is_still_over_them():
    modules = {m.name for m in module_lengths() if m.lines > MAX_MODULE_LINES}
    functions = {f.name for f in function_lengths() if f.lines > MAX_FUNCTION_LINES}
    assert MODULES_OVER - modules == set()
    assert FUNCTIONS_OVER - functions == set()
