"""The copy ceiling measured in the same run, and the plausibility check against it.

A transfer that reports more bandwidth than a plain memcpy between two touched host buffers can
reach is not a bandwidth: it read the zero page, hit a zero-copy path, or was not waited for.
clpeak labels results above 3x its measured transfer peak as such (krrishnarraj/clpeak, see
shared/background.md section 2); ``plausibility`` uses the same factor by default.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from typing import Any, Optional, Union

from advisor.models import Point, Stats

#: clpeak's factor: results above 3x the measured transfer peak are labelled zero-copy.
CLPEAK_FACTOR = 3.0


def largest_cache_bytes() -> Optional[int]:
    """Size in bytes of the largest CPU cache listed in sysfs (cpu0), or None."""
    best = None
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path).read().strip()
        except OSError:
            continue
        mult = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:].upper(), 1)
        try:
            val = int(text.rstrip("KMGkmg")) * mult
        except ValueError:
            continue
        best = val if best is None else max(best, val)
    return best


def default_ceiling_bytes() -> int:
    """Copy size for the ceiling: twice the largest cache, so source and destination (4x the
    cache together) stream from memory; 64 MiB when sysfs lists no cache."""
    cache = largest_cache_bytes()
    return 2 * cache if cache else 64 * 1024 * 1024


@dataclass(frozen=True)
class Ceiling:
    """A measured copy ceiling: ``stats`` in bytes/s and the ``Conditions.notes`` fields of its
    buffers (``src_fill``, ``dst_fill``, ``placement_*``: see ``advisor.measure.placement``)."""

    stats: Stats
    notes: dict[str, Any]


def measure_ceiling(nbytes: Optional[int] = None, *, min_samples: int = 10,
                    max_time_s: float = 1.0, deadline: Optional[float] = None,
                    hugepages: Optional[bool] = None, seed: int = 0) -> Ceiling:
    """Bandwidth of ``numpy.copyto`` between two random-filled, touched host buffers placed
    never a power of two apart (``placed_pair``: no 4K aliasing), with the placement recorded.

    Args:
        nbytes: bytes per copy (default ``default_ceiling_bytes()``); use the plugin's largest
            message size to compare like with like.
        min_samples, max_time_s, deadline: passed to ``sample``.
        hugepages: page policy of both buffers (see ``host_buffer``).
        seed: fill and bootstrap seed.

    Returns:
        ``Ceiling``: ``stats`` in bytes/s (bytes copied per second, each byte counted once) of
        the steady-state copies (the first copy is warm-up when ``sample`` detects it so), and
        ``notes`` for ``Conditions.notes``.

    Raises:
        ValueError: bad arguments; RuntimeError: buffers not resident (see ``host_buffer``) or
        no steady-state sample before the deadline.
    """
    import numpy as np

    from advisor.measure.placement import placed_pair
    from advisor.measure.sampling import sample

    n = nbytes or default_ceiling_bytes()
    src, dst, notes = placed_pair(n, src_fill="random", dst_fill="random", hugepages=hugepages,
                                  seed=seed)
    res = sample(lambda: np.copyto(dst, src), min_samples=min_samples, max_time_s=max_time_s,
                 deadline=deadline)
    point = res.to_point(per_call_bytes=n, seed=seed)
    if point.stats is None:
        raise RuntimeError("copy ceiling: no steady-state sample within the deadline")
    return Ceiling(point.stats, notes)


def copy_ceiling(nbytes: Optional[int] = None, *, min_samples: int = 10, max_time_s: float = 1.0,
                 deadline: Optional[float] = None, hugepages: Optional[bool] = None,
                 seed: int = 0) -> Stats:
    """``measure_ceiling(...).stats``: the copy ceiling in bytes/s (see ``measure_ceiling``;
    same arguments and errors).  Use ``measure_ceiling`` to record the placement too."""
    return measure_ceiling(nbytes, min_samples=min_samples, max_time_s=max_time_s,
                           deadline=deadline, hugepages=hugepages, seed=seed).stats


#: Ceilings measured in this process, by (bytes per copy, page policy): (ceiling, who measured
#: it).  One ``advisor probe`` is one process, so this is "the same run" of DESIGN.md.
_SHARED: dict[tuple[int, Optional[bool]], tuple[Ceiling, str]] = {}


def remember_ceiling(ceiling: Ceiling, *, nbytes: int, source: str,
                     hugepages: Optional[bool] = None) -> None:
    """Record ``ceiling`` (measured by ``source``, e.g. ``"host-buffer zero-page-memcpy"``) as
    this process's copy ceiling for ``nbytes``-byte copies with page policy ``hugepages``, so
    a later ``shared_ceiling`` with the same parameters reuses it instead of copying again.
    Only a measurement of the same kernel belongs here: ``numpy.copyto`` between a
    random-filled, touched ``placed_pair`` of ``nbytes`` (what ``measure_ceiling`` times)."""
    _SHARED[(int(nbytes), hugepages)] = (ceiling, source)


def forget_ceilings() -> None:
    """Drop every remembered ceiling (tests; a long-lived process that wants fresh ones)."""
    _SHARED.clear()


def shared_ceiling(nbytes: Optional[int] = None, *, source: str, min_samples: int = 10,
                   max_time_s: float = 1.0, deadline: Optional[float] = None,
                   hugepages: Optional[bool] = None, seed: int = 0) -> Ceiling:
    """The copy ceiling for ``nbytes`` (bytes/s), measured once per process.

    When this process already measured the same copy (same bytes per copy and page policy,
    through ``measure_ceiling`` via this function or ``remember_ceiling``), that ceiling is
    returned with ``notes["ceiling_shared_with"]`` naming who measured it (the same machine,
    the same run: the copy is not repeated); otherwise it is measured now with
    ``measure_ceiling`` (same arguments and errors) and remembered under ``source``.
    """
    n = int(nbytes or default_ceiling_bytes())
    hit = _SHARED.get((n, hugepages))
    if hit is not None:
        c, who = hit
        return Ceiling(c.stats, {**c.notes, "ceiling_shared_with": who})
    c = measure_ceiling(n, min_samples=min_samples, max_time_s=max_time_s, deadline=deadline,
                        hugepages=hugepages, seed=seed)
    remember_ceiling(c, nbytes=n, source=source, hugepages=hugepages)
    return c


def _peak(ceiling: Union[Stats, float]) -> float:
    return float(ceiling.max if isinstance(ceiling, Stats) else ceiling)


def plausibility(bandwidth: float, ceiling: Union[Stats, float], *,
                 factor: float = CLPEAK_FACTOR, fill: Optional[str] = None) -> Optional[str]:
    """None when ``bandwidth`` is plausible, else the artefact label.

    Two rules: a transfer read from an untouched host buffer (``fill="untouched"``) measures
    the zero page whatever
    the figure (clpeak: 34.18 GB/s untouched vs 13.44 GB/s initialised, only 2.5x, under the 3x
    limit); and any result above ``factor`` times the ceiling is an artefact.

    Args:
        bandwidth: measured bandwidth in bytes/s.
        ceiling: the copy ceiling of this run (``Stats`` -> its max, the peak; or bytes/s).
        factor: multiple of the ceiling above which a result is an artefact (clpeak: 3).
        fill: fill of the source host buffer (``buffer_conditions(arr)["buffer_fill"]``).

    Raises:
        ValueError: non-positive ceiling or factor.
    """
    peak = _peak(ceiling)
    if peak <= 0 or factor <= 0:
        raise ValueError("ceiling and factor must be positive")
    if fill == "untouched":
        return (f"artefact: {bandwidth / 1e9:.3g} GB/s read from an untouched host buffer: "
                f"its pages map the kernel's shared zero page, so this is not a bandwidth")
    if bandwidth > factor * peak:
        return (f"artefact: {bandwidth / 1e9:.3g} GB/s is {bandwidth / peak:.2f}x the copy "
                f"ceiling of {peak / 1e9:.3g} GB/s measured in this run (limit {factor:g}x, "
                f"clpeak's rule): zero pages, zero-copy or an unfinished transfer, not a bandwidth")
    return None


def checked_point(point: Point, ceiling: Union[Stats, float], *,
                  factor: float = CLPEAK_FACTOR, fill: Optional[str] = None) -> Point:
    """``point`` (bytes/s) unchanged when plausible; otherwise a point with no samples and no
    statistics whose ``artefact`` label carries the implausible median, so the figure is never
    stored as a bandwidth."""
    if point.stats is None:
        return point
    label = plausibility(point.stats.median, ceiling, factor=factor, fill=fill)
    if label is None:
        return point
    return Point(x=point.x, label=point.label, samples=[], warmup=[], stats=None, artefact=label)
