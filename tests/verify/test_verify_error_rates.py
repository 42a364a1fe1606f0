"""verify's error rates by design (issue 25, item 3), on recorded real measurements.

* ``advisor.measure.family``: one verdict over many sizes and metrics, each CI at the
  Bonferroni level, a test deciding only beyond its A/A band; a CI wholly below 1 beyond the
  floor is a regression, a loss inside the floor is never reported as "ruled out".
* ``advisor_mpich_cma.verdict.decide`` on paired launches recorded with the MPICH 5.0.2 wheel
  (``tests/data/mpich_cma/verify-paired-5.0.2.json``): an A/A gives ``no-effect``; the same
  A/A with a planted 10 % loss gives ``regression``; threshold 16 KiB vs 8 KiB is a regression
  in the launches where the copy path was slow, confirmed in the fast ones, and ``no-effect``
  when a verify sees both (the CI holds every launch's own ratio: the launch-to-launch state is
  inside it), which is the contradiction of the issue's four verdicts made visible.
"""

from __future__ import annotations

import json

import pytest
from support import DATA

from advisor.measure.family import Contrast, family_level, family_verdict, floor_from_ci
from advisor.models import Evidence

RECORDED = DATA / "mpich_cma" / "verify-paired-5.0.2.json"


def _evidence(launches):
    from advisor_mpich_cma.verify import paired_series

    return Evidence(id="cma-verify", description="recorded", series=paired_series(launches),
                    values={"mode": "paired"})


@pytest.fixture(scope="module")
def recorded():
    pytest.importorskip("advisor_mpich_cma.verdict")
    return json.loads(RECORDED.read_text())


def test_family_level_is_bonferroni():
    assert family_level(1) == pytest.approx(0.95)
    assert family_level(6) == pytest.approx(1 - 0.05 / 6)
    with pytest.raises(ValueError):
        family_level(0)


def test_family_verdict_regression_confirmed_no_effect():
    worse = Contrast("latency at 8192 bytes", 0.8, 0.75, 0.85, 0.05)
    better = Contrast("bandwidth at 8192 bytes", 1.3, 1.2, 1.4, 0.05)
    flat = Contrast("latency at 32768 bytes", 1.0, 0.98, 1.02, 0.05)
    assert family_verdict([worse, better, flat])[:2] == ("regression", worse)
    assert family_verdict([better, flat])[:2] == ("confirmed", better)
    verdict, t, why = family_verdict([flat])
    assert verdict == "no-effect" and "inside its A/A band" in why
    assert family_verdict([]) == ("not-measurable", None, "no size gave a comparison")


def test_a_loss_within_the_floor_is_not_ruled_out():
    """The issue's glibc case: x0.64, CI [0.57, 0.94] with a wide floor is no loss shown, and the
    reason says the loss is not ruled out; with a floor the CI clears, it is a regression."""
    t = Contrast("memcpy at 4194304 bytes", 0.64, 0.57, 0.94, 0.60)
    verdict, _, why = family_verdict([t])
    assert verdict == "no-effect" and "neither shown nor ruled out" in why
    narrow = Contrast("memcpy at 4194304 bytes", 0.64, 0.57, 0.94, 0.05)
    assert family_verdict([narrow])[0] == "regression"


def test_floor_from_ci_is_the_far_end():
    assert floor_from_ci(0.98, 1.01) == pytest.approx(1 / 0.98 - 1)
    assert floor_from_ci(0.99, 1.03) == pytest.approx(0.03)
    with pytest.raises(ValueError):
        floor_from_ci(0.0, 1.0)


def test_recorded_aa_is_no_effect_and_a_planted_loss_is_found(recorded):
    from advisor_mpich_cma.verdict import decide, with_loss

    ev = _evidence(recorded["aa"])
    v = decide(ev, "cma-threshold")
    assert v.verdict == "no-effect", v.reason
    assert v.ci_low <= 1.0 <= v.ci_high
    values = v.evidence[0].values
    assert values["family_tests"] == 6 and values["family_level"] == pytest.approx(1 - 0.05 / 6)
    lost = decide(with_loss(ev, 0.10), "cma-threshold")
    assert lost.verdict == "regression", lost.reason
    assert lost.ci_high < 1 / (1 + lost.noise_floor)
    assert lost.ratio == pytest.approx(1 / 1.1, abs=0.03)


def test_recorded_state_dependent_advice(recorded):
    """16 KiB vs 8 KiB: slow launches alone say regression, fast ones confirmed; together the
    CI holds both and the verdict is no-effect, naming the disagreement."""
    from advisor_mpich_cma.verdict import decide

    slow = decide(_evidence(recorded["ab_16k_slow"]), "t")
    fast = decide(_evidence(recorded["ab_16k_fast"]), "t")
    both = decide(_evidence(recorded["ab_16k_slow"] + recorded["ab_16k_fast"]), "t")
    assert (slow.verdict, fast.verdict, both.verdict) == ("regression", "confirmed", "no-effect")
    assert "launches disagree" in both.reason
    values = both.evidence[0].values
    for key, text in values.items():
        if "_launch_ratios_" in key:  # every launch's own ratio lies inside its test's CI
            lo, hi = (float(x) for x in values[key.replace("launch_ratios", "ci")].split(".."))
            assert all(lo <= float(r) <= hi for r in str(text).split(",")), key


def test_launches_layout_resamples_launches(recorded):
    """The separate-launch layout: a test's pairs are the rounds (one launch per configuration);
    three rounds give a CI as wide as the rounds' ratios."""
    from advisor.models import Point, Series

    from advisor_mpich_cma.verdict import decide

    series = []
    for metric, key, unit in (("latency", "lat", "s"), ("bandwidth", "bw", "Bps")):
        for cfg, side in (("advised", "on"), ("baseline", "off")):
            series.append(Series(name=f"{metric}:{cfg}", unit=unit, points=[
                Point(x=row["bytes"], label=f"run{r}", samples=row[f"{key}_{side}_{unit}"])
                for r, launch in enumerate(recorded["ab_16k_slow"]) for row in launch["sizes"]]))
    v = decide(Evidence(id="cma-verify", series=series, values={"mode": "launches"}), "t")
    assert v.verdict in ("regression", "no-effect")
    values = v.evidence[0].values
    for key, text in values.items():
        if key.startswith("lat_launch_ratios_"):
            own = [float(x) for x in str(text).split(",")]
            assert len(own) == 3
            lo, hi = (float(x) for x in values[key.replace("launch_ratios", "ci")].split(".."))
            assert lo <= min(own) and max(own) <= hi


def test_paired_only_where_the_switch_is_trusted():
    """verify pairs through MPI_T only for upstream MPICH and when nothing but the CMA variables
    differs; a side with CMA off is the threshold above every size."""
    from advisor_mpich_cma import knobs
    from advisor_mpich_cma.verify import paired_thresholds
    from advisor.measure.mpi.loops import THRESHOLD_OFF

    defaults = {"enable": 1, "threshold": 8192, "mode": None}
    adv = {knobs.CMA_THRESHOLD: "16384"}
    assert paired_thresholds(adv, {}, knobs.UPSTREAM, defaults) == ((16384, 8192), "")
    assert paired_thresholds({knobs.CMA_ENABLE: "0"}, {}, knobs.UPSTREAM, defaults)[0] == (
        THRESHOLD_OFF, 8192)
    values, why = paired_thresholds({**adv, "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}, {},
                                    knobs.UPSTREAM, defaults)
    assert values is None and "GLIBC_TUNABLES" in why
    assert paired_thresholds(adv, {}, knobs.CRAY, defaults)[0] is None
