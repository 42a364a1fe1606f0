"""Each environment format loaded by its real consumer: bash, dash, zsh, tcsh and fish source the
file; Lmod and Environment Modules ``module load`` the modulefile.  The environment read back
with ``env -0`` must equal the profile's settings byte for byte, hostile values included, the
existing GLIBC_TUNABLES value must be merged (appended), and nothing in a value may run
(``$(touch MARKER)`` and friends create no file)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from advisor.emit import EmitOptions, render
from advisor.plugins import collect, make_plugin_manager
from emit_fixtures import expected_env, standard_profile
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
def emitters():
    reg = collect(make_plugin_manager(entry_points=False))
    return reg.emitters


@pytest.fixture(scope="module")
def profile():
    return standard_profile()


def read_env0(blob: bytes) -> dict[bytes, bytes]:
    out = {}
    for entry in blob.split(b"\0"):
        if b"=" in entry:
            k, v = entry.split(b"=", 1)
            out[k] = v
    return out


def base_env(home: Path, tunables: str | None) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    if tunables is not None:
        env["GLIBC_TUNABLES"] = tunables
    return env


def run_consumer(argv: list[str], cwd: Path, env: dict[str, str]) -> dict[bytes, bytes]:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return read_env0(proc.stdout)


def assert_env(got: dict[bytes, bytes], want: dict[str, str], cwd: Path) -> None:
    for name, value in sorted(want.items()):
        assert name.encode() in got, f"{name} not set"
        assert got[name.encode()] == value.encode("utf-8"), name
    assert not (cwd / "MARKER").exists(), "a value was executed"


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
def test_shell_sources_file(shell, merge, emitters, profile, tmp_path):
    fmt, argv = SHELLS[shell]
    path = tmp_path / f"advisor.{fmt}"
    path.write_text(render(profile, fmt, emitters, EmitOptions()), encoding="utf-8")
    existing, merged = MERGES[merge]
    want = expected_env(profile)
    want["GLIBC_TUNABLES"] = merged
    got = run_consumer(argv(str(path)), tmp_path, base_env(tmp_path, existing))
    assert_env(got, want, tmp_path)
    # settings dropped for this MPICH version or flavour must not appear
    assert b"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE" not in got
    assert b"MPICH_SMP_SINGLE_COPY_SIZE" not in got


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_shell_merge_keeps_hostile_existing_value(shell, emitters, profile, tmp_path):
    fmt, argv = SHELLS[shell]
    path = tmp_path / f"advisor.{fmt}"
    path.write_text(render(profile, fmt, emitters, EmitOptions()), encoding="utf-8")
    got = run_consumer(argv(str(path)), tmp_path, base_env(tmp_path, HOSTILE_EXISTING))
    assert got[b"GLIBC_TUNABLES"] == (HOSTILE_EXISTING + ":" + ITEM).encode()
    assert not (tmp_path / "MARKER").exists()


# --------------------------------------------------------------------------- module systems


def lmod_init() -> str:
    """bash code that defines Lmod's ``module`` command."""
    found = sorted(glob.glob("/usr/share/lmod/lmod/init/bash")
                   + glob.glob("/usr/share/lmod/*/init/bash"))
    if not found:
        pytest.skip("Lmod not installed here (Debian package lmod; CI installs it)")
    return f'source "{found[0]}" >/dev/null 2>&1'


#: Debian's environment-modules and lmod packages conflict (each declares Conflicts: on the
#: other), so CI installs lmod with apt and unpacks the environment-modules .deb under
#: /opt/environment-modules (``dpkg-deb -x``); its modulecmd.tcl runs with the system tclsh.
MODULECMD_TCL = (
    os.environ.get("ADVISOR_MODULECMD_TCL", ""),
    "/usr/lib/x86_64-linux-gnu/modulecmd.tcl",
    "/usr/lib/modulecmd.tcl",
    "/opt/environment-modules/usr/lib/x86_64-linux-gnu/modulecmd.tcl",
    "/opt/environment-modules/usr/lib/modulecmd.tcl",
    "/usr/share/Modules/libexec/modulecmd.tcl",
)


def modules_init() -> str:
    """bash code that defines Environment Modules' ``module`` command."""
    tclsh = shutil.which("tclsh")
    for cand in MODULECMD_TCL:
        if cand and os.path.exists(cand) and tclsh:
            return f'module() {{ eval "$("{tclsh}" "{cand}" bash "$@")"; }}'
    pytest.skip("Environment Modules not installed here (Debian package environment-modules, "
                "or its .deb unpacked under /opt/environment-modules; CI installs it)")


MODULE_SYSTEMS = {
    # name: (format, file name in the module dir, code defining `module`)
    "lmod": ("lmod", "advisor.lua", lmod_init),
    "environment-modules": ("tcl", "advisor", modules_init),
}


def module_argv(init: str, moddir: Path, *, unload: bool = False) -> list[str]:
    script = f'{init}; module use "{moddir}" && module load advisor && env -0'
    if unload:
        script += ' && printf "\\0--UNLOADED--\\0" && module unload advisor && env -0'
    return [tool("bash"), "--norc", "--noprofile", "-c", script]


def write_module(system: str, tmp_path: Path, emitters, profile) -> tuple[str, Path]:
    fmt, fname, find_init = MODULE_SYSTEMS[system]
    init = find_init()
    moddir = tmp_path / "modulefiles"
    moddir.mkdir()
    (moddir / fname).write_text(render(profile, fmt, emitters, EmitOptions()), encoding="utf-8")
    return init, moddir


@pytest.mark.parametrize("merge", sorted(MERGES))
@pytest.mark.parametrize("system", sorted(MODULE_SYSTEMS))
def test_module_load(system, merge, emitters, profile, tmp_path):
    init, moddir = write_module(system, tmp_path, emitters, profile)
    existing, merged = MERGES[merge]
    want = expected_env(profile)
    want["GLIBC_TUNABLES"] = merged
    got = run_consumer(module_argv(init, moddir), tmp_path, base_env(tmp_path, existing))
    assert_env(got, want, tmp_path)


@pytest.mark.parametrize("system", sorted(MODULE_SYSTEMS))
def test_module_unload_restores(system, emitters, profile, tmp_path):
    init, moddir = write_module(system, tmp_path, emitters, profile)
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

#: characters some consumer gives a meaning to, plus non-ASCII text (2-, 3- and 4-byte UTF-8)
NASTY = "'\"$`\\!;&|<>(){}[]*?~#%^=:, \u00e9\u00df\u6771\U0001F680\u2028\u00a0-+@/."


def generated_profile(seed: int, count: int = 40):
    import random

    from advisor.models import PluginResult, Recommendation, Setting
    from emit_fixtures import make_profile

    rng = random.Random(seed)
    settings = []
    for i in range(count):
        n = rng.randint(0, 24)
        value = "".join(rng.choice(NASTY + "abcXYZ019") for _ in range(n))
        settings.append(Setting(library="test", name=f"ADVISOR_G_{i:02d}", value=value))
    res = PluginResult(plugin="gen", probe="gen", status="ok", recommendations=[Recommendation(
        id="generated", title="generated", rationale="generated values", confidence="low",
        settings=settings)])
    return make_profile([res])


CONSUMERS = sorted(SHELLS) + sorted(MODULE_SYSTEMS)


@pytest.mark.parametrize("locale", ["C.UTF-8", "unset"])
@pytest.mark.parametrize("consumer", CONSUMERS)
def test_generated_hostile_values_survive(consumer, locale, emitters, tmp_path):
    """40 values drawn (fixed seed) from characters that shells, Lua or Tcl interpret; also
    with no locale set (batch jobs often run in the C locale), bytes must not change."""
    prof = generated_profile(seed=7)
    want = {s.name: s.value for _, _, s in prof.settings()}
    if consumer in SHELLS:
        fmt, argv = SHELLS[consumer]
        path = tmp_path / f"advisor.{fmt}"
        path.write_text(render(prof, fmt, emitters, EmitOptions()), encoding="utf-8")
        cmd = argv(str(path))
    else:
        init, moddir = write_module(consumer, tmp_path, emitters, prof)
        cmd = module_argv(init, moddir)
    env = base_env(tmp_path, None)
    if locale == "unset":
        del env["LANG"], env["LC_ALL"]
    got = run_consumer(cmd, tmp_path, env)
    assert_env(got, want, tmp_path)
