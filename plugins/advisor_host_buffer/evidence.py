"""Evidence of the host-buffer probe: its ids, point labels and typed readers (pure).

Ids and keys are written by the ``measure_*`` stages (run by :mod:`advisor_host_buffer.measure`)
and read by ``recommend`` and ``verify``; units are in every key name (``bytes``, ``s``,
``bytes_per_s``).

Vocabulary (field-standard names): *zero page* (the kernel's shared page of zeros that every
untouched private anonymous page maps to on a read fault), *first touch* (the write that allocates
a page and decides its NUMA node), *THP* (transparent huge pages), *non-temporal threshold* (the
copy size from which glibc's x86 memcpy uses streaming stores that bypass the cache).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from advisor.measure import CLPEAK_FACTOR
from advisor.models import Evidence, Facts, Point, Series

#: Evidence ids of this plugin.
EV_ZERO_MEMCPY = "zero-page-memcpy"
EV_ZERO_OPENCL = "zero-page-opencl"
EV_ZERO_CUDA = "zero-page-cuda"
EV_FIRST_TOUCH = "first-touch"
EV_FIRST_USE = "first-use-runs"
EV_SWEEP = "memcpy-sweep"
EV_MALLOC_HUGETLB = "malloc-hugetlb"
EV_NUMA = "numa-placement"
EV_REFERENCE = "reference-bandwidth"
EV_TUNABLES = "glibc-tunables"

#: The ``glibc-tunables`` value of glibc's memcpy non-temporal threshold (bytes).
NT_VALUE = "glibc.cpu.x86_non_temporal_threshold.value"

#: Point labels of a zero-page series: the fill of the *source* buffer.
UNTOUCHED, ZEROS, RANDOM = "untouched", "zeros", "random"

#: clpeak labels a transfer rate above 3x the measured real peak as zero-copy, not a bandwidth
#: (background.md section 2); the harness keeps that factor (``advisor.measure.CLPEAK_FACTOR``).
CLPEAK_CEILING_FACTOR = CLPEAK_FACTOR

#: Unit of bandwidth series.
BPS = "bytes/s"

ZERO_PAGE_ARTEFACT = (
    "zero-page artefact: the source was never written, so every page maps the kernel's shared "
    "zero page and the copy reads one cached page; not a memory bandwidth"
)


#: Human names of the fleet headline figures (``advisor.specs.headline``: a probe's
#: ``headline_titles``), keyed as :func:`headline` returns them.
HEADLINE_TITLES = {"memcpy_bandwidth_largest_bytes_per_s":
                   "memcpy bandwidth at the largest copy size (default tunables)"}


#: ``memcpy-sweep`` value ``nt.stopped`` when a fresh default process does not find the top of
#: the first sweep's cliff slow (``measure_nt.ab_rounds``): the cliff is not glibc's code path
#: here, and no threshold is advised (``recommend_nt.sweep``).
NT_NOT_REPRODUCED = "cliff not reproduced"

def headline(evidence: Iterable[Evidence]) -> dict[str, float]:
    """Fleet headline figure (``advisor.specs.headline``): memcpy bandwidth with the library's
    default settings at the sweep's largest size, bytes/s."""
    from advisor.specs.headline import median_at_largest_x

    ev = Evidence.find(evidence, EV_SWEEP)
    v = median_at_largest_x(ev.series_named("default")) if ev is not None else None
    return {} if v is None else {"memcpy_bandwidth_largest_bytes_per_s": v}


def point_median(p: Point) -> Optional[float]:
    """Median of a point: its ``stats.median`` when present, else the median of its samples."""
    return p.median()


def fmt_bytes(n: float) -> str:
    """Human size in binary units, e.g. 134217728 -> '128 MiB'."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = n / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{int(n)} B"


def fmt_bw(bps: float) -> str:
    """Bandwidth in GB/s (decimal, as benchmarks report it)."""
    return f"{bps / 1e9:.2f} GB/s"


@dataclass(frozen=True)
class SweepPoint:
    """One size of a memcpy sweep: ``nbytes`` copied, median and CI of bytes/s."""

    nbytes: int
    median: float
    ci_low: float
    ci_high: float


def sweep_points(series: Series) -> list[SweepPoint]:
    """The points of a bandwidth-vs-size series (x = bytes), sorted by size; artefacts skipped."""
    out = []
    for p in series.points:
        m = point_median(p)
        if p.x is None or m is None or p.artefact:
            continue
        lo = p.stats.ci_low if p.stats and p.stats.ci_low is not None else m
        hi = p.stats.ci_high if p.stats and p.stats.ci_high is not None else m
        out.append(SweepPoint(int(p.x), m, lo, hi))
    return sorted(out, key=lambda s: s.nbytes)


def reference_bandwidths(evidence: Iterable[Evidence]) -> dict[str, tuple[float, float, float, str]]:
    """``{name: (value, lower, upper, unit)}`` from the ``reference-bandwidth`` evidence: the
    keys ``<name>.value``, ``<name>.lower``, ``<name>.upper`` (bytes/s), ReFrame-style
    references that ``advisor verify`` re-measures."""
    ev = Evidence.find(evidence, EV_REFERENCE)
    out: dict[str, tuple[float, float, float, str]] = {}
    if ev is None:
        return out
    for k, v in ev.values.items():
        if k.endswith(".value"):
            name = k[: -len(".value")]
            out[name] = (
                float(v),
                float(ev.values.get(f"{name}.lower", v)),
                float(ev.values.get(f"{name}.upper", v)),
                str(ev.values.get(f"{name}.unit", BPS)),
            )
    return out


def implausible_nt(tunables: Optional[Evidence], facts: Facts) -> Optional[str]:
    """Why the non-temporal threshold ``ld.so --list-tunables`` reported (``glibc-tunables``
    evidence) cannot be this machine's (below a page, above the memory:
    ``advisor.measure.implausible_threshold``), or None (plausible, or not reported)."""
    from advisor.measure import implausible_threshold

    v = tunables.values.get(NT_VALUE) if tunables is not None else None
    if v is None:
        return None
    why = implausible_threshold(v, page_bytes=facts.memory.page_size_bytes,
                                memory_bytes=facts.memory.total_bytes)
    return f"{NT_VALUE} = {v!r}: {why}" if why else None


def glibc_at_least(facts: Facts, version: str) -> Optional[bool]:
    """True/False when ``facts.kernel.glibc_version`` is known, None otherwise."""
    from advisor.knobs import version_in

    v = facts.kernel.glibc_version
    if not v:
        return None
    m = re.match(r"(\d+\.\d+)", v)
    return version_in(m.group(1), f">={version}") if m else None
