"""The code's layering: imports point one way, with no cycle at all."""

from __future__ import annotations

from pathlib import Path

import grimp
from importlinter import cli

ROOT = Path(__file__).resolve().parents[3]


def test_imports_keep_to_the_layers_in_importlinter():
    # Function-level and TYPE_CHECKING imports count (.importlinter says so).
    assert cli.lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True) == 0


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others():
    graph = grimp.build_graph("jobs", exclude_type_checking_imports=False, cache_dir=None)
    modules = {
        name for name in graph.modules if not name.startswith(("jobs.tests", "jobs.migrations"))
    }
    edges = {
        name: {
            target for target in graph.find_modules_directly_imported_by(name) if target in modules
        }
        for name in modules
    }
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
