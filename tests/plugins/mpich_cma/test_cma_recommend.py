"""The pure recommend() on evidence recorded on the build machine (2 cores, MPICH 5.0.2 and 4.3.2
wheels, ``advisor_mpich_cma`` sweeps; see tests/data/mpich_cma/README.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cma_support import all_settings, env_lines, load_evidence

from advisor.models import Evidence, Facts
from advisor_mpich_cma.evidence import BW, LAT, LIBRARY, OFF, ON, SIBLING, SWEEP
from advisor_mpich_cma import lint
from advisor_mpich_cma import recommend
from advisor_mpich_cma import threshold
from advisor_mpich_cma import knobs

FACTS_5 = Facts.model_validate({"mpi": {"implementation": "mpich", "flavour": "upstream",
                                        "version": "5.0.2"}})
FACTS_43 = Facts.model_validate({"mpi": {"implementation": "mpich", "flavour": "upstream",
                                         "version": "4.3.2"}})


def _hand_runs(ev: Evidence, metric: str, config: str, n: int) -> list[float]:
    """Per-launch medians at size n, by hand (numpy only, not the plugin's code)."""
    return [float(np.median(p.samples)) for s in ev.series if s.name == f"{metric}:{config}"
            for p in s.points if p.x == n and p.samples]


def _hand_verdict(ev: Evidence, n: int) -> tuple[bool, bool]:
    """Does CMA win at size n, by hand?  Keep the better half of the launches of each
    configuration, floor = their max/min - 1 (A/A), and ask that the ratio of the medians of the
    kept runs' medians exceed 1 + floor on latency and on bandwidth.  Returns (lat, bw)."""
    wins = []
    for metric, hib in ((LAT, False), (BW, True)):
        res = {}
        for config in (ON, OFF):
            meds = sorted(_hand_runs(ev, metric, config, n), reverse=hib)
            kept = meds[:max(2, math.ceil(len(meds) / 2))]
            res[config] = (float(np.median(kept)), max(kept) / min(kept) - 1)
        floor = max(res[ON][1], res[OFF][1])
        ratio = (res[ON][0] / res[OFF][0]) if hib else (res[OFF][0] / res[ON][0])
        wins.append(ratio > 1 + floor)
    return wins[0], wins[1]


def test_threshold_on_recorded_5_0_2_is_hand_checkable():
    evidence = load_evidence("sweep-5.0.2")
    adv = recommend.recommend(evidence, FACTS_5)
    rec = [r for r in adv.recommendations if r.id == "cma-threshold"]
    assert rec, [f.message for f in adv.findings]
    thr = dict(all_settings(adv))[knobs.CMA_THRESHOLD]
    assert isinstance(thr, int)
    sweep = [e for e in evidence if e.id == SWEEP][0]
    sizes = sorted({int(p.x) for s in sweep.series for p in s.points})
    # by hand: CMA wins on both at the threshold, and does not at the size just below it
    assert _hand_verdict(sweep, thr) == (True, True)
    below = [n for n in sizes if n < thr]
    if below:
        assert _hand_verdict(sweep, below[-1]) != (True, True)
    # the CI and the evidence travel with the recommendation
    assert "95 % CI" in rec[0].rationale and SWEEP in rec[0].evidence
    setting = [s for s in rec[0].settings if s.name == knobs.CMA_THRESHOLD][0]
    assert setting.default == 8192 and setting.unit == "bytes"
    assert rec[0].confidence in ("medium", "high")


def test_threshold_rule_on_recorded_verdicts():
    sweep = [e for e in load_evidence("sweep-5.0.2") if e.id == SWEEP][0]
    vs = threshold.analyse_sweep(sweep)
    t = threshold.threshold_from(vs)
    # CMA loses below 8 KiB here (the POSIX path's 8192-byte cell), as OSU 7.2 showed
    assert all(v.loses for v in vs if v.nbytes < 8192)
    above = [v for v in vs if v.nbytes >= t.nbytes]
    assert above[0].wins and not any(v.loses for v in above)
    # the win is large in the middle (the issue measured 3-4x at 64-512 KiB with OSU)
    mid = [v for v in vs if 65536 <= v.nbytes <= 524288]
    assert all(v.lat_ratio > 1.5 for v in mid)


def test_recommend_is_pure_and_deterministic():
    evidence = load_evidence("sweep-5.0.2")
    a = recommend.recommend(evidence, FACTS_5)
    b = recommend.recommend(list(reversed(evidence)), FACTS_5)
    assert a == b


def test_default_threshold_confirmed_is_not_emitted_as_a_change():
    evidence = load_evidence("sweep-5.0.2")
    adv = recommend.recommend(evidence, FACTS_5)
    thr = dict(all_settings(adv))[knobs.CMA_THRESHOLD]
    lib = [e for e in evidence if e.id == LIBRARY][0]
    if thr == lib.values["threshold_default_bytes"]:
        assert env_lines(adv) == []  # the defaults are right: nothing to set
    else:
        assert env_lines(adv) == [f"{knobs.CMA_THRESHOLD}={thr}"]


def test_same_sweep_on_4_3_needs_an_explicit_enable():
    """With CMA off by default (4.3), the same measured win needs the enable as well."""
    evidence = [e for e in load_evidence("sweep-5.0.2") if e.id != LIBRARY]
    adv = recommend.recommend(evidence, FACTS_43)
    settings = dict(all_settings(adv))
    assert settings[knobs.CMA_ENABLE] == 1
    assert f"{knobs.CMA_ENABLE}=1" in env_lines(adv)


def test_recorded_4_3_2_advice_matches_its_measurement():
    evidence = load_evidence("sweep-4.3.2")
    lib = [e for e in evidence if e.id == LIBRARY][0].values
    assert (lib["cma_enable_default"], lib["threshold_default_bytes"]) == (0, 16384)
    assert lib["defaults_source"] == "mpivars"
    adv = recommend.recommend(evidence, FACTS_43)
    sweep = [e for e in evidence if e.id == SWEEP][0]
    t = threshold.threshold_from(threshold.analyse_sweep(sweep))
    if t.nbytes is None:
        assert f"{knobs.CMA_ENABLE}=1" not in env_lines(adv)
        assert {f.id for f in adv.findings} & {"cma-no-effect", "cma-slower", "cma-no-threshold"}
    else:
        assert dict(all_settings(adv))[knobs.CMA_THRESHOLD] == t.nbytes


def test_recorded_seccomp_failure_gives_explicit_disable():
    smoke = load_evidence("smoke-seccomp-5.0.2")
    lib = [e for e in load_evidence("sweep-5.0.2") if e.id in (LIBRARY, SIBLING)]
    adv = recommend.recommend(lib + smoke, FACTS_5)
    assert env_lines(adv) == [f"{knobs.CMA_ENABLE}=0"]
    blocked = [f for f in adv.findings if f.id == "cma-blocked"][0]
    assert "seccomp" in blocked.message and blocked.severity == "error"
    assert "MPIR_CVAR_CH4_CMA_ENABLE=0" in blocked.remedy
    rec = adv.recommendations[0]
    assert rec.confidence == "high" and rec.settings[0].default == 1


def test_no_effect_is_reported_not_recommended():
    """Identical on/off runs (the 'off' runs relabelled as 'on'): no measurable effect."""
    sweep = [e for e in load_evidence("sweep-5.0.2") if e.id == SWEEP][0]
    off = [s for s in sweep.series if s.name.endswith(OFF)]
    same = sweep.model_copy(update={"series": off + [
        s.model_copy(update={"name": s.name.replace(OFF, ON)}) for s in off]})
    sib = [e for e in load_evidence("sweep-5.0.2") if e.id == SIBLING]
    adv = recommend.recommend(sib + [same], FACTS_43)
    assert env_lines(adv) == []
    assert any(f.id == "cma-no-effect" for f in adv.findings)


@pytest.mark.parametrize("value,ok", [("8192", True), ("8K", False), ("-1", False), ("0x2000", False)])
def test_lint_threshold_is_plain_integer_bytes(value, ok):
    found = lint.lint_env({knobs.CMA_THRESHOLD: value}, FACTS_5)
    assert (found == []) is ok


def test_knob_records_are_complete():
    from advisor.plugins import collect, make_plugin_manager
    from advisor_mpich_cma import plugin

    reg = collect(make_plugin_manager(entry_points=False, plugins=[("mpich-cma", plugin)]))
    names = {k.name for k in reg.knobs}
    assert {knobs.CMA_ENABLE, knobs.CMA_THRESHOLD, knobs.CRAY_MODE, knobs.CRAY_SIZE, knobs.CRAY_GPU} <= names
    for k in reg.knobs:
        assert k.source and k.type
        if k.name.startswith("MPIR_CVAR_"):
            base = k.name[len("MPIR_CVAR_"):]
            assert set(k.aliases) == {f"MPICH_{base}", f"MPIR_PARAM_{base}"}
    enable = knobs.knob(knobs.CMA_ENABLE)
    assert (enable.default_for("4.3.2"), enable.default_for("5.0.2")) == (0, 1)
    assert not enable.valid_for("4.2.0")
    assert "mpich-cma" in reg.probes and "mpich-cma" in reg.fact_detectors


def test_numa_pairs_from_facts():
    from advisor_mpich_cma.measure import pairs

    two = Facts.model_validate({"memory": {"numa_nodes": 2,
                                           "numa_node_cpus": {"0": "0-7", "1": "8-15"}}})
    assert pairs(two) == [("same-numa", "0/1"), ("cross-numa", "0/8")]
    assert pairs(Facts()) == [("", None)]


def test_threshold_holds_for_every_rank_pair():
    """Two pairs (as on a 2-NUMA machine): the threshold is the larger of the two."""
    evidence = load_evidence("sweep-5.0.2")
    sweep = [e for e in evidence if e.id == SWEEP][0]
    # a library with CMA off by default (as 4.3.x): the pair rule alone decides; with CMA on by
    # default, sizes left unmeasured below 32 KiB would not justify moving them off CMA (see
    # test_raising_the_threshold_over_sizes_where_cma_is_ahead_keeps_the_default)
    base = [e.model_copy(update={"values": {**e.values, "cma_enable_default": 0}})
            if e.id == "cma-library" else e
            for e in evidence if not e.id.startswith(SWEEP)]
    # the second pair: the same runs with everything below 32 KiB left out
    cut = sweep.model_copy(update={"id": SWEEP + ".cross-numa", "series": [
        s.model_copy(update={"points": [p for p in s.points if p.x >= 32768]})
        for s in sweep.series]})
    one = dict(all_settings(recommend.recommend(base + [sweep], FACTS_5)))[knobs.CMA_THRESHOLD]
    both = dict(all_settings(recommend.recommend(base + [sweep, cut], FACTS_5)))[knobs.CMA_THRESHOLD]
    assert both == max(one, 32768)


def test_raising_the_threshold_over_sizes_where_cma_is_ahead_keeps_the_default():
    """MPICH 5 uses CMA from 8 KiB.  If CMA wins on both measures only from 32 KiB but at 8-16
    KiB is better on latency and worse on nothing, moving those sizes to the POSIX path makes
    them slower (advisor verify measured exactly this as a regression): keep the default."""
    evidence = load_evidence("sweep-5.0.2")
    sweep = [e for e in evidence if e.id == SWEEP][0]
    base = [e for e in evidence if not e.id.startswith(SWEEP)]
    vs = {v.nbytes: v for v in threshold.analyse_sweep(sweep)}
    default = 8192
    ahead = [n for n, v in vs.items() if default <= n < 32768 and not v.loses
             and "better" in (v.lat_verdict, v.bw_verdict)]
    assert ahead, "the recorded sweep shows CMA ahead between 8 and 32 KiB"
    # the cross-NUMA pair is measured only from 32 KiB: the pair rule alone would say 32 KiB
    cut = sweep.model_copy(update={"id": SWEEP + ".cross-numa", "series": [
        s.model_copy(update={"points": [p for p in s.points if p.x >= 32768]})
        for s in sweep.series]})
    advice = recommend.recommend(base + [sweep, cut], FACTS_5)
    settings = dict(all_settings(advice))
    assert settings[knobs.CMA_THRESHOLD] == default
    assert any(f.id == "cma-threshold-keep-default" for f in advice.findings)
