"""Scripts the host-buffer probe runs in child processes, by module name (``python -m``).

* ``memory``: the memcpy sweep, glibc malloc + first touch, NUMA placement (one JSON request,
  one reported result), launched with ``advisor.measure.run_python(MEMORY, ...)`` so a probe's
  environment (``GLIBC_TUNABLES``) applies to a fresh process.
"""

MEMORY = "advisor_host_buffer.workers.memory"
