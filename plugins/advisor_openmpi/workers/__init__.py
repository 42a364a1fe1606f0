"""Programs the openmpi plugin starts in fresh processes (``python -m``), one per module:

* ``pingpong``: a 2-rank ping-pong over a list of message sizes, latency and bandwidth samples
  per size, run under ``mpiexec`` with one candidate path's ``OMPI_MCA_*`` / ``UCX_*``
  environment.

The CMA usability test reuses the sibling ``process_vm_readv`` probe and the seccomp wrapper of
``advisor_mpich_cma`` (shipped in the same distribution; they test the kernel, not MPICH).
"""

PINGPONG = "advisor_openmpi.workers.pingpong"
