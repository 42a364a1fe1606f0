"""Consumers of emitted files, for the emit tests: run a file through a real shell or module
system in a clean environment and read the environment back with ``env -0``."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import tool


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


#: The MPI module the shipped and fixture profiles' modules depend on by default
#: (``LIBRARY/VERSION`` of their recorded MPICH: ``advisor.formats.moddeps``).
MPI_MODULE = "mpich/5.0.2"


def mpi_module(moddir: Path, fmt: str, name: str = MPI_MODULE) -> Path:
    """A stand-in MPI module ``name`` in ``moddir`` (a real modulefile of format ``fmt``,
    ``lmod`` or ``tcl``): it declares the family ``MPI``, as a site's MPI modules do, and sets
    ``FAKE_MPI=name``."""
    path = moddir / (name + (".lua" if fmt == "lmod" else ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'family("MPI")\nsetenv("FAKE_MPI", "{name}")\n' if fmt == "lmod" else
                    "#%Module1.0\nif {[info commands family] ne {}} { family MPI }\n"
                    f"setenv FAKE_MPI {name}\n", encoding="utf-8")
    return path


def module_argv(init: str, moddir: Path, *, unload: bool = False) -> list[str]:
    """bash loading module ``advisor`` from ``moddir`` (after the MPI module it depends on,
    :func:`mpi_module`, when ``moddir`` has it), printing ``env -0``; with ``unload``, then
    unloading it and printing ``env -0`` again after a ``--UNLOADED--`` record."""
    mpi = f"module load {MPI_MODULE} && " if any(moddir.glob("mpich/*")) else ""
    script = f'{init}; module use "{moddir}" && {mpi}module load advisor && env -0'
    if unload:
        script += ' && printf "\\0--UNLOADED--\\0" && module unload advisor && env -0'
    return [tool("bash"), "--norc", "--noprofile", "-c", script]


#: characters some consumer gives a meaning to, plus non-ASCII text (2-, 3- and 4-byte UTF-8)
NASTY = "'\"$`\\!;&|<>(){}[]*?~#%^=:, \u00e9\u00df\u6771\U0001F680\u2028\u00a0-+@/."
