"""Pure analysis of host-buffer evidence: zero page, first touch, THP, memcpy cliff, NUMA.

Everything here is a pure function of evidence and facts (no I/O, no clock, no environment), so
``recommend`` can re-derive advice from a stored profile and ``advisor verify`` can call the same
functions on re-measured evidence.  Functions ``verify`` may call:

- :func:`zero_page_inflation` -> ``Inflation``: untouched / touched bandwidth of one evidence record.
- :func:`label_artefacts` -> ``Evidence`` with zero-page and above-ceiling points labelled.
- ``advisor.measure.stats.classify_series`` classifies run-to-run (first-use) series.
- :func:`find_cliff` / :func:`choose_nt_threshold` / :func:`sweep_gain`: the glibc memcpy cliff.
- :func:`reference_bandwidths` -> ``{name: (value, lower, upper, unit)}``.

Vocabulary (field-standard names): *zero page* (the kernel's shared page of zeros that every
untouched private anonymous page maps to on a read fault), *first touch* (the write that allocates
a page and decides its NUMA node), *THP* (transparent huge pages), *non-temporal threshold* (the
copy size from which glibc's x86 memcpy uses streaming stores that bypass the cache).

Evidence ids and keys written by :mod:`advisor_host_buffer.measure` and read here are the
constants ``EV_*`` below; units are in every key name (``bytes``, ``s``, ``bytes_per_s``).
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from advisor.models import Evidence, Facts, Point, Series, Stats

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

#: Point labels of a zero-page series: the fill of the *source* buffer.
UNTOUCHED, ZEROS, RANDOM = "untouched", "zeros", "random"

#: clpeak labels a transfer rate above 3x the measured real peak as zero-copy, not a bandwidth
#: (background.md section 2); the harness keeps that factor.
from advisor.measure import CLPEAK_FACTOR as CLPEAK_CEILING_FACTOR  # noqa: E402

#: Unit of bandwidth series.
BPS = "bytes/s"

ZERO_PAGE_ARTEFACT = (
    "zero-page artefact: the source was never written, so every page maps the kernel's shared "
    "zero page and the copy reads one cached page; not a memory bandwidth"
)


# --------------------------------------------------------------------------- small helpers


def _median(values: Sequence[float]) -> Optional[float]:
    return statistics.median(values) if values else None


def point_median(p: Point) -> Optional[float]:
    """Median of a point: its ``stats.median`` when present, else the median of its samples."""
    if p.stats is not None:
        return p.stats.median
    return _median(p.samples)


def find_evidence(evidence: Iterable[Evidence], ev_id: str) -> Optional[Evidence]:
    """The first evidence record with id ``ev_id`` (or None)."""
    for ev in evidence:
        if ev.id == ev_id:
            return ev
    return None


def find_series(ev: Evidence, name: str) -> Optional[Series]:
    for s in ev.series:
        if s.name == name:
            return s
    return None


def find_point(series: Series, label: str) -> Optional[Point]:
    for p in series.points:
        if p.label == label:
            return p
    return None


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


# --------------------------------------------------------------------------- zero page


@dataclass(frozen=True)
class Inflation:
    """How much an untouched source overstates a copy bandwidth.

    ``ratio`` = median(untouched) / median(random-filled), > 1 means inflated; ``ci_low`` /
    ``ci_high`` the confidence interval of the ratio when it was measured (None for single
    reported figures such as a field case); ``untouched_bps`` / ``touched_bps`` in bytes/s.
    """

    ratio: float
    ci_low: Optional[float]
    ci_high: Optional[float]
    untouched_bps: float
    touched_bps: float

    def significant(self) -> bool:
        """True when the CI excludes 1 (or, without a CI, the ratio is above 1)."""
        if self.ci_low is not None:
            return self.ci_low > 1.0
        return self.ratio > 1.0


def zero_page_inflation(ev: Evidence, series: Optional[str] = None) -> Optional[Inflation]:
    """Inflation of ``ev`` (untouched vs random-filled source) or None when either is missing.

    ``series``: the series to read (default: the first that has both points).  The CI comes from
    ``ev.values['<series>.inflation_ci_low'|'_ci_high']`` written by the measurement (harness
    ``compare``); the ratio is recomputed from the medians so recorded single figures work too.
    """
    for s in ev.series:
        if series is not None and s.name != series:
            continue
        u, r = find_point(s, UNTOUCHED), find_point(s, RANDOM)
        if u is None or r is None:
            continue
        mu, mr = point_median(u), point_median(r)
        if not mu or not mr:
            continue
        lo = ev.values.get(f"{s.name}.inflation_ci_low")
        hi = ev.values.get(f"{s.name}.inflation_ci_high")
        return Inflation(
            ratio=mu / mr,
            ci_low=float(lo) if lo is not None else None,
            ci_high=float(hi) if hi is not None else None,
            untouched_bps=mu,
            touched_bps=mr,
        )
    return None


def untouched_only(ev: Evidence) -> list[str]:
    """``"<series>/<label>"`` of the untouched-source points of ``ev`` in series that have no
    random-filled point to compare with ([] when every series has one, or none is untouched)."""
    out = []
    for s in ev.series:
        labels = {p.label for p in s.points}
        if RANDOM in labels:
            continue
        out += [f"{s.name}/{p.label}" for p in s.points
                if p.label is not None and p.label.startswith(UNTOUCHED)]
    return out


def label_artefacts(
    ev: Evidence, ceiling: "Optional[Stats | float]", *, factor: float = CLPEAK_CEILING_FACTOR
) -> Evidence:
    """``ev`` with the points that are not physical bandwidths labelled (``Point.artefact``).

    - a point read from an untouched source (label ``untouched``) is a zero-page artefact; its
      samples stay (they are the numerator of the measured inflation) under that label, and
      every consumer of bandwidths (:func:`sweep_points`, :func:`reference_bandwidths`) skips
      labelled points;
    - a bandwidth point above ``factor`` x the copy ceiling of the same run (``Stats`` -> its
      max, or bytes/s) is replaced by the harness' ``checked_point``: label, no samples, no
      statistics (clpeak's zero-copy rule via ``advisor.measure.ceiling.plausibility``).
    Existing labels are kept; ``ceiling`` None skips the second rule.
    """
    from advisor.measure import checked_point

    out = []
    for s in ev.series:
        pts = []
        for p in s.points:
            if p.artefact is None and s.unit == BPS:
                if p.label == UNTOUCHED:
                    p = p.model_copy(update={"artefact": ZERO_PAGE_ARTEFACT})
                elif ceiling is not None:
                    p = checked_point(p, ceiling, factor=factor)
            pts.append(p)
        out.append(s.model_copy(update={"points": pts}))
    return ev.model_copy(update={"series": out})


# --------------------------------------------------------------------------- THP


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


# --------------------------------------------------------------------------- memcpy cliff


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


@dataclass(frozen=True)
class Cliff:
    """A range of copy sizes that run slower than both smaller and larger copies.

    ``start_bytes`` / ``end_bytes``: smallest and largest swept size inside the cliff;
    ``last_fast_bytes``: the largest size before it; ``plateau_bps``: bandwidth of the first size
    after it (the streaming-store plateau); ``depth``: plateau / slowest cliff bandwidth.
    """

    start_bytes: int
    end_bytes: int
    last_fast_bytes: Optional[int]
    plateau_bps: float
    depth: float


def find_cliff(points: Sequence[SweepPoint], *, noise_floor: float,
               threshold_bytes: Optional[int] = None) -> Optional[Cliff]:
    """The cliff of a default-tunables sweep, or None.

    A size is in the cliff when the upper CI bound of its bandwidth, raised by ``noise_floor``
    (fraction), is below the lower CI bound of the plateau: copies that grew out of the cache
    but are still below glibc's non-temporal threshold run slower than the larger, streamed
    copies.  The cliff is the contiguous run of such sizes just below the plateau, and a faster
    size must lie below it.

    ``threshold_bytes``: glibc's current non-temporal threshold when known.  glibc streams
    copies at or above it (sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S), so the plateau
    is the sizes >= it (its slowest point) and only sizes below it can be in the cliff.  Without
    it the plateau is the largest contiguous group of sizes, scanned from the largest down, that
    are not significantly slower than the largest.
    """
    pts = sorted(points, key=lambda p: p.nbytes)
    if len(pts) < 3:
        return None
    if threshold_bytes is not None:
        above = [p for p in pts if p.nbytes >= threshold_bytes]
        if not above:
            return None
        plateau = min(above, key=lambda p: p.median)
        i = pts.index(above[0])
    else:
        i = len(pts) - 1
        plateau = pts[i]
        while i > 0 and pts[i - 1].ci_high * (1 + noise_floor) >= plateau.ci_low:
            i -= 1
            plateau = pts[i] if pts[i].median < plateau.median else plateau
    j = i - 1
    cliff = []
    while j >= 0 and pts[j].ci_high * (1 + noise_floor) < plateau.ci_low:
        cliff.append(pts[j])
        j -= 1
    if not cliff or j < 0:  # a cliff needs a faster (cache-resident) size below it
        return None
    last_fast = pts[j]
    if last_fast.ci_low <= cliff[-1].ci_high * (1 + noise_floor):
        return None  # no recovery below: the sizes just decline, nothing glibc-specific
    slowest = min(c.median for c in cliff)
    return Cliff(
        start_bytes=cliff[-1].nbytes,
        end_bytes=cliff[0].nbytes,
        last_fast_bytes=last_fast.nbytes,
        plateau_bps=plateau.median,
        depth=plateau.median / slowest,
    )


def choose_nt_threshold(cliff: Cliff, *, minimum: Optional[int] = None) -> int:
    """Tuned ``glibc.cpu.x86_non_temporal_threshold`` (bytes) from a measured cliff.

    The tunable is documented in the glibc manual, "Tunables" -> "Hardware Capability Tunables"
    (https://www.gnu.org/software/libc/manual/html_node/Hardware-Capability-Tunables.html); it
    is set through ``GLIBC_TUNABLES`` and read once at process start.

    glibc uses non-temporal stores for copies at or above the threshold
    (sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S), so the threshold must be at most the
    first slow size: the cliff start rounded down to a power of two, and no lower than the largest
    fast size (copies that still gained from the cache); above glibc's ``minimum`` (from
    ``ld.so --list-tunables``), which glibc itself would ignore.
    """
    t = 1 << int(math.floor(math.log2(cliff.start_bytes)))
    if cliff.last_fast_bytes is not None and t < cliff.last_fast_bytes:
        t = cliff.last_fast_bytes
    if minimum is not None and t <= minimum:
        # glibc keeps its default unless minimum < value <= maximum (sysdeps/x86/dl-cacheinfo.h;
        # checked with ld.so --list-tunables: the minimum itself is ignored on 2.36)
        t = 1 << int(minimum).bit_length()
    return t


@dataclass(frozen=True)
class SweepGain:
    """Tuned vs default sweep: per-size ratio tuned/default (>1 = tuned faster) with CI.

    ``gains``: ``{nbytes: (ratio, ci_low, ci_high)}``; ``helps``: some size gains beyond its
    noise floor (CI low > 1 + floor) and no size loses beyond it (CI high < 1 / (1 + floor)),
    the harness ``compare`` verdict rule; ``best``: the winning size with the largest lower
    bound; ``worst_loss``: the size that lost most, if any.
    """

    gains: dict[int, tuple[float, float, float]]
    helps: bool
    best: Optional[int]
    worst_loss: Optional[int]


def sweep_gain(ev: Evidence, *, noise_floor: float) -> Optional[SweepGain]:
    """Read the per-size comparison written by the measurement (``ev.values`` keys
    ``gain.<nbytes>``, ``gain.<nbytes>.ci_low``, ``gain.<nbytes>.ci_high`` and the per-size A/A
    floor ``gain.<nbytes>.noise_floor``, else ``noise_floor``; sizes flagged
    ``gain.<nbytes>.affected = False`` run the same glibc code path in both configurations and
    are left out) or, without them,
    the ratio of the medians of the ``default`` and ``tuned`` series (CI = the ratio)."""
    gains: dict[int, tuple[float, float, float]] = {}
    for k, v in ev.values.items():
        m = re.fullmatch(r"gain\.(\d+)", k)
        if m:
            n = int(m.group(1))
            gains[n] = (
                float(v),
                float(ev.values.get(f"{k}.ci_low", v)),
                float(ev.values.get(f"{k}.ci_high", v)),
            )
    if not gains:
        d, t = find_series(ev, "default"), find_series(ev, "tuned")
        if d is None or t is None:
            return None
        dp = {p.nbytes: p for p in sweep_points(d)}
        for p in sweep_points(t):
            if p.nbytes in dp:
                r = p.median / dp[p.nbytes].median
                gains[p.nbytes] = (r, r, r)
    if not gains:
        return None
    # sizes the setting cannot change (flag written by the measurement) are controls only
    gains = {n: g for n, g in gains.items() if ev.values.get(f"gain.{n}.affected", True)}
    if not gains:
        return None
    floors = {n: float(ev.values.get(f"gain.{n}.noise_floor", noise_floor)) for n in gains}
    winners = [n for n, g in gains.items() if g[1] > 1 + floors[n]]
    losers = [n for n, g in gains.items() if g[2] < 1 / (1 + floors[n])]
    best = max(winners, key=lambda n: gains[n][1]) if winners else None
    helps = bool(winners) and not losers
    worst = min(losers, key=lambda n: gains[n][0]) if losers else None
    return SweepGain(gains, helps, best, worst)


# --------------------------------------------------------------------------- tunables


def glibc_at_least(facts: Facts, version: str) -> Optional[bool]:
    """True/False when ``facts.kernel.glibc_version`` is known, None otherwise."""
    from advisor.knobs import version_in

    v = facts.kernel.glibc_version
    if not v:
        return None
    m = re.match(r"(\d+\.\d+)", v)
    return version_in(m.group(1), f">={version}") if m else None


# --------------------------------------------------------------------------- reference bandwidths


def reference_bandwidths(evidence: Iterable[Evidence]) -> dict[str, tuple[float, float, float, str]]:
    """``{name: (value, lower, upper, unit)}`` from the ``reference-bandwidth`` evidence: the
    keys ``<name>.value``, ``<name>.lower``, ``<name>.upper`` (bytes/s), ReFrame-style
    references that ``advisor verify`` re-measures."""
    ev = find_evidence(evidence, EV_REFERENCE)
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
