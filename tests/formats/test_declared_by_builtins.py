"""Every setting name the three built-in plugins recommend is declared by a knob record, so
``advisor emit`` (which writes only declared names) writes all of them.  The names are built
with the plugins' own constants and name functions, as their recommend code builds them."""

from __future__ import annotations

from advisor.specs.names import declared_names, refused_reason
from advisor.plugins import collect, make_plugin_manager


def recommended_names() -> set[str]:
    from advisor_host_buffer import recommend_common as hb
    from advisor_memory_pool import knobs as mp
    from advisor_mpich_cma import knobs as cma

    names = {cma.CMA_ENABLE, cma.CMA_THRESHOLD, cma.CRAY_MODE, cma.CRAY_SIZE}
    for side in ("host", "device"):
        names |= {mp.dlaf_name(side, f) for f in ("INITIAL_BLOCK_BYTES", "NEXT_BLOCK_BYTES",
                                                   "ALIGNMENT_BYTES")}
        names |= {mp.umpire_name(side, "QuickPool", a) for a in (
            "first_minimum_pool_allocation_size", "next_minimum_pool_allocation_size",
            "alignment")}
    names |= {"CUPY_GPU_MEMORY_LIMIT", "pool_limit"}
    names |= {"GLIBC_TUNABLES", "glibc.malloc.hugetlb", "glibc.cpu.x86_non_temporal_threshold",
              "glibc.tune.x86_non_temporal_threshold"}  # hb.tunable_setting items
    names |= {"chunk_alignment", "chunk_size_multiple", "madvise"}  # recommend_thp.host_pool
    assert hb.TUNABLES_SEPARATOR == ":"
    return names


def test_builtin_recommendations_are_declared_and_never_refused():
    reg = collect(make_plugin_manager(entry_points=False, plugins=_builtin_plugins()))
    declared = declared_names(reg.knobs)
    names = recommended_names()
    assert names - declared == set()
    assert not [n for n in names if refused_reason(n)]


def _builtin_plugins():
    import advisor_host_buffer.plugin as hb
    import advisor_memory_pool.plugin as mp
    import advisor_mpich_cma.plugin as cma

    return [("host-buffer", hb), ("memory-pool", mp), ("mpich-cma", cma)]
