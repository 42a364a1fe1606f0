"""Built-in hpc-advisor plugin: memory-pool.

Advice for pool allocators (Umpire QuickPool/DynamicPoolList as configured by DLA-Future, CuPy's
MemoryPool) so that backing blocks are multiples of the large page at the least waste:

- ``model``: the pure pool model (backing = block + alignment for Umpire, LLNL/Umpire#881; 512 B
  rounding for CuPy), candidates, waste, grow-by bounded by device memory / ranks / pool limit;
- ``workload``: ``--option`` parsing (alloc-size, tile, element-size, ranks-per-gpu, pool-limit,
  pool-alignment, pool-first-block, pool-next-block) into the ``workload`` evidence;
- ``evidence``: evidence ids and readers; ``recommend``: the pure ``recommend`` of both probes;
  ``lint``: the pool settings of an environment; ``knobs``: DLA-Future / Umpire / CuPy knobs;
- ``measure``: check and measure of both probes (huge vs base page first touch and pinning; CuPy);
  ``workers.ipc``: the CUDA IPC open run in a child; ``verify``: why there is no verify step;
- ``plugin``: the entry point; probes ``memory-pool-host`` and ``memory-pool-device``.
"""
