"""Scripts the memory-pool probes run in child processes, by module name (``python -m``).

* ``ipc``: opens a CUDA IPC memory handle in a fresh process and reports the seconds it took
  (``advisor.measure.run_python(IPC, [handle_hex])``), the first-use cost a peer rank pays.
"""

IPC = "advisor_memory_pool.workers.ipc"
