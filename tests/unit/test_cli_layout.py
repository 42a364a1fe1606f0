"""The CLI is the only part of advisor that writes to the terminal or ends the process, and
every module of advisor (the CLI package included) stays within 400 lines (issue 14), and so does
every module of the built-in plugins (issue 26)."""

from __future__ import annotations

import ast

from support import REPO

ADVISOR = REPO / "advisor"
PLUGINS = REPO / "plugins"
#: Modules outside the CLI allowed to write stdout: a worker's result line is its protocol with
#: the parent process (advisor.measure.launch reads it), not output for the user.
PROTOCOL_WRITERS = {"advisor/measure/worker.py"}


def _call_name(node: ast.Call) -> str:
    parts = []
    f = node.func
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if isinstance(f, ast.Name):
        parts.append(f.id)
    return ".".join(reversed(parts))


def test_only_the_cli_prints_or_exits():
    offenders = []
    for path in ADVISOR.rglob("*.py"):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("advisor/cli/") or rel == "advisor/__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=rel)):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            writes = name in ("sys.stdout.write", "sys.stderr.write")
            if (name in ("print", "exit", "quit", "sys.exit", "os._exit")
                    or (writes and rel not in PROTOCOL_WRITERS)):
                offenders.append(f"{rel}:{node.lineno}: {name}()")
    assert not offenders, offenders


def test_the_cli_is_a_package_of_small_modules():
    assert (ADVISOR / "cli" / "__init__.py").is_file() and not (ADVISOR / "cli.py").exists()
    for path in (ADVISOR / "cli").glob("*.py"):
        n = len(path.read_text().splitlines())
        assert n <= 400, f"{path.relative_to(REPO)}: {n} lines"


def test_console_script_and_module_entry_points_resolve():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    from advisor.cli import main

    script = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]["advisor"]
    module, _, attr = script.partition(":")
    assert (module, attr) == ("advisor.cli", "main") and callable(main)
    assert "from advisor.cli import main" in (ADVISOR / "__main__.py").read_text()


def _modules_over_400_lines(root) -> dict[str, int]:
    """Path (relative to the repository) -> line count of every ``*.py`` under ``root`` longer
    than 400 lines."""
    big = {}
    for path in root.rglob("*.py"):
        n = len(path.read_text().splitlines())
        if n > 400:
            big[str(path.relative_to(REPO))] = n
    return big


def test_every_core_module_is_small():
    """Issue 14: no module under advisor/ over 400 lines."""
    big = _modules_over_400_lines(ADVISOR)
    assert not big, big


def test_every_plugin_module_is_small():
    """Issue 26: the 400-line rule covers the built-in plugins under plugins/ as it covers
    advisor/, workers included; no module is exempt."""
    big = _modules_over_400_lines(PLUGINS)
    assert not big, big


def test_internals_map_names_every_core_module():
    """docs/internals.md has one line per module: a new module must be placed on the map."""
    doc = (REPO / "docs" / "internals.md").read_text()
    missing = [str(p.relative_to(REPO)) for p in sorted(ADVISOR.rglob("*.py"))
               if f"`{p.relative_to(REPO)}`" not in doc]
    assert not missing, missing
