"""MPI library facts: implementation, flavour, version, device, launcher, mpi4py version.

Two sources, both the library's own words:

* ``mpichversion`` (shipped with every MPICH build, also the ``mpich`` wheel): version, device
  and configure line; a fast subprocess (tens of milliseconds), used by the fingerprint detection.
* ``MPI_Get_library_version`` (MPI-3.0 standard, section 8.1.1; callable before ``MPI_Init``),
  read through mpi4py in a short-lived subprocess with ``mpi4py.rc.initialize = False``, so MPI is
  never initialised, neither here nor there.  Only the full ``detect()`` runs it.  It is what tells
  HPE Cray MPICH (``"MPI VERSION    : CRAY MPICH version 8.1.17..."``), Intel MPI, MVAPICH and
  Open MPI apart; Cray's ``mpichversion`` reports an upstream-looking base version, so the flavour
  is never inferred from a version number.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Optional

from advisor.facts.util import Notes
from advisor.libraries import intelmpi, mpich, mvapich, openmpi
from advisor.models import Facts, MpiFacts

#: Seconds allowed for ``mpichversion`` (measured here: ~0.045 s; 40x margin for loaded nodes).
MPICHVERSION_TIMEOUT_S = 2.0
#: Seconds allowed for the mpi4py library-version subprocess (measured here: ~0.12 s, no MPI init).
LIBRARY_VERSION_TIMEOUT_S = 10.0

_LIBRARY_VERSION_SCRIPT = (
    "import sys, mpi4py\n"
    "mpi4py.rc.initialize = False\n"
    "mpi4py.rc.finalize = False\n"
    "from mpi4py import MPI\n"
    "sys.stdout.write(MPI.Get_library_version())\n"
)


def find_tool(name: str) -> Optional[str]:
    """Path of ``name`` next to ``sys.executable`` (a venv with the ``mpich`` wheel) or on PATH."""
    cand = Path(sys.executable).parent / name
    if cand.is_file():
        return str(cand)
    return shutil.which(name)


def parse_mpichversion(text: str) -> dict:
    """Fields of ``mpichversion`` output.

    Returns ``{"implementation": mpich.NAME, "version", "device", "configure", "flavour"}``;
    ``flavour`` is ``"cray"`` when the tool's own text names Cray (e.g. a ``/opt/cray`` configure
    prefix), else ``"upstream"``.  Raises ``ValueError`` when there is no ``MPICH Version:`` line.
    """
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.startswith("MPICH "):
            fields[key[len("MPICH "):].strip().lower()] = value.strip()
    if not fields.get("version"):
        raise ValueError("no 'MPICH Version:' line in mpichversion output")
    first = next(" ".join(line.split()) for line in text.splitlines() if line.strip())
    return {
        "implementation": mpich.NAME,
        "version": fields["version"],
        "first_line": first,
        "device": fields.get("device") or None,
        "configure": fields.get("configure") or None,
        "flavour": mpich.CRAY if mpich.CRAY in text.lower() else mpich.UPSTREAM,
    }


#: (pattern on the library version string, implementation, flavour); first match wins.  Each
#: library's banners are its record's (``advisor.libraries``); the order is this reader's: Cray
#: MPICH first, upstream MPICH last, since the others' strings can carry MPICH's text too.
_BANNERS = tuple((pattern, lib.NAME, flavour)
                 for lib, banners in ((mpich, mpich.BANNERS[:1]), (intelmpi, intelmpi.BANNERS),
                                      (mvapich, mvapich.BANNERS), (openmpi, openmpi.BANNERS),
                                      (mpich, mpich.BANNERS[1:]))
                 for pattern, flavour in banners)


def parse_mpi_library_version(text: str) -> dict:
    """Implementation, flavour and version from an ``MPI_Get_library_version`` string.

    Returns ``{"implementation", "flavour", "version", "library_version"}`` where
    ``library_version`` is the first non-empty line with runs of whitespace collapsed.  Raises
    ``ValueError`` when no known banner is found (the caller keeps the first line only).
    NUL characters are dropped: Open MPI 5.0.11 counts the string's terminator in its length,
    so mpi4py returns it with a trailing ``\x00``.
    """
    text = text.replace("\x00", "")
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError("empty MPI library version string")
    for pattern, impl, flavour in _BANNERS:
        m = pattern.search(text)
        if m:
            return {"implementation": impl, "flavour": flavour, "version": m.group(1),
                    "library_version": lines[0]}
    raise ValueError(f"unknown MPI library: {lines[0][:80]!r}")


def run_mpichversion(path: str) -> str:
    """stdout of ``mpichversion``; raises ``subprocess.SubprocessError``/``OSError`` on failure."""
    done = subprocess.run([path], capture_output=True, text=True, timeout=MPICHVERSION_TIMEOUT_S,
                          check=True, stdin=subprocess.DEVNULL)
    return done.stdout


def run_library_version(python: Optional[str] = None) -> str:
    """``MPI_Get_library_version()`` through mpi4py in a child Python without MPI init.
    Raises ``subprocess.SubprocessError``/``OSError`` on failure or timeout."""
    done = subprocess.run([python or sys.executable, "-c", _LIBRARY_VERSION_SCRIPT],
                          capture_output=True, text=True, timeout=LIBRARY_VERSION_TIMEOUT_S,
                          check=True, stdin=subprocess.DEVNULL)
    return done.stdout


def package_version(name: str) -> Optional[str]:
    """Installed version of distribution ``name`` (``importlib.metadata``, no import), or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def combine(mpichversion: Optional[dict], library: Optional[dict], *,
            mpiexec: Optional[str] = None, mpi4py_version: Optional[str] = None) -> MpiFacts:
    """Merge parsed ``mpichversion`` and library-version fields into ``MpiFacts``.

    The library's own version string wins for implementation, flavour and version (Cray's
    ``mpichversion`` shows the upstream base version); ``device`` comes from ``mpichversion``.
    When the two name different implementations (an ``mpichversion`` on PATH that is not the
    library mpi4py loads), ``mpichversion`` is ignored.  Without a library string, upstream
    MPICH's ``library_version`` is the first line of ``mpichversion``: both print the same
    ``MPII_Version_*`` strings (checked on the recorded MPICH 5.0.2 outputs in tests/data/facts),
    which keeps the fast fingerprint equal to the full one.
    """
    mv = mpichversion or {}
    lib = library or {}
    if lib.get("implementation") and mv and lib["implementation"] != mv.get("implementation"):
        mv = {}
    if not lib.get("library_version") and mv.get("flavour") == "upstream":
        lib = {**lib, "library_version": mv.get("first_line")}
    return MpiFacts(
        implementation=lib.get("implementation") or mv.get("implementation"),
        flavour=lib.get("flavour") or mv.get("flavour"),
        version=lib.get("version") or mv.get("version"),
        device=mv.get("device"),
        library_version=lib.get("library_version"),
        mpiexec=mpiexec,
        mpi4py_version=mpi4py_version,
    )


def detect_mpi(notes: Optional[Notes] = None, *, library_version: bool = True) -> MpiFacts:
    """MPI facts of this environment.  ``library_version=False`` skips the mpi4py subprocess
    (fingerprint detection).  Never raises; failures go to ``notes``.  A missing MPI is not a
    failure: all fields stay None."""
    notes = notes if notes is not None else Notes()
    mv = None
    tool = find_tool("mpichversion")
    if tool:
        mv = notes.attempt("mpi: mpichversion", lambda: parse_mpichversion(run_mpichversion(tool)))
    mpi4py_version = package_version("mpi4py")
    lib = None
    if library_version and mpi4py_version:
        text = notes.attempt("mpi: MPI_Get_library_version", run_library_version)
        if text is not None:
            lib = notes.attempt("mpi: library version string",
                                lambda: parse_mpi_library_version(text))
            if lib is None and text.strip():
                lib = {"library_version": " ".join(text.strip().splitlines()[0].split())}
    return combine(mv, lib, mpiexec=find_tool("mpiexec"),
                   mpi4py_version=mpi4py_version)


def mpi_facts(facts: Facts) -> MpiFacts:
    """``facts.mpi`` when it names an implementation, else a fresh ``detect_mpi()`` (a hand-made
    ``Facts`` left MPI unknown); never raises: a failed detection keeps ``facts.mpi``."""
    if facts.mpi.implementation:
        return facts.mpi
    try:
        return detect_mpi()
    except Exception:  # noqa: BLE001 - lenient: identity stays unknown
        return facts.mpi
