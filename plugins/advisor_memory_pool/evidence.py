"""Evidence of the memory-pool probes: ids and typed readers (pure).

Written by ``advisor_memory_pool.measure`` (and ``workload.to_evidence``), read by
``recommend``.

Evidence ids read (all optional):

* ``workload`` (see ``workload.py``): allocation sizes, ranks per GPU, pool limit, current pool.
* ``host-first-touch``: series ``first-touch`` and/or ``register`` (seconds per chunk), points
  labelled ``huge`` (MADV_HUGEPAGE) and ``nohuge`` (base pages); ``values.chunk_bytes``.
* ``device-first-use``: series ``first-use``: one point per buffer size (x, bytes); ``warmup``
  holds first-use seconds, ``samples`` the later (steady) seconds.
* ``device-free-memory``: series ``free`` (bytes) over x = iteration; ``values``:
  ``first_alloc_bytes``, ``growth_per_iteration_bytes``.
* ``device-alloc-latency``: series ``alloc`` (seconds) over x = bytes.
* ``device-granularity``: ``values.large_page_bytes`` (the GPU's large page, measured).
"""

from __future__ import annotations

from typing import Sequence

from advisor.models import Evidence, Facts

from . import model

HOST_FIRST_TOUCH = "host-first-touch"
DEVICE_FIRST_USE = "device-first-use"
DEVICE_FREE = "device-free-memory"
DEVICE_ALLOC = "device-alloc-latency"
DEVICE_GRANULARITY = "device-granularity"
FACTS_EXTRA = "memory-pool"  # Facts.extra key of this plugin's fact detector


#: Human names of the fleet headline figures (``advisor.specs.headline``: a probe's
#: ``headline_titles``), keyed as :func:`headline` returns them.
HEADLINE_TITLES = {"first_touch_huge_chunk_s": "first touch of a pool chunk with MADV_HUGEPAGE",
                   "first_touch_nohuge_chunk_s": "first touch of a pool chunk with base pages"}


def headline(evidence: Sequence[Evidence]) -> dict[str, float]:
    """Fleet headline figures (``advisor.specs.headline``): seconds to first-touch one pool
    chunk with MADV_HUGEPAGE (``huge``) and with base pages (``nohuge``)."""
    from advisor.specs.headline import median_at_largest_x

    ev = Evidence.find(evidence, HOST_FIRST_TOUCH)
    s = ev.series_named("first-touch") if ev is not None else None
    got = {f"first_touch_{lab}_chunk_s": median_at_largest_x(s, lab) for lab in ("huge", "nohuge")}
    return {k: v for k, v in got.items() if v is not None}


def host_large_page(facts: Facts) -> tuple[int, str]:
    """The host's large page (bytes) and where the number comes from."""
    pmd = facts.memory.thp_pmd_size_bytes
    if not pmd:  # profiles from before the fact existed carried it as this plugin's extra
        pmd = facts.extra.get(FACTS_EXTRA, {}).get("hpage_pmd_size_bytes")
    if isinstance(pmd, int) and pmd > 0:
        return pmd, "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
    if facts.memory.huge_page_sizes_bytes:
        return min(facts.memory.huge_page_sizes_bytes), "smallest size in /sys/kernel/mm/hugepages"
    return model.X86_64_PMD_BYTES, "x86-64 PMD size (Linux transhuge.rst); host value unknown"


def device_large_page(evidence: Sequence[Evidence]) -> tuple[int, str]:
    """The GPU's large page (bytes): measured allocation granularity, else NVIDIA's 2 MiB."""
    ev = Evidence.find(evidence, DEVICE_GRANULARITY)
    if ev is not None and isinstance(ev.values.get("large_page_bytes"), int):
        return int(ev.values["large_page_bytes"]), "measured (cuMemGetAllocationGranularity)"
    return model.NVIDIA_DEVICE_LARGE_PAGE_BYTES, "NVIDIA GPU large page (LLNL/Umpire#881 reproducer)"
