"""The adaptive stopping rule (median CI within a relative precision, Jain 1991 section 13.9)
and the per-process shared copy ceiling."""

import math
import time

import pytest

from advisor.measure import (
    REL_PRECISION,
    Ceiling,
    forget_ceilings,
    median_ci_order,
    precise_enough,
    remember_ceiling,
    sample,
    shared_ceiling,
    summarize,
)


def _coverage(n: int, j: int) -> float:
    """P(x_(j) <= median <= x_(n-j+1)) for continuous data: 1 - 2 P(Binomial(n, 1/2) < j)."""
    return 1 - 2 * sum(math.comb(n, i) for i in range(j)) / 2 ** n


@pytest.mark.parametrize("n", [6, 7, 10, 20, 50, 70])
def test_order_statistic_interval_is_the_widest_exact_95_percent_one(n):
    values = list(range(1, n + 1))
    lo, hi = median_ci_order(values)
    j = int(lo)
    assert hi == n - j + 1  # symmetric
    assert _coverage(n, j) >= 0.95 > _coverage(n, j + 1)


def test_order_statistic_interval_normal_approximation_matches_le_boudec():
    # Le Boudec (2010), Theorem 2.1: n = 100 -> x_(40), x_(61)
    assert median_ci_order(list(range(1, 101))) == (40, 61)


def test_no_interval_below_six_values():
    assert median_ci_order([1.0, 2.0, 3.0, 4.0, 5.0]) is None
    assert not precise_enough([1.0] * 5)
    assert precise_enough([1.0] * 6)


def test_precise_enough_compares_half_width_with_the_median():
    tight = [1.0 + 0.001 * k for k in range(20)]
    loose = [1.0 + 0.5 * k for k in range(20)]
    assert precise_enough(tight, REL_PRECISION)
    assert not precise_enough(loose, REL_PRECISION)


def test_sampler_stops_early_when_precise_and_keeps_the_minimum():
    # a steady callable: the interval is tight at the first check, long before the time cap
    t0 = time.monotonic()
    r = sample(lambda: time.sleep(0.002), min_samples=8, max_time_s=5.0, rel_precision=0.5)
    assert r.precise and len(r.samples) >= 8
    assert time.monotonic() - t0 < 2.0
    # without rel_precision the cap rules as before
    r = sample(lambda: None, min_samples=5, max_time_s=0.05)
    assert not r.precise
    with pytest.raises(ValueError):
        sample(lambda: None, rel_precision=0.0)


def test_shared_ceiling_measured_once_and_noted():
    forget_ceilings()
    try:
        n = 4 << 20
        first = shared_ceiling(n, source="probe-a stage", min_samples=5, max_time_s=0.05)
        assert "ceiling_shared_with" not in first.notes and first.stats.median > 0
        again = shared_ceiling(n, source="probe-b stage", min_samples=5, max_time_s=0.05)
        assert again.stats == first.stats
        assert again.notes["ceiling_shared_with"] == "probe-a stage"
        # other parameters: not shared
        other = shared_ceiling(n, source="probe-b", hugepages=False, min_samples=5,
                               max_time_s=0.05)
        assert "ceiling_shared_with" not in other.notes
        # a stage that timed the same kernel itself can offer it
        st = summarize([1e9, 1.1e9, 0.9e9])
        remember_ceiling(Ceiling(st, {"src_fill": "random"}), nbytes=n, source="zero-page")
        got = shared_ceiling(n, source="x")
        assert got.stats == st and got.notes["ceiling_shared_with"] == "zero-page"
    finally:
        forget_ceilings()
