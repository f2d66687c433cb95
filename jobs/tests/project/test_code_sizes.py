"""The code stays readable in pieces: no module over 600 lines, no function over 80.

Measured over the whole tree but its tests and migrations (a module by its line count,
a function from its `def` to its last line, as ast sees them). What is still over while
it is being split is named below; once it is within the limits its line goes.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[3]
MODULE_LINES = 600
FUNCTION_LINES = 80
# Not the code: tests, migrations, and what tools build or install (the docs site, the
# wheel's build tree, hidden folders such as .venv).
LEFT_OUT = {"tests", "migrations", "node_modules", "site", "build", "dist"}

# Still over, until they are split (a module, or module:Class.function).
STILL_OVER = frozenset(
    {
        "jobs/web/forms.py",
        "jobs/web/forms.py:JobForm.__init__",
        "jobs/api/serializers.py",
        "jobs/pytasks/registry.py",
    }
)


class Oversized(NamedTuple):
    where: str  # a module, or module:Class.function
    lines: int
    limit: int


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a module, named with the classes and functions around it."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((prefix + child.name, child))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def oversized(root: Path) -> list[Oversized]:
    """The modules and functions under `root` over their limit."""
    over = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if LEFT_OUT & set(relative.parts) or any(part.startswith(".") for part in relative.parts):
            continue
        text = path.read_text(encoding="utf-8")
        name = relative.as_posix()
        lines = len(text.splitlines())
        if lines > MODULE_LINES:
            over.append(Oversized(name, lines, MODULE_LINES))
        for qualified, function in _functions(ast.parse(text)):
            length = function.end_lineno - function.lineno + 1
            if length > FUNCTION_LINES:
                over.append(Oversized(f"{name}:{qualified}", length, FUNCTION_LINES))
    return over


def test_no_module_is_over_600_lines_nor_a_function_over_80():
    assert [item for item in oversized(ROOT) if item.where not in STILL_OVER] == []


def test_a_file_split_at_last_leaves_the_list_of_those_still_over():
    found = {item.where for item in oversized(ROOT)}
    assert STILL_OVER - found == set()


def test_the_measure_finds_a_long_method_and_a_long_module(tmp_path: Path):
    lines = "".join(f"        x = {n}\n" for n in range(FUNCTION_LINES))  # def + 80: 81
    padding = "\n" * MODULE_LINES
    (tmp_path / "long.py").write_text(f"class A:\n    def f(self):\n{lines}{padding}")
    # Exactly at the limits: not over.
    exact = "".join(f"    y = {n}\n" for n in range(FUNCTION_LINES - 1))
    rest = "\n" * (MODULE_LINES - FUNCTION_LINES)
    (tmp_path / "exact.py").write_text(f"def g():\n{exact}{rest}")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_long.py").write_text(padding + "\n")
    assert oversized(tmp_path) == [
        Oversized("long.py", MODULE_LINES + 2 + FUNCTION_LINES, MODULE_LINES),
        Oversized("long.py:A.f", FUNCTION_LINES + 1, FUNCTION_LINES),
    ]
