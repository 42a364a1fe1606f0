"""Knob records of the mpich-cma plugin: the settings that choose MPICH's single-copy path.

Upstream MPICH reads every control variable (CVAR) as ``MPIR_CVAR_<NAME>`` and also under the
``MPICH_<NAME>`` and ``MPIR_PARAM_<NAME>`` prefixes (MPICH's generated ``mpir_cvars.c``; the
``mpivars`` tool lists each CVAR of the installed library with its default).  HPE Cray MPICH
uses its own names (``intro_mpi(3)`` of HPE Cray MPICH).

Defaults per version range are the labelled fallback of ``advisor_mpich_cma.identity``: the
values read from the installed library (``mpivars``) always win.
"""

from __future__ import annotations

from advisor.knobs import Knob, VersionedDefault, cma_need, knob_named

UPSTREAM = "upstream"
CRAY = "cray"

CMA_ENABLE = "MPIR_CVAR_CH4_CMA_ENABLE"
CMA_THRESHOLD = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"
CELL_SIZE = "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"
CRAY_MODE = "MPICH_SMP_SINGLE_COPY_MODE"
CRAY_SIZE = "MPICH_SMP_SINGLE_COPY_SIZE"
CRAY_GPU = "MPICH_GPU_SUPPORT_ENABLED"

#: Valid values of MPICH_SMP_SINGLE_COPY_MODE (HPE Cray MPICH intro_mpi; stackinator#169).
CRAY_MODES = ("XPMEM", "CMA", "NONE")

_SRC_CMA = ("pmodels/mpich#6579 (CMA added, released in 4.3.0, default 0); pmodels/mpich#7639 "
            "(default 1 and threshold 8192 from 5.0.0); mpivars of mpich 4.3.2 and 5.0.2 wheels")
_SRC_CELL = "pmodels/mpich#7639 (iqueue cell 16384 -> 8192 in 5.0.0); mpivars of mpich 5.0.2"
_SRC_CRAY = ("HPE Cray MPICH intro_mpi(3) man page; MPICH_SMP_SINGLE_COPY_SIZE 8192 observed on "
             "8.1.17; eth-cscs/stackinator#169, #171")


def _prefixes(cvar: str) -> list[str]:
    base = cvar[len("MPIR_CVAR_"):]
    return [f"MPICH_{base}", f"MPIR_PARAM_{base}"]


KNOBS: tuple[Knob, ...] = (
    # MPICH reads CVAR booleans with its own parser: on 5.0.2, 0/1 and lower-case yes/no/
    # true/false start; "Yes", "2" or " 1" abort MPI_Init (measured by the lint tests here)
    Knob(library="mpich", flavour=UPSTREAM, name=CMA_ENABLE, type="bool",
         allowed=[0, 1, "yes", "no", "true", "false"],
         defaults=[VersionedDefault(versions=">=4.3,<5", value=0),
                   VersionedDefault(versions=">=5", value=1)],
         versions=">=4.3", aliases=_prefixes(CMA_ENABLE),
         description="1 enables the CMA (process_vm_readv) single-copy path for intra-node "
                     "messages; MPICH >= 5.0 forces it off at init unless Yama ptrace_scope is 0",
         source=_SRC_CMA, needs=[cma_need("1|yes|true")]),
    Knob(library="mpich", flavour=UPSTREAM, name=CMA_THRESHOLD, type="bytes", unit="bytes",
         minimum=0, defaults=[VersionedDefault(versions=">=4.3,<5", value=16384),
                              VersionedDefault(versions=">=5", value=8192)],
         versions=">=4.3", aliases=_prefixes(CMA_THRESHOLD),
         description="messages of at least this many bytes use CMA (plain integer bytes)",
         source=_SRC_CMA, needs=[cma_need()]),
    Knob(library="mpich", flavour=UPSTREAM, name=CELL_SIZE, type="bytes", unit="bytes",
         minimum=0, defaults=[VersionedDefault(versions="<5", value=16384),
                              VersionedDefault(versions=">=5", value=8192)],
         aliases=_prefixes(CELL_SIZE),
         description="size of a POSIX shared-memory iqueue cell (the two-copy eager path)",
         source=_SRC_CELL),
    Knob(library="mpich", flavour=CRAY, name=CRAY_MODE, type="enum", allowed=list(CRAY_MODES),
         defaults=[VersionedDefault(versions=">=0", value="XPMEM")],
         description="single-copy mechanism of HPE Cray MPICH; XPMEM is inert when "
                     "MPICH_GPU_SUPPORT_ENABLED=1 (CMA is used then)",
         source=_SRC_CRAY, needs=[cma_need("cma")]),
    Knob(library="mpich", flavour=CRAY, name=CRAY_SIZE, type="bytes", unit="bytes", minimum=0,
         defaults=[VersionedDefault(versions=">=8.1.17", value=8192)],
         description="messages of at least this many bytes use the single-copy path",
         source=_SRC_CRAY),
    Knob(library="mpich", flavour=CRAY, name=CRAY_GPU, type="int", allowed=[0, 1],
         defaults=[VersionedDefault(versions=">=0", value=0)],
         description="1 enables GPU-aware MPI (needs the GPU transport layer linked); disables "
                     "XPMEM single copy",
         source=_SRC_CRAY),
)


def knob(name: str) -> Knob:
    """The record of ``KNOBS`` named ``name`` (canonical name or alias).  Raises ``KeyError``."""
    return knob_named(KNOBS, name)
