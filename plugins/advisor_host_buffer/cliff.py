"""The glibc memcpy cliff: the copy size from which bandwidth drops (the x86 non-temporal
threshold) and the threshold to advise (pure).

- :func:`find_cliff` / :func:`choose_nt_threshold` / :func:`sweep_gain` on ``memcpy-sweep``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional, Sequence

from advisor.models import Evidence

from advisor_host_buffer.evidence import SweepPoint, sweep_points


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


def _slower(p: SweepPoint, plateau: SweepPoint, noise_floor: float) -> bool:
    """The cliff rule for one size: its upper CI bound, raised by ``noise_floor`` (fraction),
    is below the lower CI bound of the plateau."""
    return p.ci_high * (1 + noise_floor) < plateau.ci_low


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
        while i > 0 and not _slower(pts[i - 1], plateau, noise_floor):
            i -= 1
            plateau = pts[i] if pts[i].median < plateau.median else plateau
    j = i - 1
    cliff = []
    while j >= 0 and _slower(pts[j], plateau, noise_floor):
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
        d, t = ev.series_named("default"), ev.series_named("tuned")
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


def ab_stability(values: dict, default_runs: dict[int, list[list[float]]],
                 tuned_runs: dict[int, list[list[float]]], *, seed: int = 0
                 ) -> Optional[float]:
    """How stable ``sweep_gain``'s "helps" verdict is over the A/B rounds (issue 25 item 1):
    ``advisor.measure.resample_stability`` of the verdict on each resample of the rounds.  A
    resample's verdict is ``sweep_gain``'s rule with its per-size ratio (median tuned over
    median default of the pooled samples of the drawn rounds) and the full data's CI, relative
    to the full data's ratio, moved to it, against the same per-size floors.  Pure.

    :param values: the sweep evidence's values (``gain.<n>``, ``.ci_low``, ``.ci_high``,
        ``.noise_floor``, ``.affected``), as ``sweep_gain`` reads them.
    :param default_runs, tuned_runs: bytes -> per-round sample lists (bytes/s), round ``i`` of
        both taken in the same A/B round.
    :return: 0..1, or None with fewer than 2 rounds at the compared sizes or no gain values.
    """
    import numpy as np

    from advisor.measure import resample_stability
    from advisor.measure.stats import LEVEL, Comparison

    cells = {}
    for k, v in values.items():
        m = re.fullmatch(r"gain\.(\d+)", k)
        n = int(m.group(1)) if m else None
        if n is None or not values.get(f"gain.{n}.affected", True) or not float(v) > 0:
            continue
        if n in default_runs and n in tuned_runs:
            cells[n] = Comparison(float(v), float(values.get(f"{k}.ci_low", v)),
                                  float(values.get(f"{k}.ci_high", v)), "indistinguishable",
                                  float(values.get(f"{k}.noise_floor", 0.0)), LEVEL, 0, 0)
    if not cells:
        return None
    rounds = min(min(len(default_runs[n]), len(tuned_runs[n])) for n in cells)

    def helps(idx) -> bool:
        verdicts = {c.verdict_at(float(np.median([x for i in idx for x in tuned_runs[n][i]]))
                                 / float(np.median([x for i in idx
                                                    for x in default_runs[n][i]])))
                    for n, c in cells.items()}
        return "better" in verdicts and "worse" not in verdicts

    return resample_stability(helps, rounds, seed=seed)


def _slow_from(points: Sequence[SweepPoint], first: Cliff, noise_floor: float) -> Optional[int]:
    """The smallest size of ``first``'s range (``start_bytes``..``end_bytes``) from which every
    size this process measured in that range, up to ``end_bytes``, is slow by ``find_cliff``'s
    rule (upper CI bound raised by ``noise_floor`` below the lower CI bound of the plateau: the
    slowest size this process measured above ``end_bytes``); None when the range's top size is
    not slow here, or the process measured no plateau or none of the range."""
    above = [p for p in points if p.nbytes > first.end_bytes]
    inside = sorted((p for p in points if first.start_bytes <= p.nbytes <= first.end_bytes),
                    key=lambda p: p.nbytes, reverse=True)
    if not above or not inside or inside[0].nbytes != first.end_bytes:
        return None
    plateau = min(above, key=lambda p: p.median)
    start = None
    for p in inside:
        if not _slower(p, plateau, noise_floor):
            break
        start = p.nbytes
    return start


def reproduced_cliff(processes: Sequence[Sequence[SweepPoint]], first: Cliff, *,
                     noise_floor: float) -> Optional[Cliff]:
    """The part of the first default sweep's cliff ``first`` that every default process in
    ``processes`` (each its own points, the first sweep's included) reproduces: the cliff start
    is the largest of the processes' own starts (:func:`_slow_from`), the end and plateau stay
    ``first``'s.  None when some process does not show the cliff's top size slow.

    Why the largest start: where one fresh process finds a size slow and another does not, the
    slowdown there is a property of that process (buffer placement, the machine's state while
    it ran), not of glibc's code path: streaming that size is within noise of not streaming
    it, a tie, and a tie goes to the candidate nearest the library default (issue 25 item 1),
    here the higher threshold.  Measured on the 2-core AMD EPYC VM (glibc threshold 0xb580000):
    a 64 MiB copy ran at 9.0-13.2 GB/s from one process to the next against a streamed plateau
    of 11.0-12.0 GB/s, so 4 in 10 first sweeps put 64 MiB in the cliff and advised 0x4000000,
    the other 6 0x8000000.

    :param processes: per default process, its sweep points (bytes/s; any sizes: those outside
        ``first``'s range and above it are read, the rest ignored).
    :param noise_floor: fraction, as ``find_cliff``'s.
    """
    if not processes:
        return None
    starts = [_slow_from(pts, first, noise_floor) for pts in processes]
    if any(s is None for s in starts):
        return None
    start = max(s for s in starts if s is not None)
    if start == first.start_bytes:
        return first
    below = [p.nbytes for pts in processes for p in pts if p.nbytes < start]
    return Cliff(start_bytes=start, end_bytes=first.end_bytes,
                 last_fast_bytes=max(below) if below else first.last_fast_bytes,
                 plateau_bps=first.plateau_bps, depth=first.depth)


def reproduced_threshold(processes: Sequence[Sequence[SweepPoint]], first: Cliff, *,
                         noise_floor: float, minimum: Optional[int] = None) -> Optional[int]:
    """``choose_nt_threshold`` of :func:`reproduced_cliff` (bytes), None without one."""
    c = reproduced_cliff(processes, first, noise_floor=noise_floor)
    return choose_nt_threshold(c, minimum=minimum) if c is not None else None


def candidate_stability(processes: Sequence[Sequence[SweepPoint]], first: Cliff, *,
                        noise_floor: float, minimum: Optional[int] = None,
                        seed: int = 0) -> Optional[float]:
    """How stable the tuned threshold's choice is over the default processes it was chosen
    from: ``advisor.measure.resample_stability`` of :func:`reproduced_threshold` on resamples
    of ``processes`` (drawn with replacement), 0..1; None with fewer than 2 processes.  What
    varies between processes is what made the first sweep's choice flip from one probe to the
    next, which resampling the A/B rounds of one candidate cannot see.  Pure."""
    from advisor.measure import resample_stability

    def choice(idx) -> Optional[int]:
        return reproduced_threshold([processes[i] for i in idx], first,
                                    noise_floor=noise_floor, minimum=minimum)

    return resample_stability(choice, len(processes), seed=seed)
