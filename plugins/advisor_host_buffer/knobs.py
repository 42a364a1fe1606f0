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
    ]
