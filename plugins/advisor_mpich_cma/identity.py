"""Which MPI library is installed, whether it has CMA, and its effective CMA defaults.

Identity (implementation, flavour, version, device) comes from ``Facts.mpi``, which the facts
detectors read from the library's own strings (``MPI_Get_library_version``, ``mpichversion``).
The defaults of the CMA control variables are read from the installed library with ``mpivars``
(shipped with MPICH: one line per CVAR, ``NAME=default``); only when that is impossible does the
plugin fall back to the knob table (``advisor_mpich_cma.knobs``), labelled as such.
"""

from __future__ import annotations

from typing import Optional

from advisor.knobs import version_in
from advisor.libraries.mpich import parse_mpivars as _parse_catalogue
from advisor.models import MpiFacts

from advisor_mpich_cma import knobs

#: MPICH release that first shipped the CH4 CMA module (pmodels/mpich#6579, released in 4.3.0).
CMA_FIRST_VERSION = "4.3.0"

SOURCE_MPIVARS = "mpivars"
SOURCE_TABLE = "built-in table (fallback: library not queried)"


def mpich_init_keeps_cma(ptrace_scope: Optional[int]) -> bool:
    """Whether MPICH >= 5.0's init check leaves CMA on: only without Yama or with scope 0,
    whatever the capabilities (pmodels/mpich#7653, #7659)."""
    return ptrace_scope is None or ptrace_scope == 0


def cvar_defaults(text: str) -> dict[str, str]:
    """``mpivars`` output -> ``{CVAR name: default value as printed}``, read by the core's one
    ``mpivars`` reader (``advisor.libraries.mpich.parse_mpivars``)."""
    return {n: e.default or "" for n, e in _parse_catalogue(text).entries.items()}


def _as_int(v: object) -> Optional[int]:
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        return None


def library_defaults(mpi: MpiFacts, cvars: Optional[dict[str, str]]) -> dict:
    """Effective defaults of the CMA settings for this library.

    :param mpi: the library facts (flavour and version pick the fallback row).
    :param cvars: ``cvar_defaults`` output, or None when the library could not be queried.
    :return: for upstream MPICH ``{"cma_enable": 0|1|None, "threshold_bytes": int|None,
        "cell_size_bytes": int|None, "source": "mpivars"|fallback label}``; for HPE Cray MPICH
        ``{"mode": "XPMEM", "threshold_bytes": 8192, "source": ...}``.
    """
    if (mpi.flavour or "") == knobs.CRAY:
        return {"mode": knobs.knob(knobs.CRAY_MODE).default_for(mpi.version) or "XPMEM",
                "threshold_bytes": knobs.knob(knobs.CRAY_SIZE).default_for(mpi.version),
                "source": SOURCE_TABLE}
    if cvars and knobs.CMA_ENABLE in cvars:
        return {"cma_enable": _as_int(cvars.get(knobs.CMA_ENABLE)),
                "threshold_bytes": _as_int(cvars.get(knobs.CMA_THRESHOLD)),
                "cell_size_bytes": _as_int(cvars.get(knobs.CELL_SIZE)),
                "source": SOURCE_MPIVARS}
    v = mpi.version
    return {"cma_enable": knobs.knob(knobs.CMA_ENABLE).default_for(v),
            "threshold_bytes": knobs.knob(knobs.CMA_THRESHOLD).default_for(v),
            "cell_size_bytes": knobs.knob(knobs.CELL_SIZE).default_for(v),
            "source": SOURCE_TABLE}


def cma_applicability(mpi: MpiFacts, cvars: Optional[dict[str, str]]) -> tuple[bool, str]:
    """Whether this library has a CMA path the plugin can tune, and why not.

    :return: ``(True, "...")`` for HPE Cray MPICH and upstream MPICH >= 4.3 with the CH4 device
        and a CMA module (its CVAR listed by ``mpivars``); ``(False, reason)`` otherwise: no MPI,
        another implementation, the ch3 device, a release older than 4.3, or a build without CMA.
    """
    impl = (mpi.implementation or "").lower()
    if not impl:
        return False, "no MPI library detected (mpichversion / mpi4py not found)"
    if impl != "mpich":
        return False, (f"{mpi.implementation} is not MPICH: this plugin tunes MPICH's CMA path "
                       "(Open MPI's smsc/cma and Intel MPI need their own plugins)")
    if (mpi.flavour or "") == knobs.CRAY:
        return True, "HPE Cray MPICH: single copy through MPICH_SMP_SINGLE_COPY_MODE"
    device = (mpi.device or "").lower()
    if device.startswith("ch3"):
        return False, f"MPICH built with the {mpi.device} device: CMA exists only in ch4"
    if mpi.version and not version_in(mpi.version, f">={CMA_FIRST_VERSION}"):
        return False, (f"MPICH {mpi.version} predates the CH4 CMA module "
                       f"(first released in {CMA_FIRST_VERSION}, pmodels/mpich#6579)")
    if cvars is not None and knobs.CMA_ENABLE not in cvars:
        return False, (f"this MPICH build has no CMA module: mpivars does not list "
                       f"{knobs.CMA_ENABLE}")
    return True, f"MPICH {mpi.version or '(version unknown)'} with CH4 CMA"
