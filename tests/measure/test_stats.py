"""Statistics of the harness: warm-up split, summaries, A/A and A/B comparison.

Field cases: warmup-first-call (harness), first-touch-rising (host-buffer; classified here by
the harness's series functions).  Real data: tests/data/measure/copy_samples.json, recorded on
the build machine by tests/measure/record_samples.py (interleaved runs in fresh processes).
"""

import json
import re

import numpy as np
import pytest

from advisor.measure import (
    classify_series,
    compare,
    noise_floor_from_aa,
    split_warmup,
    summarize,
)
from advisor.models import Stats
from support import DATA, case


@pytest.fixture(scope="module")
def copies():
    with (DATA / "measure" / "copy_samples.json").open() as fh:
        return json.load(fh)


def test_warmup_first_call_case_reported_apart():
    c = case("warmup-first-call")
    us = c["case"]["evidence"]
    k = split_warmup(us)
    assert k == c["expect"]["warmup_samples"]
    steady = summarize(us[k:])
    assert steady.median == pytest.approx(c["expect"]["steady_median_us"])
    shape = classify_series(us)
    assert shape.kind == "first-use"
    assert shape.warmup == c["expect"]["warmup_samples"]
    # the first-use cost is kept as a result: its ratio to the steady median is reported
    assert shape.warmup_ratio == pytest.approx(us[0] / c["expect"]["steady_median_us"])


def test_warmup_first_call_case_through_sample_point():
    """The case's samples fed through the sampler's Point: warm-up and steady both kept."""
    from advisor.measure.sampling import SampleResult

    c = case("warmup-first-call")
    secs = [v * 1e-6 for v in c["case"]["evidence"]]
    k = split_warmup(secs)
    res = SampleResult(samples=secs[k:], warmup=secs[:k], first_call_s=secs[0], batch=1)
    p = res.to_point(label="latency")
    assert len(p.warmup) == c["expect"]["warmup_samples"]
    assert p.samples and p.stats.median == pytest.approx(c["expect"]["steady_median_us"] * 1e-6)
    assert p.warmup[0] == secs[0]


def test_first_touch_rising_case_settles():
    c = case("first-touch-rising")
    runs = [gbps for _, gbps in c["case"]["evidence"]]
    shape = classify_series(runs, higher_is_better=True)
    settle = int(re.search(r"settles after (\d+) runs", c["expect"]["classify_series"]).group(1))
    assert shape.warmup == settle
    assert shape.kind == "rising" and shape.monotonic
    assert "monotonically rising" in c["expect"]["classify_series"]
    assert shape.steady_median == pytest.approx(c["expect"]["steady_state_GBps"])


def test_split_warmup_rarely_flags_stationary_noise(copies):
    """Real stationary samples: shuffled, no warm-up should be found (a false split < 5 %)."""
    pool = np.array([v for run in copies["runs"]["small"] for v in run])
    rng = np.random.default_rng(7)
    false = sum(split_warmup(rng.choice(pool, 30, replace=False)) > 0 for _ in range(200))
    assert false < 10


def test_summarize_shape_and_errors():
    s = summarize([3.0, 1.0, 2.0, 4.0, 5.0], seed=1)
    assert isinstance(s, Stats)
    assert (s.n, s.median, s.min, s.max, s.mean) == (5, 3.0, 1.0, 5.0, 3.0)
    assert s.min <= s.p5 <= s.median <= s.p95 <= s.max
    assert s.min <= s.ci_low <= s.median <= s.ci_high <= s.max
    assert summarize([1.0, 2.0, 3.0], seed=3) == summarize([1.0, 2.0, 3.0], seed=3)
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        summarize([1.0, float("nan")])


def test_aa_comparisons_indistinguishable_95_percent(copies):
    """Seeded A/A on real data: two subsets of real runs of the same configuration, noise
    floor measured from the A/A repeats themselves -> "indistinguishable" in >= 95 %."""
    runs = [np.asarray(r) for r in copies["runs"]["small"]]
    floor = noise_floor_from_aa(runs)
    rng = np.random.default_rng(2024)
    verdicts = []
    for seed in range(100):
        i, j = rng.integers(0, len(runs), 2)
        a = rng.choice(runs[i], 40, replace=False)
        b = rng.choice(runs[j], 40, replace=False)
        verdicts.append(compare(a, b, noise_floor=floor, seed=seed, n_boot=500).verdict)
    share = verdicts.count("indistinguishable") / len(verdicts)
    assert share >= 0.95, verdicts


def test_real_2x_difference_detected(copies):
    """Copying twice the bytes (recorded real runs) is found 'worse' with a ratio near 1/2."""
    small = [np.asarray(r) for r in copies["runs"]["small"]]
    double = [np.asarray(r) for r in copies["runs"]["double"]]
    floor = max(noise_floor_from_aa(small), noise_floor_from_aa(double))
    rng = np.random.default_rng(5)
    for seed in range(20):
        a = rng.choice(small[seed % len(small)], 40, replace=False)
        b = rng.choice(double[seed % len(double)], 40, replace=False)
        c = compare(a, b, noise_floor=floor, seed=seed, n_boot=500)
        assert c.verdict == "worse"
        assert 0.4 < c.ratio < 0.6
        # and oriented the other way round it is "better"
        assert compare(b, a, noise_floor=floor, seed=seed, n_boot=500).verdict == "better"


def test_compare_orientation_for_bandwidths():
    a = [10.0, 10.5, 9.5, 10.2, 9.8]
    b = [20.0, 21.0, 19.0, 20.4, 19.6]
    c = compare(a, b, higher_is_better=True, seed=0)
    assert c.verdict == "better" and c.ratio == pytest.approx(2.0)
    assert c.ci_low <= c.ratio <= c.ci_high


def test_noise_floor_blocks_small_real_differences():
    a = [1.00, 1.01, 0.99, 1.00, 1.00, 1.01, 0.99, 1.00]
    b = [v / 1.03 for v in a]  # 3 % faster, very low noise: the CI alone says "better"
    assert compare(a, b, seed=0).verdict == "better"
    assert compare(a, b, noise_floor=0.05, seed=0).verdict == "indistinguishable"
    with pytest.raises(ValueError):
        compare(a, b, noise_floor=-0.1)
    with pytest.raises(ValueError):
        compare([0.0, 1.0], b)


def test_noise_floor_from_aa_forms():
    assert noise_floor_from_aa([[1.0, 1.0], [1.1, 1.1]]) == pytest.approx(0.1)
    assert noise_floor_from_aa([2.0, 2.2, 2.1]) == pytest.approx(0.1)
    assert noise_floor_from_aa([5.0]) == 0.0
    with pytest.raises(ValueError):
        noise_floor_from_aa([])


def test_verdict_at_moves_the_ci_with_the_ratio():
    """``Comparison.verdict_at``: the rule of ``compare`` at another ratio, the CI's bounds
    relative to the ratio kept (the resample rule of issue 25's stability figures)."""
    from advisor.measure.stats import Comparison

    c = Comparison(1.30, 1.20, 1.40, "better", 0.10, 0.95, 9, 9)
    assert c.verdict_at(1.30) == c.verdict == "better"
    assert c.verdict_at(1.10) == "indistinguishable"   # CI 1.02-1.18: not beyond 1.10
    assert c.verdict_at(0.70) == "worse"               # CI 0.65-0.75: below 1/1.1
    with pytest.raises(ValueError):
        c.verdict_at(0.0)
