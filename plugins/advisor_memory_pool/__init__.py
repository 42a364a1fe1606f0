"""Built-in hpc-advisor plugin: memory-pool.

Advice for pool allocators (Umpire QuickPool/DynamicPoolList as configured by DLA-Future, CuPy's
MemoryPool) so that backing blocks are multiples of the large page at the least waste:

- ``model``: the pure pool model (backing = block + alignment for Umpire, LLNL/Umpire#881; 512 B
  rounding for CuPy), candidates, waste, grow-by bounded by device memory / ranks / pool limit;
- ``workload``: ``--option`` parsing (alloc-size, tile, element-size, ranks-per-gpu, pool-limit,
  pool-alignment, pool-first-block, pool-next-block) into the ``workload`` evidence;
- ``advice``: the pure ``recommend`` of both probes; ``knobs``: DLA-Future / Umpire / CuPy knobs;
- ``measure_host`` (huge vs base page first touch and pinning) and ``measure_device`` (CuPy);
- ``plugin``: the entry point; probes ``memory-pool-host`` and ``memory-pool-device``.
"""
