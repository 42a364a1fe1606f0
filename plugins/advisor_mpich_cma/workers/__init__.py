"""Scripts the mpich-cma probe runs in child processes, by module name (``python -m``).

* ``rank``: what each MPI rank runs, launched with ``advisor.measure.run_mpi(RANK, ...)``: the
  shared worker (``advisor.measure.mpi.rank``: identity, smoke, sweep and paired modes) with
  MPICH's MPI_T threshold switch, its ``env`` record and the ``route`` mode (``route``).

The seccomp wrapper that makes CMA fail on demand is the core's
(``advisor.measure.mpi.DENY_CMA``).  Only the module names live here; nothing is imported, so
the parent never loads mpi4py.
"""

RANK = "advisor_mpich_cma.workers.rank"
