"""``advisor verify`` for the memory-pool probes: no verify step (the probes have no ``verify``).

Every recommendation of this plugin is ``verifiable=False``: the pool block sizes and grow-by
come from the pool model (``model.py``: backing block = block + alignment, LLNL/Umpire#881;
CuPy's 512-byte rounding) applied to the workload the user gave, not from a measured speed-up
this machine could re-measure in isolation; the effect shows only in the application's own
allocation pattern.  ``advisor verify`` therefore reports them as not verifiable.  A verify step
would go here as ``verify(recommendation, ctx) -> Verification`` and be wired into the probes.
"""
