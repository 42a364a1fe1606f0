"""The ``route`` mode of MPICH's worker entry (``advisor_mpich_cma.workers.rank route``): the
CMA threshold written through MPI_T phase by phase and a few messages per phase, nothing timed,
so that a ``strace -f`` of the launch counts each phase's CMA calls
(``advisor_mpich_cma.emitted.traced_route``).  Runs inside the MPI ranks.
"""

from __future__ import annotations

import argparse
import os
from typing import Sequence

from advisor.measure.mpi.loops import THRESHOLD_ON

#: Marker path prefix of the ``route`` mode: one ``access(2)`` of ``ROUTE_MARKER + "T:N"``
#: before each phase and of ``ROUTE_MARKER + "end"`` after the last, so a ``strace -f`` of the
#: launch splits its CMA calls by phase.
ROUTE_MARKER = "/advisor-route-phase-"
#: Message exchanges per phase of the ``route`` mode (each one message each way).
ROUTE_EXCHANGES = 4


def route(MPI, comm, checks: Sequence[tuple[int, int]], write: bool = True,
          env_phases: int = 0) -> dict:
    """The ``route`` mode: for each ``(threshold, nbytes)`` of ``checks``, write the threshold
    CVAR through MPI_T on every rank (``write``, from the ``env_phases``-th phase on; otherwise
    the environment's threshold stands and ``threshold`` only labels the phase: the first
    ``env_phases`` phases run before any write, as a launch that writes nothing), mark the
    phase (``ROUTE_MARKER``), exchange ``ROUTE_EXCHANGES`` messages of ``nbytes`` each way,
    then a barrier.  Nothing is timed: the probe counts the CMA system calls of each phase
    under ``strace`` (``advisor_mpich_cma.emitted.traced_route``).  Returns ``{"phases":
    [[threshold, nbytes], ...], "messages_per_phase": int}`` or ``{"mpit_error": ...}``."""
    import numpy as np

    from advisor_mpich_cma.knobs import CMA_THRESHOLD
    from advisor_mpich_cma.mpit import Mpit, MpitError

    thr = mpit = None
    if write:
        try:
            mpit = Mpit()
            thr = mpit.cvar(CMA_THRESHOLD)
            initial = thr.read()
        except MpitError as exc:
            return {"mpit_error": str(exc)}
    peer = 1 - comm.Get_rank()
    for i, (threshold, nbytes) in enumerate(checks):
        if thr is not None and i >= env_phases:
            thr.write(int(threshold))
        comm.Barrier()
        os.access(f"{ROUTE_MARKER}{threshold}:{nbytes}", os.F_OK)
        send, recv = np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)
        for _ in range(ROUTE_EXCHANGES):
            comm.Sendrecv(send, dest=peer, sendtag=9, recvbuf=recv, source=peer, recvtag=9)
        comm.Barrier()
    os.access(f"{ROUTE_MARKER}end", os.F_OK)  # what follows (restore, report) is not a phase
    if thr is not None:
        thr.write(initial)
        mpit.close()
    return {"phases": [list(c) for c in checks], "messages_per_phase": 2 * ROUTE_EXCHANGES}


def route_mode(MPI, comm, argv: list) -> dict:
    """The worker's ``route`` mode (an ``advisor.measure.mpi.rank.ExtraMode``): ``argv`` has
    ``--checks T:N,...`` and optionally ``--env-form`` (nothing written through MPI_T; the
    environment's threshold stands and each phase's ``T`` only labels it) or ``--env-phases K``
    (the first K phases so, the others written)."""
    ap = argparse.ArgumentParser(prog="python -m advisor_mpich_cma.workers.rank route")
    ap.add_argument("--checks", default=f"{THRESHOLD_ON}:1024",
                    help="phases 'THRESHOLD:BYTES,...' (threshold written through MPI_T, then "
                         "messages of BYTES each way)")
    ap.add_argument("--env-form", action="store_true",
                    help="do not write the threshold; the environment's stands and each "
                         "phase's THRESHOLD only labels it")
    ap.add_argument("--env-phases", type=int, default=0,
                    help="the first K phases in the environment's form (nothing written yet)")
    args = ap.parse_args(argv)
    checks = [tuple(int(x) for x in c.split(":")) for c in args.checks.split(",") if c]
    return route(MPI, comm, checks, write=not args.env_form, env_phases=args.env_phases)
