"""Every built-in plugin follows the plugin template of docs/plugins.md ("Plugin template") and
has no import loop between its own modules.

The import graph is built with ``ast`` over the package's files: every ``import`` /
``from ... import`` of a module of the same package counts, at module level or inside a function
(a lazy import is still a loop: it only moves the failure to run time).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
BUILTINS = ("advisor_mpich_cma", "advisor_host_buffer", "advisor_memory_pool", "advisor_openmpi")
TEMPLATE = ("plugin.py", "measure.py", "recommend.py", "evidence.py", "lint.py", "verify.py",
            "knobs.py", "figures.py", "workers/__init__.py")


def _module_name(pkg: str, path: Path) -> str:
    rel = path.relative_to(PLUGINS / pkg).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join([pkg, *parts])


def import_graph(pkg: str) -> dict[str, set[str]]:
    """``{module: {modules of the same package it imports}}`` for the package ``pkg``."""
    files = {_module_name(pkg, p): p for p in (PLUGINS / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        here = mod.split(".") if is_pkg else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                if t in files and t != mod:
                    graph[mod].add(t)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a list of modules (first == last), or [] when the graph is acyclic."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return []

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return []


@pytest.mark.parametrize("pkg", BUILTINS)
def test_builtin_plugin_has_every_template_file(pkg):
    missing = [f for f in TEMPLATE if not (PLUGINS / pkg / f).is_file()]
    assert not missing, f"{pkg} lacks template files {missing}"


@pytest.mark.parametrize("pkg", BUILTINS)
def test_builtin_plugin_imports_are_acyclic(pkg):
    graph = import_graph(pkg)
    assert f"{pkg}.plugin" in graph and graph[f"{pkg}.plugin"], "the graph was not built"
    cycle = find_cycle(graph)
    assert not cycle, " -> ".join(cycle)


def test_the_cycle_finder_finds_a_loop():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []
