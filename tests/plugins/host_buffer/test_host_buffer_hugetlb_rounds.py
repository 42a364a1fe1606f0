"""Stage 5 (``malloc-hugetlb``) measures until its verdict is stable (issue 25 item 1).

Recorded on the 2-core AMD VM (tests/data/host_buffer/malloc-hugetlb-rounds.json): in one whole
probe of ten, one hugetlb first touch of five took 0.20 s (0.012 s the others), and with the
one A/B round the stage then ran, the speed-up's CI held 1: no advice, while the other nine
advised the tunable."""

from __future__ import annotations

import json

import pytest
from support import REPO

from advisor.measure import STABLE_SHARE
from advisor_host_buffer import measure_touch
from advisor_host_buffer.measure_touch import MAX_HUGETLB_ROUNDS, MIN_HUGETLB_ROUNDS, hugetlb_verdict

DATA = json.loads((REPO / "tests/data/host_buffer/malloc-hugetlb-rounds.json").read_text())


def test_one_round_with_a_stalled_first_touch_is_the_recorded_no_verdict():
    got = DATA["probes"]["probe-04"]
    c, nf, stability = hugetlb_verdict({"default": got["default"], "hugetlb": got["hugetlb"]})
    assert c.verdict == got["recorded"]["verdict"] == "indistinguishable"
    assert c.ci_low < 1 < c.ci_high
    assert stability is None  # one round: nothing to resample, so a full probe measures on


def test_a_second_round_decides_and_its_stability_is_measured():
    """The stalled probe's round and a round of the next probe's processes: the stalled sample
    is one in ten, the verdict is the nine other probes' ('better'), and it holds in the
    resamples of the two rounds."""
    four, five = DATA["probes"]["probe-04"], DATA["probes"]["probe-05"]
    runs = {"default": [four["default"][0], five["default"][0], five["default"][1]],
            "hugetlb": [four["hugetlb"][0], five["hugetlb"][0]]}
    c, nf, stability = hugetlb_verdict(runs)
    assert c.verdict == "better" and c.ci_low > 1 + nf
    assert stability is not None and stability >= STABLE_SHARE


def test_round_bounds():
    assert 2 <= MIN_HUGETLB_ROUNDS <= MAX_HUGETLB_ROUNDS


@pytest.mark.slow
def test_a_full_probe_runs_at_least_two_rounds_and_says_why_it_stopped():
    """Live, with the real worker: a full (not quick) stage 5 runs D H D H D at least, records
    its rounds, stability and why it stopped; --quick keeps one round."""
    import time

    from advisor.facts import detect
    from advisor.probe import MeasureContext
    from advisor_host_buffer import evidence, measure_common, thp

    facts = detect(opencl=False)
    if thp.thp_mode(facts.memory.thp_enabled) != "madvise" or \
            evidence.glibc_at_least(facts, "2.35") is not True:
        pytest.skip("needs THP madvise mode and glibc >= 2.35")
    for quick in (False, True):
        ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 60, quick=quick)
        ev = measure_touch.malloc_hugetlb(ctx, measure_common.Budget(ctx))
        v = ev.values
        if quick:
            assert v["rounds"] == 1 and v["stopped"] == "quick" and "stability" not in v
        else:
            assert MIN_HUGETLB_ROUNDS <= v["rounds"] <= MAX_HUGETLB_ROUNDS
            assert v["stopped"] in ("stable", "round cap") and 0 <= v["stability"] <= 1
            assert v["stopped"] == "round cap" or v["stability"] >= STABLE_SHARE
            # every process's samples are in the evidence: 5 per process, D one ahead of H
            n_h = len(ev.series[1].points[0].samples) // 5
            assert n_h == v["rounds"] and len(ev.series[0].points[0].samples) == 5 * (n_h + 1)
