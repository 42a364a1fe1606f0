"""Module formats in their real consumers: the lmod and tcl modulefiles loaded by Lmod and
Environment Modules from tcsh, zsh and fish (tests/emit covers bash).  Values the module tools
would mangle for one of these shells (advisor.formats.quoting.MODULE_MANGLED) are refused by
both formats; this test keeps checking that the refusal is still needed (the raw tool does
mangle each one) and that every other hostile value arrives unchanged."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from consumers import MODULECMD_TCL, MPI_MODULE, base_env, mpi_module, read_env0

from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.errors import EmitError
from advisor.formats.quoting import lua_quote, module_unsafe, tcl_quote
from advisor.plugins import collect, make_plugin_manager
from emit_fixtures import HOSTILE_MODULES, make_profile
from advisor.models import PluginResult, Recommendation, Setting
from support import tool

pytestmark = pytest.mark.integration

LMOD_INIT = Path("/usr/share/lmod/lmod/init")
#: one value per MODULE_MANGLED rule, each seen mangled by a real tool and shell
MANGLED = {"!": ("lmod", "tcsh"), "{": ("lmod", "tcsh"), "[ab]": ("tcl", "tcsh"),
           "~": ("tcl", "bash"), "a:=ls": ("lmod", "zsh"), "\u2028": ("lmod", "fish")}


def _modulecmd() -> str:
    for cand in MODULECMD_TCL:
        if cand and Path(cand).exists() and shutil.which("tclsh"):
            return cand
    pytest.skip("Environment Modules not installed here (CI installs it)")


def _script(system: str, shell: str, moddir: Path) -> tuple[list[str], str]:
    """``(argv, script)`` that loads module ``advisor`` from ``moddir`` in ``shell`` and prints
    the environment with ``env -0``."""
    if system == "lmod" and not LMOD_INIT.exists():
        pytest.skip("Lmod not installed here (CI installs it)")
    em = _modulecmd() if system == "tcl" else ""
    init = {
        ("lmod", "tcsh"): f"source {LMOD_INIT}/tcsh",
        ("lmod", "zsh"): f"source {LMOD_INIT}/zsh",
        ("lmod", "bash"): f"source {LMOD_INIT}/bash",
        ("lmod", "fish"): f"source {LMOD_INIT}/fish",
        ("tcl", "tcsh"): f"alias module 'eval `tclsh {em} tcsh \\!*`'",
        ("tcl", "zsh"): f'module() {{ eval "$(tclsh {em} zsh "$@")"; }}',
        ("tcl", "bash"): f'module() {{ eval "$(tclsh {em} bash "$@")"; }}',
        ("tcl", "fish"): f"function module; eval (tclsh {em} fish $argv | string collect); end",
    }[(system, shell)]
    argv = {"tcsh": [tool("tcsh"), "-f"], "zsh": [tool("zsh"), "-f"],
            "bash": [tool("bash"), "--norc", "--noprofile"], "fish": [tool("fish"), "-N"]}[shell]
    return argv, (f"{init}\nmodule use {moddir}\nmodule load {MPI_MODULE}\nmodule load advisor\n"
                  "env -0\n")


def _load(system: str, shell: str, modulefile: str, tmp_path: Path) -> dict[bytes, bytes]:
    moddir = tmp_path / f"mod-{system}-{shell}"
    moddir.mkdir()
    (moddir / ("advisor.lua" if system == "lmod" else "advisor")).write_text(modulefile,
                                                                              encoding="utf-8")
    mpi_module(moddir, system)  # the module's prereq (advisor.formats.moddeps)
    argv, script = _script(system, shell, moddir)
    path = moddir / "load.script"
    path.write_text(script, encoding="utf-8")
    proc = subprocess.run([*argv, str(path)], cwd=tmp_path, env=base_env(tmp_path, None),
                          capture_output=True, timeout=60)
    return read_env0(proc.stdout)


@pytest.mark.parametrize("shell", ["tcsh", "zsh", "fish"])
@pytest.mark.parametrize("system", ["lmod", "tcl"])
def test_carried_hostile_values_arrive_unchanged(system, shell, tmp_path):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")
    settings = [Setting(library="test", name=k, value=v) for k, v in HOSTILE_MODULES.items()]
    prof = make_profile([PluginResult(plugin="p", probe="p", status="ok", recommendations=[
        Recommendation(id="r", title="t", rationale="r", confidence="low", settings=settings)])])
    registry = collect(make_plugin_manager(entry_points=False))
    got = _load(system, shell, render(prof, system, registry, EmitOptions()), tmp_path)
    for name, value in HOSTILE_MODULES.items():
        assert got.get(name.encode()) == value.encode(), (system, shell, name)
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize("value", sorted(MANGLED))
def test_mangled_values_are_refused_and_really_mangled(value, tmp_path):
    system, shell = MANGLED[value]
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")
    assert module_unsafe(value)
    prof = make_profile([PluginResult(plugin="p", probe="p", status="ok", recommendations=[
        Recommendation(id="r", title="t", rationale="r", confidence="low",
                       settings=[Setting(library="test", name="ADVISOR_M", value=value)])])])
    registry = collect(make_plugin_manager(entry_points=False))
    for fmt in ("lmod", "tcl"):
        with pytest.raises(EmitError, match="p/r: ADVISOR_M: value holds"):
            render(prof, fmt, registry, EmitOptions())
    # written by hand, correctly quoted for Lua/Tcl: the tool still delivers something else
    modulefile = (f"setenv({lua_quote('ADVISOR_M')}, {lua_quote(value)})\n" if system == "lmod"
                  else f"#%Module1.0\nsetenv ADVISOR_M {tcl_quote(value)}\n")
    got = _load(system, shell, modulefile, tmp_path)
    assert got.get(b"ADVISOR_M") != value.encode(), (
        f"{system} in {shell} now carries {value!r}: MODULE_MANGLED can be relaxed")
