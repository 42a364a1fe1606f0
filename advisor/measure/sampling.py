"""The sampler: time a Python callable with ``time.perf_counter_ns``.

Procedure of ``sample(fn)``:

1. The timer's own cost is measured (median of back-to-back ``perf_counter_ns`` pairs) and
   subtracted from every timed batch, so a first call is not made to look slow by the timer.
2. The first call is always timed alone: it is the first-use cost, a result in its own right
   (DLA-Future PR #1143: first iterations 17.3 s against 0.093 s steady).
3. Batch calibration for short calls: the batch doubles until one batch lasts at least
   ``1 / max_timer_error`` times the timer's cost plus resolution, so the timer contributes at
   most ``max_timer_error`` (1 % by default) of a sample.  Calibration batches are kept apart in
   ``SampleResult.calibration`` (different batch sizes are not mixed into the statistics).
4. Sampling at that batch size until ``min_samples`` are taken *and* the ``max_time_s`` cap is
   reached, or ``max_samples`` are taken.  Either stop waits, until the cap, for
   ``min_samples`` of them to be steady state (step 5): a series still improving at
   ``max_samples`` is not yet measured (recorded on the 2-core VM, a busy CI run: 2000 calls of
   ``perf_counter_ns`` whose last two beat the 1998 before them, so all but two were warm-up).
   A ``deadline`` (``time.monotonic()`` seconds, the
   shared budget from ``MeasureContext.deadline``) stops it in any case, which is recorded as
   ``truncated``.  With ``rel_precision`` (adaptive mode) sampling also stops, once
   ``min_samples`` are taken, as soon as the 95 % interval of the steady-state median
   (``stats.median_ci_order``, distribution-free) has a half-width within ``rel_precision`` of
   the median: Jain, *The Art of Computer Systems Performance Analysis* (1991), section 13.9,
   "Determining sample size", applied sequentially.  The check runs after every sample while
   they are few and then at geometrically spaced counts (every ``n // 8``), so it costs
   O(log n) sorts.  Stopping on a tight interval can stop on a lucky run of similar values;
   ``min_samples`` bounds that, and the reported interval is still the bootstrap's.
5. The ordered per-call values (first call, then batches) are split into warm-up and steady
   state by ``series.split_warmup``: warm-up values are reported apart, never dropped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from advisor.models import Point, Stats
from advisor.measure.series import split_warmup
from advisor.measure.stats import precise_enough, summarize

#: Fraction of a sample the timer may contribute (cost + resolution); sets the batch size.
MAX_TIMER_ERROR = 0.01


@dataclass
class SampleResult:
    """Samples of one callable.

    Attributes:
        samples: steady-state seconds per call, in order.
        warmup: first-use seconds per call (leading values slower than every steady value),
            in order; ``warmup[0]`` is the very first call when there is a warm-up.
        first_call_s: the first call, always timed alone, seconds.
        batch: calls per steady-state sample.
        calibration: (batch, seconds per call) of the calibration batches.
        timer_overhead_s: measured cost of one ``perf_counter_ns`` pair, subtracted per batch.
        calls: total calls of ``fn``.
        elapsed_s: wall time of the whole ``sample`` call.
        truncated: the deadline stopped sampling before ``min_samples`` steady samples.
        precise: adaptive mode stopped because the median's interval was tight enough
            (``rel_precision`` given and reached); False otherwise.
        seed: default bootstrap seed of ``stats`` and ``to_point``.
    """

    samples: list[float]
    warmup: list[float]
    first_call_s: float
    batch: int
    calibration: list[tuple[int, float]] = field(default_factory=list)
    timer_overhead_s: float = 0.0
    calls: int = 0
    elapsed_s: float = 0.0
    truncated: bool = False
    seed: int = 0
    precise: bool = False

    def stats(self, *, seed: Optional[int] = None) -> Stats:
        """``summarize(samples)`` in seconds per call.  Raises ValueError without samples."""
        return summarize(self.samples, seed=self.seed if seed is None else seed)

    def to_point(self, x: Optional[float] = None, label: Optional[str] = None,
                 per_call_bytes: Optional[int] = None, *, seed: Optional[int] = None) -> Point:
        """A ``models.Point`` with samples, warm-up kept apart, and statistics.

        Args:
            x: the x value (e.g. message size in bytes).
            label: configuration name.
            per_call_bytes: bytes moved per call; when given the point's values are bytes/s
                (``per_call_bytes / seconds``), otherwise seconds per call.
            seed: bootstrap seed (default: the seed given to ``sample``).
        """
        seed = self.seed if seed is None else seed
        def conv(v: list[float]) -> list[float]:
            if per_call_bytes is None:
                return list(v)
            return [per_call_bytes / s for s in v if s > 0]

        samples, warm = conv(self.samples), conv(self.warmup)
        return Point(x=x, label=label, samples=samples, warmup=warm,
                     stats=summarize(samples, seed=seed) if samples else None)


def timer_overhead_ns(repeats: int = 101) -> int:
    """Median cost in ns of one back-to-back ``perf_counter_ns()`` pair (measured now)."""
    pc = time.perf_counter_ns
    d = []
    for _ in range(repeats):
        t0 = pc()
        t1 = pc()
        d.append(t1 - t0)
    d.sort()
    return d[len(d) // 2]


def _resolution_ns() -> int:
    res = time.get_clock_info("perf_counter").resolution
    return max(1, int(round(res * 1e9)))


def _steady_count(ordered: list, warmup: Optional[int], steady_start: int) -> int:
    """How many of ``ordered`` are steady-state samples by the rule :func:`sample` ends with."""
    k = split_warmup(ordered) if warmup is None else min(warmup, len(ordered))
    return len(ordered) - max(k, steady_start)


def sample(fn: Callable[[], object], *, min_samples: int = 10, max_time_s: float = 1.0,
           max_samples: int = 2_000, warmup: Optional[int] = None, batch: Optional[int] = None,
           deadline: Optional[float] = None, max_timer_error: float = MAX_TIMER_ERROR,
           seed: int = 0, rel_precision: Optional[float] = None) -> SampleResult:
    """Time ``fn()`` repeatedly; see the module docstring for the procedure.

    Args:
        fn: callable without arguments; its result is ignored.
        min_samples: steady-state samples to take even past ``max_time_s`` (>= 1).
        max_time_s: wall-time cap in seconds once ``min_samples`` are taken.
        max_samples: samples after which sampling stops once ``min_samples`` of them are
            steady state, or at the ``max_time_s`` cap (the bootstrap in ``summarize`` costs
            O(samples x 2000) operations: ~0.1 s for 2000 samples here).
        warmup: None -> detect the warm-up (``series.split_warmup``); an int -> treat exactly
            that many leading values as warm-up.
        batch: calls per sample; None -> calibrate.
        deadline: ``time.monotonic()`` value after which no new sample starts (shared budget).
        max_timer_error: fraction of a sample the timer may contribute.
        seed: bootstrap seed used by ``SampleResult.stats`` / ``to_point`` unless they get one.
        rel_precision: None (default) -> sample up to the time cap; a fraction (e.g.
            ``stats.REL_PRECISION``, 5 %) -> also stop once ``min_samples`` are taken and the
            95 % interval of the steady-state median has a half-width within this fraction of
            the median (see the module docstring).

    Returns:
        ``SampleResult`` (seconds per call).

    Raises:
        ValueError: bad arguments.
        Exception: whatever ``fn`` raises propagates unchanged.
    """
    if min_samples < 1 or max_samples < min_samples:
        raise ValueError("need 1 <= min_samples <= max_samples")
    if max_time_s < 0:
        raise ValueError("max_time_s must be >= 0")
    if warmup is not None and warmup < 0:
        raise ValueError("warmup must be None or >= 0")
    if batch is not None and batch < 1:
        raise ValueError("batch must be None or >= 1")
    if rel_precision is not None and not rel_precision > 0:
        raise ValueError("rel_precision must be None or > 0")
    pc = time.perf_counter_ns
    t_start = time.monotonic()
    over = timer_overhead_ns()

    def timed(k: int) -> float:
        t0 = pc()
        for _ in range(k):
            fn()
        t1 = pc()
        return max(0, t1 - t0 - over) / k * 1e-9

    def out_of_time() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    ordered = [timed(1)]
    calls = 1
    calibration: list[tuple[int, float]] = []
    if batch is None:
        target_ns = (over + _resolution_ns()) / max_timer_error
        batch = 1
        # the first call may be the slow one: calibrate on fresh calls
        while not out_of_time():
            v = timed(batch)
            calls += batch
            calibration.append((batch, v))
            last = v * batch * 1e9
            if last >= target_ns:
                break
            batch *= 2
    if batch == 1 and calibration:
        # calibration ran at batch 1 only: its values are ordinary samples
        ordered.extend(v for _, v in calibration)
        calibration = []
    # with batch 1 the first call is an ordinary sample too; otherwise it is kept out of the
    # steady statistics (it was timed at a different batch size) unless it is warm-up
    steady_start = 0 if batch == 1 else 1
    t_cap = time.monotonic() + max_time_s
    truncated = False
    n = len(ordered) if batch == 1 else 0
    precise = False
    next_check = min_samples
    while True:
        if out_of_time():
            truncated = n < min_samples
            break
        capped = time.monotonic() >= t_cap
        if n >= max_samples and capped:
            break
        if (n >= max_samples or (n >= min_samples and capped)) and _steady_count(
                ordered, warmup, steady_start) >= min_samples:
            break  # min_samples steady ones: the warm-up rule may take a run of slow first calls
        if rel_precision is not None and n >= next_check:
            steady_now = ordered[max(split_warmup(ordered), steady_start):]
            if len(steady_now) >= min_samples and precise_enough(steady_now, rel_precision):
                precise = True
                break
            next_check = n + max(1, n // 8)
        ordered.append(timed(batch))
        calls += batch
        n += 1
    first = ordered[0]
    if warmup is None:
        k = split_warmup(ordered)
    else:
        k = min(warmup, len(ordered))
    warm = ordered[:k]
    steady = ordered[max(k, steady_start):]
    return SampleResult(samples=steady, warmup=warm, first_call_s=first, batch=batch,
                        calibration=calibration, timer_overhead_s=over * 1e-9, calls=calls,
                        elapsed_s=time.monotonic() - t_start, truncated=truncated, seed=seed,
                        precise=precise)
