"""The easybuild format through EasyBuild itself: the ``modextravars`` fragment is parsed by
EasyBuild's easyconfig parser, turned into Lua and Tcl modules by EasyBuild's module
generators (tests/emit/easybuild_modules.py), and those modules are loaded by Lmod and
Environment Modules.  The environment read back must hold every value byte for byte, and
nothing may run.  Values the format refuses are shown to need refusing: written into an
easyconfig anyway, EasyBuild's modules load something else, fail to load, or run them."""

from __future__ import annotations

import glob
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from consumers import NASTY, assert_env, base_env, lmod_init, module_argv, modules_init, \
    read_env0
from emit_fixtures import HOSTILE, HOSTILE_EASYBUILD, expected_env, make_profile, \
    standard_profile

from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.formats.easybuild import easybuild_unsafe
from advisor.formats.quoting import python_quote
from advisor.models import PluginResult, Recommendation, Setting
from advisor.plugins import collect, make_plugin_manager

pytestmark = pytest.mark.integration

HELPER = Path(__file__).resolve().parent / "easybuild_modules.py"
#: module system -> (subdirectory the helper writes, code defining ``module``)
SYSTEMS = {"lmod": ("lua", lmod_init), "environment-modules": ("tcl", modules_init)}


def _lmod_cmd() -> str:
    found = sorted(glob.glob("/usr/share/lmod/lmod/libexec/lmod")
                   + glob.glob("/usr/share/lmod/*/libexec/lmod"))
    if not found:
        pytest.skip("Lmod not installed here (EasyBuild needs a modules tool; CI installs lmod)")
    return found[0]


def easybuild_modules(fragment: str, tmp_path: Path) -> tuple[dict, Path]:
    """Run EasyBuild on ``fragment``; returns the ``modextravars`` it parsed and the directory
    holding ``lua/advisor.lua`` and ``tcl/advisor``."""
    pytest.importorskip("easybuild.framework", reason="easybuild-framework not installed "
                        "(pip install easybuild-framework; the test extra has it)")
    path = tmp_path / "advisor-fragment.eb"
    path.write_text(fragment, encoding="utf-8")
    out = tmp_path / "eb"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "LMOD_CMD": _lmod_cmd(), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    proc = subprocess.run([sys.executable, str(HELPER), str(path), str(out)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), out


def load(system: str, moddir: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    sub, find_init = SYSTEMS[system]
    return subprocess.run(module_argv(find_init(), moddir / sub), cwd=tmp_path,
                          env=base_env(tmp_path, "glibc.malloc.check=3"), capture_output=True,
                          timeout=60)


@pytest.fixture(scope="module")
def registry():
    return collect(make_plugin_manager(entry_points=False))


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_easybuild_modules_load_every_value(system, registry, tmp_path):
    prof = standard_profile(hostile=HOSTILE_EASYBUILD)
    fragment = render(prof, "easybuild", registry, EmitOptions())
    parsed, moddir = easybuild_modules(fragment, tmp_path)
    want = expected_env(prof)
    assert parsed == want  # EasyBuild's parser reads the dict we wrote
    proc = load(system, moddir, tmp_path)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    # GLIBC_TUNABLES: EasyBuild cannot append, so the existing value is overwritten (the
    # fragment says so in a comment)
    assert_env(read_env0(proc.stdout), want, tmp_path)


def _generated_values(seed: int, count: int) -> dict[str, str]:
    rng = random.Random(seed)
    out = {}
    for i in range(count):
        value = "".join(rng.choice(NASTY + "abcXYZ019") for _ in range(rng.randint(0, 16)))
        out[f"ADVISOR_G_{i:02d}"] = value
    return out


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_generated_values_refused_or_carried(system, registry, tmp_path):
    """Values drawn (fixed seed) from characters shells, Lua or Tcl interpret: each one the
    format accepts must come out of EasyBuild's module unchanged, with nothing run."""
    values = {k: v for k, v in _generated_values(11, 200).items() if easybuild_unsafe(v) is None}
    assert len(values) >= 10  # enough accepted values to mean something
    res = PluginResult(plugin="gen", probe="gen", status="ok", recommendations=[Recommendation(
        id="generated", title="generated", rationale="generated values", confidence="low",
        settings=[Setting(library="test", name=k, value=v) for k, v in values.items()])])
    fragment = render(make_profile([res]), "easybuild", registry, EmitOptions())
    _, moddir = easybuild_modules(fragment, tmp_path)
    proc = load(system, moddir, tmp_path)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert_env(read_env0(proc.stdout), values, tmp_path)


REFUSED = sorted(set(HOSTILE) - set(HOSTILE_EASYBUILD))


@pytest.mark.parametrize("name", REFUSED)
def test_refused_values_would_not_survive_easybuild(name, tmp_path):
    """The reason for each refusal, measured: the value written into an easyconfig by hand
    (bypassing the format's check) does not reach the environment unchanged in at least one
    of the two module systems, or its module fails to load, or it runs something."""
    value = HOSTILE[name]
    assert easybuild_unsafe(value)
    fragment = f"modextravars = {{{python_quote(name)}: {python_quote(value)}}}\n"
    parsed, moddir = easybuild_modules(fragment, tmp_path)
    assert parsed == {name: value}  # the easyconfig itself is fine: the modules are not
    outcomes = []
    for system in sorted(SYSTEMS):
        proc = load(system, moddir, tmp_path)
        got = read_env0(proc.stdout).get(name.encode()) if proc.returncode == 0 else None
        outcomes.append(proc.returncode != 0 or got != value.encode("utf-8")
                        or (tmp_path / "MARKER").exists())
    assert any(outcomes), f"{name}={value!r} survives EasyBuild in both module systems"
