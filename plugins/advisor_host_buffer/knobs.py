"""Knob records for the GLIBC_TUNABLES entries this plugin emits.

Sources: glibc manual, chapter "Tunables" (https://www.gnu.org/software/libc/manual/html_node/
Tunables.html): "Hardware Capability Tunables" documents x86_non_temporal_threshold (namespace
glibc.tune in the 2.26 and 2.27 manuals, glibc.cpu from 2.28 on), "Memory Related Tunables"
documents glibc.malloc.hugetlb (new in glibc 2.35, NEWS for 2.35).  Defaults of the threshold are
computed by glibc from the cache sizes at start-up (sysdeps/x86/dl-cacheinfo.h), so no fixed
default is recorded: the probe measures the current value with ``ld.so --list-tunables``.
"""

from __future__ import annotations

from advisor.knobs import Knob, VersionedDefault

MANUAL = "glibc manual, Tunables: https://www.gnu.org/software/libc/manual/html_node/Tunables.html"
THP_DOC = ("Linux Documentation/admin-guide/mm/transhuge.rst (THP 'madvise' mode: only regions "
           "advised with MADV_HUGEPAGE get huge pages)")


def knobs() -> list[Knob]:
    """The knob records registered through ``advisor_register_knobs``."""
    return [
        Knob(
            library="glibc", name="GLIBC_TUNABLES", type="list", separator=":",
            versions=">=2.26",
            description="colon-separated name=value list of glibc tunables",
            source=MANUAL,
        ),
        Knob(
            library="glibc", name="glibc.cpu.x86_non_temporal_threshold", type="bytes",
            unit="bytes", separator=":", versions=">=2.28",
            description="copy size from which x86 memcpy/memmove use non-temporal stores; "
                        "set through GLIBC_TUNABLES",
            source=MANUAL + " (Hardware Capability Tunables)",
        ),
        Knob(
            library="glibc", name="glibc.tune.x86_non_temporal_threshold", type="bytes",
            unit="bytes", separator=":", versions=">=2.26,<2.28",
            renamed_to="glibc.cpu.x86_non_temporal_threshold",
            description="name of x86_non_temporal_threshold before glibc 2.28",
            source=MANUAL + " (2.26 manual, Hardware Capability Tunables)",
        ),
        Knob(
            library="glibc", name="glibc.malloc.hugetlb", type="enum", allowed=[0, 1, 2],
            separator=":", versions=">=2.35",
            defaults=[VersionedDefault(versions=">=2.35", value=0)],
            description="1: madvise(MADV_HUGEPAGE) on malloc's mmap'ed memory (THP); "
                        "2: use hugetlbfs pages; 0: off",
            source=MANUAL + " (Memory Related Tunables); glibc 2.35 NEWS",
        ),
        # The program's own host pool (kind config: set in its code, no environment form).
        Knob(
            library="host-pool", name="chunk_alignment", kind="config", type="bytes",
            unit="bytes", minimum=0,
            description="alignment of the pool's backing chunks: the huge page size, so each "
                        "chunk can be backed by whole huge pages",
            source=THP_DOC,
        ),
        Knob(
            library="host-pool", name="chunk_size_multiple", kind="config", type="bytes",
            unit="bytes", minimum=0,
            description="size granule of the pool's backing chunks: a multiple of the huge page "
                        "size, so no chunk ends in a partly used huge page",
            source=THP_DOC,
        ),
        Knob(
            library="host-pool", name="madvise", kind="config", type="enum",
            allowed=["MADV_HUGEPAGE", "MADV_NOHUGEPAGE"],
            description="madvise(2) advice given to each chunk before its first touch; with THP "
                        "in 'madvise' mode only advised regions get huge pages",
            source=THP_DOC + "; madvise(2), MADV_HUGEPAGE",
        ),
    ]
