"""Imports run one way, down (issue 26).

The import graph of ``advisor/`` and ``plugins/`` is built with :mod:`ast` from every import
statement, including those inside functions and under ``if TYPE_CHECKING:``: a lazy import is
still a dependency, it only hides it from the interpreter at start-up.  The layers are declared
once, here (``LAYERS``), and drawn in docs/internals.md ("Layers"); a test keeps the two alike.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from support import REPO

#: Bottom to top.  A module may import from its own layer or one below, never above.  A name
#: matches the longest prefix listed; ``advisor_*`` is every plugin package under plugins/.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("advisor", "advisor.errors", "advisor.textfile", "advisor.nesting", "advisor.models",
              "advisor.models_step", "advisor.models_app", "advisor.models_fleet", "advisor.knobs", "advisor.specs",
              "advisor.machine_class", "advisor.verify_outcome", "advisor.save",
              "advisor.profile", "advisor.schema", "advisor.shipped")),
    ("libraries", ("advisor.libraries", "advisor.runtime")),
    ("harness", ("advisor.facts", "advisor.measure", "advisor.steps", "advisor.probe",
                 "advisor.baseline", "advisor.hookspecs", "advisor.plugins")),
    ("plugins", ("advisor_*",)),
    ("domain", ("advisor.runner", "advisor.verify", "advisor.verify_plan", "advisor.joint",
                "advisor.formats", "advisor.emit", "advisor.lint", "advisor.config", "advisor.appverify",
                "advisor.fleet")),
    ("report", ("advisor.report",)),
    ("cli", ("advisor.cli", "advisor.__main__")),
)
#: Domain packages a plugin must never import: the domain reads what plugins give it.
PLUGIN_FORBIDDEN = ("advisor.report", "advisor.fleet", "advisor.emit", "advisor.formats",
                    "advisor.lint", "advisor.cli", "advisor.runner", "advisor.verify")


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for advisor/ and each plugin package under plugins/."""
    found = {}
    for top, base in (("advisor", REPO), ("plugins", REPO / "plugins")):
        for path in (REPO / top).rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _graph() -> tuple[dict[str, set[str]], list[tuple[str, str, str, int]]]:
    """Edges module -> imported modules (project modules only), and every imported name as
    ``(importer, module, name, line)``."""
    mods = _modules()
    edges: dict[str, set[str]] = defaultdict(set)
    names: list[tuple[str, str, str, int]] = []

    def owner(dotted: str) -> str | None:
        while dotted and dotted not in mods:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for mod, path in mods.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if (target := owner(alias.name)) and target != mod:
                        edges[mod].add(target)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in mods:
                        edges[mod].add(submodule)
                    elif (target := owner(source)) and target != mod:
                        edges[mod].add(target)
                        names.append((mod, target, alias.name, node.lineno))
    return edges, names


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            hit = (module.startswith(prefix[:-1]) if prefix.endswith("*")
                   else module == prefix or module.startswith(prefix + "."))
            if hit and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def _plugin(module: str) -> str | None:
    return module.split(".")[0] if module.startswith("advisor_") else None


def test_every_module_has_a_layer():
    assert [m for m in _modules() if _layer(m) < 0] == []


def test_no_import_runs_up_a_layer():
    edges, _ = _graph()
    up = sorted(f"{m} ({LAYERS[_layer(m)][0]}) -> {t} ({LAYERS[_layer(t)][0]})"
                for m, targets in edges.items() for t in targets if _layer(t) > _layer(m))
    assert not up, "\n".join(up)


def test_no_import_loops():
    """Tarjan's strongly connected components over the module graph: none of two or more."""
    edges, _ = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for module in sorted(_modules()):
        if module not in index:
            visit(module)
    assert not loops, "\n".join(" <-> ".join(loop) for loop in loops)


def test_plugins_import_no_other_plugin_and_no_domain():
    edges, _ = _graph()
    bad = sorted(f"{m} -> {t}" for m, targets in edges.items() if _plugin(m)
                 for t in targets
                 if (_plugin(t) and _plugin(t) != _plugin(m))
                 or any(t == p or t.startswith(p + ".") for p in PLUGIN_FORBIDDEN))
    assert not bad, "\n".join(bad)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_plugins_import_no_private_core_name():
    """Neither an underscore name of the core nor anything from an underscore module of it."""
    edges, names = _graph()
    bad = {f"{m}:{line}: {name} from {t}" for m, t, name, line in names
           if _plugin(m) and not _plugin(t) and _private(name)}
    bad |= {f"{m}: imports {t}" for m, targets in edges.items() if _plugin(m)
            for t in targets if not _plugin(t) and any(map(_private, t.split(".")))}
    assert not bad, "\n".join(sorted(bad))


def test_the_layers_are_drawn_in_internals():
    """docs/internals.md draws the same layers, top first, one line per layer."""
    doc = (REPO / "docs" / "internals.md").read_text()
    drawn = [line.split("|")[1].strip() for line in doc.splitlines()
             if line.startswith("| layer ") and ":" in line.split("|")[1]]
    assert drawn == [f"layer {i + 1}: {name}" for i, (name, _) in reversed(list(enumerate(LAYERS)))]
    for _, prefixes in LAYERS:
        for prefix in prefixes:
            if prefix != "advisor" and prefix != "advisor.__main__":
                assert f"`{prefix.replace('.', '/')}" in doc or f"`{prefix}" in doc, prefix
