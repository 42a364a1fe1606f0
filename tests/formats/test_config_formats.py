"""The config-kind snippet formats in their consumers: ``cxx-header`` compiled by g++ and its
values read back from the running program, ``cupy`` run by a real Python (issue 18: every
setting has a deployable form)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.errors import EmitError
from advisor.formats import writers_of
from advisor.models import PluginResult, Recommendation, Setting
from advisor.plugins import collect, make_plugin_manager
from advisor.profile import load_profile
from advisor.runtime import CupyPlan, cupy_plan
from emit_fixtures import make_profile
from support import SHIPPED_PROFILE, tool

DATA_FORMATS = {"toml", "json"}


@pytest.fixture(scope="module")
def registry():
    return collect(make_plugin_manager(entry_points=False))


def _profile(*settings: Setting):
    return make_profile([PluginResult(plugin="p", probe="p", status="ok", recommendations=[
        Recommendation(id="r", title="t", rationale="why", confidence="low",
                       settings=list(settings))])])


def test_every_config_setting_of_the_full_profile_has_a_snippet_format(registry):
    prof = load_profile(SHIPPED_PROFILE)
    config = [s for _, _, s in prof.settings(kinds=("config",), include_defaults=True)]
    assert len(config) == 6  # the count: Umpire QuickPool x3, host pool x3
    for s in config:
        snippets = [f for f in writers_of(s) if f not in DATA_FORMATS]
        assert snippets, s.name
        text = render(prof, snippets[0], registry, EmitOptions(include_defaults=True))
        assert s.name.split(".")[-1] in text
    left = render(prof, "env", registry, EmitOptions())
    assert ("# left out: host.QuickPool.alignment=2097152 (umpire config setting, not written by "
            "env; written by --format toml, json, cxx-header)") in left


def _compile_and_run(tmp_path: Path, header: str, prints: list[tuple[str, str]]) -> list[str]:
    gxx = tool("g++")
    (tmp_path / "advisor.hpp").write_text(header, encoding="utf-8")
    body = "\n".join(f'    std::cout << {expr} << "\\n";' for expr, _ in prints)
    (tmp_path / "main.cpp").write_text(
        '#include "advisor.hpp"\n#include <iostream>\nint main() {\n' + body + "\n}\n")
    subprocess.run([gxx, "-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror", "-o",
                    str(tmp_path / "main"), str(tmp_path / "main.cpp")], check=True,
                   capture_output=True, timeout=120)
    proc = subprocess.run([str(tmp_path / "main")], capture_output=True, timeout=30, cwd=tmp_path)
    return proc.stdout.decode("utf-8").splitlines()


def test_cxx_header_compiles_and_holds_the_profile_values(tmp_path, registry):
    prof = load_profile(SHIPPED_PROFILE)
    header = render(prof, "cxx-header", registry, EmitOptions())
    want = {}
    for _, _, s in prof.settings(kinds=("config",)):
        ns = s.library.replace("-", "_")
        want[f"hpc_advisor::{ns}::{s.name.replace('.', '::')}"] = s.value
    exprs = [(e, v) for e, v in sorted(want.items())]
    got = _compile_and_run(tmp_path, header, [
        (f"({e} == MADV_HUGEPAGE ? \"MADV_HUGEPAGE\" : \"other\")" if v == "MADV_HUGEPAGE" else e,
         v) for e, v in exprs])
    assert got == [str(v) for _, v in exprs]


def test_cxx_header_strings_are_literals_not_code(tmp_path, registry):
    nasty = '"; int x = system("touch MARKER"); // \\ ??/ \u00e9\u6771 */'
    prof = _profile(Setting(library="umpire", name="host.QuickPool.tag", value=nasty,
                            kind="config"),
                    Setting(library="umpire", name="host.QuickPool.fraction", value=0.25,
                            kind="config"),
                    Setting(library="umpire", name="host.QuickPool.alignment", value=4096,
                            kind="config", type="bytes", unit="bytes"))
    header = render(prof, "cxx-header", registry, EmitOptions())
    ns = "hpc_advisor::umpire::host::QuickPool::"
    got = _compile_and_run(tmp_path, header, [(ns + "tag", ""), (ns + "fraction", ""),
                                              (ns + "alignment", "")])
    assert got == [nasty, "0.25", "4096"] and not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize("name", ["host.class.alignment", "host.Quick-Pool.x", "__x"])
def test_cxx_header_refuses_names_that_are_no_identifier(name, registry):
    prof = _profile(Setting(library="umpire", name=name, value=1, kind="config"))
    with pytest.raises(EmitError, match="not a C.. identifier"):
        render(prof, "cxx-header", registry, EmitOptions())


def test_snippet_formats_with_nothing_to_write_are_errors(registry):
    prof = load_profile(SHIPPED_PROFILE)
    with pytest.raises(EmitError, match="nothing to write as cxx-header: 2 setting.s. of a kind "
                                        "cxx-header does not write"):
        render(prof, "cxx-header", registry, EmitOptions(plugins=frozenset({"mpich-cma"})))
    with pytest.raises(EmitError, match="nothing to write as cupy: .* of libraries cupy does "
                                        "not write"):
        render(prof, "cupy", registry, EmitOptions())


def _cupy_profile():
    return _profile(Setting(library="cupy", name="pool", value="MemoryAsyncPool", kind="config",
                            type="enum"),
                    Setting(library="cupy", name="pool_limit", value="90%", kind="config"),
                    Setting(library="cupy", name="CUPY_GPU_MEMORY_LIMIT", value="1073741824"),
                    Setting(library="mpich", name="MPIR_CVAR_CH4_CMA_ENABLE", value=1))


def test_cupy_snippet_holds_the_plan_as_literals(registry):
    prof = _cupy_profile()
    text = render(prof, "cupy", registry, EmitOptions())
    assert "# left out: MPIR_CVAR_CH4_CMA_ENABLE=1 (a setting of mpich; cupy writes only cupy " \
           "settings)" in text
    tree = ast.parse(text)
    (call,) = [n.value for n in tree.body if isinstance(n, ast.Assign)
               and getattr(n.targets[0], "id", "") == "PLAN"]
    plan = CupyPlan(**{k.arg: ast.literal_eval(k.value) for k in call.keywords})
    assert plan == cupy_plan(prof)
    assert plan.pool == "MemoryAsyncPool" and plan.limit_fraction == 0.9


def test_cupy_snippet_runs_in_python(tmp_path, registry):
    """Run by a real interpreter: with CuPy it installs the pool; without CuPy (this machine)
    it raises advisor.runtime's CupyUnavailable, after building the plan."""
    path = tmp_path / "advisor_cupy.py"
    path.write_text(render(_cupy_profile(), "cupy", registry, EmitOptions()), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    try:
        import cupy  # noqa: F401
    except ImportError:
        assert proc.returncode == 1
        assert "CupyUnavailable: configure_cupy: CuPy is not importable" in proc.stderr
    else:  # pragma: no cover - a machine with CuPy and a device
        assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("fmt", ["cxx-header", "cupy"])
def test_lint_names_a_snippet_file_instead_of_reading_it_as_shell(fmt, registry, tmp_path):
    """A file a write-only format wrote is one line from ``advisor lint`` naming that format
    (exit 2), not an "unreadable line" error of its text read as sh (a new user's report)."""
    from advisor.errors import BadInputError
    from advisor.lint import read_env_file

    prof = _cupy_profile() if fmt == "cupy" else load_profile(SHIPPED_PROFILE)
    path = tmp_path / "snippet"
    path.write_text(render(prof, fmt, registry, EmitOptions()))
    with pytest.raises(BadInputError) as err:
        read_env_file(path)
    assert str(err.value).startswith(f"{path}: a {fmt} file (advisor emit --format {fmt})")
    res = subprocess.run([tool("advisor"), "lint", str(path)], capture_output=True, text=True)
    assert res.returncode == 2 and res.stdout == ""
    assert [ln for ln in res.stderr.splitlines() if "error" in ln] == [
        f"advisor: error: {err.value}"]
