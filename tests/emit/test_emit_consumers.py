"""Each environment format loaded by its real consumer: bash, dash, zsh, tcsh and fish source the
file; Lmod and Environment Modules ``module load`` the modulefile.  The environment read back
with ``env -0`` must equal the profile's settings byte for byte, hostile values included, the
existing GLIBC_TUNABLES value must be merged (appended), and nothing in a value may run
(``$(touch MARKER)`` and friends create no file)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from consumers import (NASTY, assert_env, base_env, lmod_init, module_argv, modules_init,
                       mpi_module, read_env0, run_consumer)

from advisor.specs.selection import EmitOptions
from advisor.emit import render
from advisor.formats.quoting import module_unsafe
from advisor.plugins import collect, make_plugin_manager
from emit_fixtures import HOSTILE_MODULES, expected_env, standard_profile
from support import tool

pytestmark = pytest.mark.integration

ITEM = "glibc.malloc.hugetlb=1"
#: existing GLIBC_TUNABLES -> expected after loading (None: unset before loading)
MERGES = {
    "unset": (None, ITEM),
    "empty": ("", ITEM),
    "existing": ("glibc.malloc.check=3", "glibc.malloc.check=3:" + ITEM),
}
#: an existing value a careless merge would mangle (shells only: module systems treat list
#: items as paths of their own)
HOSTILE_EXISTING = "a=1 \"b\" $c `d` 'e' \\f ! g;h"


@pytest.fixture(scope="module")
def registry():
    reg = collect(make_plugin_manager(entry_points=False))
    return reg


@pytest.fixture(scope="module")
def profile():
    return standard_profile()


@pytest.fixture(scope="module")
def module_profile():
    """The hostile values module tools carry to every shell (the lmod and tcl formats refuse
    the others: advisor.formats.quoting.MODULE_MANGLED)."""
    return standard_profile(hostile=HOSTILE_MODULES)


SHELLS = {
    # name: (format, argv builder)
    "bash": ("env", lambda f: [tool("bash"), "--norc", "--noprofile", "-c", '. "$1"; env -0',
                               "sh", f]),
    "dash": ("env", lambda f: [tool("dash"), "-c", '. "$1"; env -0', "sh", f]),
    "zsh": ("env", lambda f: [tool("zsh"), "-f", "-c", '. "$1"; env -0', "zsh", f]),
    "tcsh": ("csh", lambda f: [tool("tcsh"), "-f", "-c", f"source {f}; env -0"]),
    "fish": ("fish", lambda f: [tool("fish"), "-N", "-c", f"source {f}; env -0"]),
}


@pytest.mark.parametrize("merge", sorted(MERGES))
@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_shell_sources_file(shell, merge, registry, profile, tmp_path):
    fmt, argv = SHELLS[shell]
    path = tmp_path / f"advisor.{fmt}"
    path.write_text(render(profile, fmt, registry, EmitOptions()), encoding="utf-8")
    existing, merged = MERGES[merge]
    want = expected_env(profile)
    want["GLIBC_TUNABLES"] = merged
    got = run_consumer(argv(str(path)), tmp_path, base_env(tmp_path, existing))
    assert_env(got, want, tmp_path)
    # settings dropped for this MPICH version or flavour must not appear
    assert b"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE" not in got
    assert b"MPICH_SMP_SINGLE_COPY_SIZE" not in got


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_shell_merge_keeps_hostile_existing_value(shell, registry, profile, tmp_path):
    fmt, argv = SHELLS[shell]
    path = tmp_path / f"advisor.{fmt}"
    path.write_text(render(profile, fmt, registry, EmitOptions()), encoding="utf-8")
    got = run_consumer(argv(str(path)), tmp_path, base_env(tmp_path, HOSTILE_EXISTING))
    assert got[b"GLIBC_TUNABLES"] == (HOSTILE_EXISTING + ":" + ITEM).encode()
    assert not (tmp_path / "MARKER").exists()


# --------------------------------------------------------------------------- module systems


MODULE_SYSTEMS = {
    # name: (format, file name in the module dir, code defining `module`)
    "lmod": ("lmod", "advisor.lua", lmod_init),
    "environment-modules": ("tcl", "advisor", modules_init),
}


def write_module(system: str, tmp_path: Path, registry, profile) -> tuple[str, Path]:
    fmt, fname, find_init = MODULE_SYSTEMS[system]
    init = find_init()
    moddir = tmp_path / "modulefiles"
    moddir.mkdir()
    (moddir / fname).write_text(render(profile, fmt, registry, EmitOptions()), encoding="utf-8")
    mpi_module(moddir, fmt)  # the module's prereq (advisor.formats.moddeps)
    return init, moddir


@pytest.mark.parametrize("merge", sorted(MERGES))
@pytest.mark.parametrize("system", sorted(MODULE_SYSTEMS))
def test_module_load(system, merge, registry, module_profile, tmp_path):
    profile = module_profile
    init, moddir = write_module(system, tmp_path, registry, profile)
    existing, merged = MERGES[merge]
    want = expected_env(profile)
    want["GLIBC_TUNABLES"] = merged
    got = run_consumer(module_argv(init, moddir), tmp_path, base_env(tmp_path, existing))
    assert_env(got, want, tmp_path)


@pytest.mark.parametrize("system", sorted(MODULE_SYSTEMS))
def test_module_unload_restores(system, registry, module_profile, tmp_path):
    profile = module_profile
    init, moddir = write_module(system, tmp_path, registry, profile)
    existing = MERGES["existing"][0]
    proc = subprocess.run(module_argv(init, moddir, unload=True), cwd=tmp_path,
                          env=base_env(tmp_path, existing), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    after = read_env0(proc.stdout.split(b"\0--UNLOADED--\0", 1)[1])
    assert after[b"GLIBC_TUNABLES"] == existing.encode()
    for name in expected_env(profile):
        if name != "GLIBC_TUNABLES":
            assert name.encode() not in after, name


# --------------------------------------------------------------------------- generated values

def generated_profile(seed: int, count: int = 40, alphabet: str = NASTY):
    import random

    from advisor.models import PluginResult, Recommendation, Setting
    from emit_fixtures import make_profile

    rng = random.Random(seed)
    settings = []
    for i in range(count):
        n = rng.randint(0, 24)
        value = "".join(rng.choice(alphabet + "abcXYZ019") for _ in range(n))
        settings.append(Setting(library="test", name=f"ADVISOR_G_{i:02d}", value=value))
    res = PluginResult(plugin="gen", probe="gen", status="ok", recommendations=[Recommendation(
        id="generated", title="generated", rationale="generated values", confidence="low",
        settings=settings)])
    return make_profile([res])


CONSUMERS = sorted(SHELLS) + sorted(MODULE_SYSTEMS)


@pytest.mark.parametrize("locale", ["C.UTF-8", "unset"])
@pytest.mark.parametrize("consumer", CONSUMERS)
def test_generated_hostile_values_survive(consumer, locale, registry, tmp_path):
    """40 values drawn (fixed seed) from characters that shells, Lua or Tcl interpret; also
    with no locale set (batch jobs often run in the C locale), bytes must not change."""
    alphabet = NASTY
    if consumer in MODULE_SYSTEMS:  # what the lmod and tcl formats refuse is left out
        alphabet = "".join(c for c in NASTY if module_unsafe(c) is None)
    prof = generated_profile(seed=7, alphabet=alphabet)
    want = {s.name: s.value for _, _, s in prof.settings()}
    if consumer in SHELLS:
        fmt, argv = SHELLS[consumer]
        path = tmp_path / f"advisor.{fmt}"
        path.write_text(render(prof, fmt, registry, EmitOptions()), encoding="utf-8")
        cmd = argv(str(path))
    else:
        init, moddir = write_module(consumer, tmp_path, registry, prof)
        cmd = module_argv(init, moddir)
    env = base_env(tmp_path, None)
    if locale == "unset":
        del env["LANG"], env["LC_ALL"]
    got = run_consumer(cmd, tmp_path, env)
    assert_env(got, want, tmp_path)
