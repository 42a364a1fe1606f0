"""Transparent huge pages: the active mode and what it means for host buffers (pure).
"""

from __future__ import annotations

import re
from typing import Optional


def thp_mode(raw: Optional[str]) -> Optional[str]:
    """The active THP mode from the sysfs text (``'always [madvise] never'`` -> ``'madvise'``)
    or a plain mode name; None when unknown."""
    if not raw:
        return None
    m = re.search(r"\[([a-z+]+)\]", raw)
    mode = m.group(1) if m else raw.strip()
    return mode if mode in ("always", "madvise", "never") else None


def thp_explanation(mode: Optional[str], defrag: Optional[str] = None) -> str:
    """One paragraph on what the THP mode means for host buffers (Linux
    Documentation/admin-guide/mm/transhuge.rst)."""
    d = thp_mode(defrag) or (defrag or "").strip() or "unknown"
    if mode == "madvise":
        return (
            "THP is in madvise mode: only regions that call madvise(MADV_HUGEPAGE) before first "
            "touch get 2 MiB pages; everything else (plain malloc, most pools) faults in 4 KiB "
            "pages, 512x more page faults and TLB entries per 2 MiB."
        )
    if mode == "always":
        return (
            "THP is in always mode: suitably aligned anonymous regions get huge pages without any "
            "hint, so no madvise is needed; the cost is possible allocation latency from direct "
            f"compaction (defrag={d}) and background khugepaged collapsing."
        )
    if mode == "never":
        return (
            "THP is disabled (never): madvise(MADV_HUGEPAGE) has no effect, every anonymous page is "
            "4 KiB; only a hugetlbfs pool (vm.nr_hugepages) gives huge pages."
        )
    return "THP mode unknown (no /sys/kernel/mm/transparent_hugepage/enabled)."
