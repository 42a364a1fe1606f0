"""Programs the openmpi plugin starts in fresh processes: none of its own.  Its 2-rank runs
(the verbose smoke run of ``check``, the interleaved sweeps of ``measure``, ``limits`` and
``verify``) are the core's MPI-neutral worker, ``advisor.measure.mpi.RANK`` (smoke and sweep
modes), started under Open MPI's ``mpiexec`` with one candidate path's ``OMPI_MCA_*`` /
``UCX_*`` environment; its CMA test is the core's sibling test (``advisor.measure.mpi.sibling``)
and seccomp wrapper (``advisor.measure.mpi.DENY_CMA``).  The package stays, empty, as the
plugin template asks (docs/plugins.md).
"""
