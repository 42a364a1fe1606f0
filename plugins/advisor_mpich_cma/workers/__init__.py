"""Scripts the mpich-cma probe runs in child processes, by module name (``python -m``).

* ``rank``: what each MPI rank runs (identity, smoke, sweep and paired modes), launched with
  ``advisor.measure.run_mpi(RANK, ...)``; its paired mode lives in ``paired``.
* ``deny_cma``: a launcher wrapper that installs a seccomp filter denying ``process_vm_readv``
  / ``process_vm_writev`` and then runs its command (tests and recorded data use it to produce
  a CMA failure on demand).

Only the module names live here; nothing is imported, so the parent never loads mpi4py.
"""

RANK = "advisor_mpich_cma.workers.rank"
DENY_CMA = "advisor_mpich_cma.workers.deny_cma"
