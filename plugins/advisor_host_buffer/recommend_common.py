"""What the host-buffer advice rules share: the ``GLIBC_TUNABLES`` setting they build, the
remedy for untouched buffers, and how a confidence interval is written (pure).

The rules themselves: :mod:`advisor_host_buffer.recommend_zero_page` (zero-page inflation,
transfers), :mod:`advisor_host_buffer.recommend_touch` (placement, first touch, NUMA),
:mod:`advisor_host_buffer.recommend_thp` (THP, the huge-page host pool, glibc.malloc.hugetlb)
and :mod:`advisor_host_buffer.recommend_nt` (glibc's non-temporal threshold);
:mod:`advisor_host_buffer.recommend` runs them.
"""

from __future__ import annotations

from typing import Optional

from advisor.models import Setting

#: GLIBC_TUNABLES items are ``name=value`` pairs separated by ``:`` (glibc manual, "Tunables",
#: https://www.gnu.org/software/libc/manual/html_node/Tunables.html).
TUNABLES_SEPARATOR = ":"

PREFAULT_REMEDY = (
    "before timing, write a non-zero pseudo-random pattern to every page of every host buffer "
    "(page size read from the system); a plain memset(0) after malloc can be turned into calloc "
    "by the compiler and brings the lazy zero mapping back; align host buffers to at least 64 B "
    "and record the fill in the results"
)


def ci_text(lo: Optional[float], hi: Optional[float]) -> str:
    """`` (95% CI lo-hi)`` with two decimals, or "" when either bound is None."""
    return f" (95% CI {lo:.2f}-{hi:.2f})" if lo is not None and hi is not None else ""


def tunable_setting(item: str, value: str, default: Optional[str], versions: str) -> Setting:
    """The env ``Setting`` ``GLIBC_TUNABLES=<item>=<value>`` (a ``:``-separated list, so emit
    merges it with other items); ``default`` is the item's value without the advice (None when
    unknown), ``versions`` the glibc versions that read ``item``."""
    return Setting(
        library="glibc",
        name="GLIBC_TUNABLES",
        value=f"{item}={value}",
        type="list",
        default=f"{item}={default}" if default is not None else None,
        versions=versions,
        kind="env",
        separator=TUNABLES_SEPARATOR,
    )

