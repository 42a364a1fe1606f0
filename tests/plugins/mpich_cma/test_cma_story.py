"""Issue 25: one decision, one story; the default measured as itself.

Recorded evidence (the 2026-12-01 profile's paired measurement) and constructed evidence
(``test_cma_minimax.paired_evidence``: default kept as the best, default kept within noise,
default beaten, a tie, regret left, latency and bandwidth disagreeing) go through ``recommend``;
every text of the advice is checked against the ``cma-decision`` values of the same evidence
(what ``records.decision_evidence`` records) and against each other.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import numpy as np
import pytest
from test_cma_minimax import (CLEAN, FACTS_5, LOSES_SMALL_AND_LARGEST, TIE, KiB, MiB, _library,
                              paired_evidence)

from advisor.models import Evidence, Facts, Point, Series
from advisor_mpich_cma import decision
from advisor_mpich_cma import evidence
from advisor_mpich_cma import minimax
from advisor_mpich_cma.pairs import paired_from_evidence
from advisor_mpich_cma import recommend
from advisor_mpich_cma import story

ROOT = Path(__file__).resolve().parents[3]
RECORDED = ROOT / "profiles" / "x86_64-icelake-2core-vm-2026-12-01.toml"
#: CMA loses 1 % at the default's 8 KiB under 5 % noise (seed 1): 16 KiB has the best worst
#: ratio, the default is within noise of it (checked below: kept_why "within-noise").
NEAR_DEFAULT = {4 * KiB: 0.8, 8 * KiB: 0.99, 16 * KiB: 1.5, 1 * MiB: 2.0}
#: The default 8 KiB is the crossover: it is the best candidate itself.
DEFAULT_BEST = {4 * KiB: 0.8, 6 * KiB: 0.8, 8 * KiB: 1.5, 64 * KiB: 2.0, 1 * MiB: 2.0}


def split_evidence(lat: dict[int, float], bw: dict[int, float], *, rounds: int = 16,
                   seed: int = 3) -> Evidence:
    """Paired evidence with different CMA on/off ratios for latency and bandwidth (> 1: CMA
    better), the shape measured with OSU on Open MPI here: from 64 KiB the copy path gives 2-4x
    the windowed bandwidth while CMA wins ping-pong latency."""
    rng = np.random.default_rng(seed)
    series: dict[str, list[Point]] = {}
    for n in sorted(lat):
        state = rng.choice([12e9, 7.5e9], size=rounds)
        for metric, rho in (("bandwidth", bw[n]), ("latency", lat[n])):
            off = state * (1 + 0.02 * rng.standard_normal(rounds))
            on = state * rho * (1 + 0.02 * rng.standard_normal(rounds))
            if metric == "latency":
                on, off = n / on, n / off
            series.setdefault(f"{metric}:cma-on", []).append(Point(x=n, label="paired",
                                                                   samples=list(on)))
            series.setdefault(f"{metric}:cma-off", []).append(Point(x=n, label="paired",
                                                                    samples=list(off)))
    sers = [Series(name=k, unit="s" if k.startswith("latency") else "bytes/s", points=v)
            for k, v in sorted(series.items())]
    return Evidence(id=evidence.PAIRED, series=sers, values={"paired": True, "rounds": rounds})


def _texts(adv) -> list[str]:
    return ([r.title for r in adv.recommendations] + [r.rationale for r in adv.recommendations]
            + [f.message for f in adv.findings])


def contradictions(adv, values: dict) -> list[str]:
    """Pairs of statements (texts, recorded values) that cannot both be true."""
    out = []
    texts = _texts(adv)
    titles = [r.title for r in adv.recommendations if r.id in ("cma-threshold", "cma-disable")]
    keep = any(t.startswith("Keep") for t in titles)
    change = any(t.startswith(("Use CMA", "Disable CMA")) for t in titles)
    advice_is_best = values["advice_threshold_bytes"] == values["best_threshold_bytes"]
    if keep != bool(values["kept_default"]) and titles:
        out.append(f"title {titles} vs kept_default={values['kept_default']}")
    if keep and change:
        out.append(f"keep and change the default at once: {titles}")
    if any("no threshold fixes" in t for t in texts) and not advice_is_best:
        out.append("'no threshold fixes' although a better threshold exists (advice != best)")
    if any("the default is within noise" in t for t in texts):
        if not values["kept_default"] or advice_is_best:
            out.append("'default within noise' but the default is not kept next to a better one")
        if any("no threshold fixes" in t for t in texts):
            out.append("'default within noise of a better threshold' next to 'no threshold "
                       "fixes'")
    if any("It replaces the default" in t for t in texts) and values["kept_default"]:
        out.append("'replaces the default' although the default is kept")
    tie = [t for t in str(values.get("tie_band_bytes", "")).split(",") if t]
    named = any(w in t for t in texts for w in ("Tie band", "counts as tied", "every candidate ties"))
    if named != (len(tie) > 1):
        out.append(f"tie band {tie} named/unnamed inconsistently")
    if values.get("one_state") and any("within noise" in t for t in texts):
        out.append("a tie by the one-state rule called a tie within noise")
    if values["kept_default"] and any("nearer the default" in t for t in texts):
        out.append("'nearer the default' although the advice is the default")
    for r in adv.recommendations:
        if r.id == "cma-threshold" and r.confidence != values["confidence"]:
            out.append(f"confidence {r.confidence} vs recorded {values['confidence']}")
    return out


def _values(evs: list[Evidence], facts: Facts) -> dict:
    """The ``cma-decision`` values ``records.decision_evidence`` records for ``evs``."""
    lib, bad = evidence.sane_library(evidence.library_of(evs, facts), facts)
    used, _ = evidence.usable_kinds(evidence.paired(evs))
    return decision.record_of(used, lib, bad).as_values()


def _check(evs: list[Evidence], facts: Facts = FACTS_5):
    adv = recommend.recommend(evs, facts)
    values = _values(evs, facts)
    assert contradictions(adv, values) == [], _texts(adv)
    return adv, values


def _recorded() -> tuple[list[Evidence], Facts]:
    prof = tomllib.loads(RECORDED.read_text())
    res = [r for r in prof["results"] if r["probe"] == "mpich-cma"][0]
    evs = [Evidence.model_validate(e) for e in res["evidence"] if e["id"] != evidence.DECISION]
    return evs, Facts.model_validate(prof["facts"])


def test_recorded_profile_tells_one_story():
    """The 2026-12-01 profile stored kept_default=False next to "Keep the default": re-derived
    from its evidence, the record says the default is kept because it is the best."""
    evs, facts = _recorded()
    adv, v = _check(evs, facts)
    assert v["kept_default"] is True and v["kept_why"] == "best"
    assert any(r.title.startswith("Keep the default") for r in adv.recommendations)


@pytest.mark.parametrize("truth,noise,case", [
    (DEFAULT_BEST, 0.02, "best"),
    (NEAR_DEFAULT, 0.05, "within-noise"),
    (CLEAN, 0.02, "beaten"),
    (TIE, 0.02, "tie"),
    (LOSES_SMALL_AND_LARGEST, 0.02, "regret"),
])
def test_constructed_cases_tell_one_story(truth, noise, case):
    adv, v = _check(_library() + [paired_evidence(truth, noise=noise)])
    ids = {f.id for f in adv.findings}
    if case in ("best", "within-noise"):
        assert v["kept_default"] is True and v["kept_why"] == case
    else:
        assert v["kept_default"] is False and v["kept_why"] == ""
    if case == "within-noise":
        rat = [r.rationale for r in adv.recommendations][0]
        assert "within noise of it" in rat and "threshold 16 KiB" in rat
    if case == "tie":
        assert v["tie_band_bytes"] == f"{64 * KiB},{1 * MiB}"
    if case == "regret":
        left = [f.message for f in adv.findings if f.id == "cma-regret-left"][0]
        assert "no threshold fixes" in left and v["best_threshold_bytes"] == 64 * KiB
    elif case == "within-noise":  # the observed contradiction: the default still loses 1 %
        left = [f.message for f in adv.findings if f.id == "cma-regret-left"]
        assert all("threshold 16 KiB measured a higher worst ratio" in m
                   and "nearest the library default" in m for m in left)
    else:
        assert "cma-regret-left" not in ids


def test_regret_left_beside_a_default_kept_within_noise_does_not_say_nothing_fixes_it():
    """The observed contradiction, constructed: the default is kept within noise of a better
    threshold and still measurably beaten somewhere.  The regret finding names the better
    threshold instead of claiming no threshold fixes it."""
    d = minimax.decide([paired_from_evidence(paired_evidence(NEAR_DEFAULT, noise=0.05))], 8 * KiB)
    assert d.kept_default and d.best == 16 * KiB
    d = dataclasses.replace(d, losses=(("", 8 * KiB, 0.97, 0.99),))
    rec = story.DecisionRecord(d)
    left = [f.message for f in rec.findings([]) if f.id == "cma-regret-left"][0]
    assert "no threshold fixes" not in left
    assert "threshold 16 KiB measured a higher worst ratio" in left
    assert rec.title().startswith("Keep the default") and rec.as_values()["kept_default"]
    # the same beside a one-state tie: the finding gives the rule, not noise, as the reason
    one = story.DecisionRecord(dataclasses.replace(d, one_state=True))
    left = [f.message for f in one.findings([]) if f.id == "cma-regret-left"][0]
    assert "ties by rule" in left and "within noise" not in left


def test_latency_and_bandwidth_disagreeing_names_who_serves_which_traffic():
    """From 64 KiB CMA wins latency x1.5 but the copy path gives 2.5x the bandwidth: no
    threshold wins everywhere, and the advice says which one serves which traffic, where and by
    how much.  Bandwidth-bound traffic is served best by CMA off (it loses 17 % at 8-16 KiB,
    CMA from 8 KiB loses 60 % from 64 KiB: MPICH has no upper threshold)."""
    sizes = [4 * KiB, 8 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB]
    lat = {n: (0.8 if n < 8 * KiB else 1.5) for n in sizes}
    bw = {n: (0.8 if n < 8 * KiB else 1.2 if n < 64 * KiB else 0.4) for n in sizes}
    adv, v = _check(_library() + [split_evidence(lat, bw)])
    split = [f.message for f in adv.findings if f.id == "cma-traffic-split"]
    assert split, [f.id for f in adv.findings]
    assert "latency-bound" in split[0] and "bandwidth-bound" in split[0]
    assert "threshold 8 KiB" in split[0] and "64 KiB: CMA latency x1.5" in split[0]
    assert "bandwidth x0.4" in split[0]
    assert v["traffic_winner_bytes:latency-bound"] == 8 * KiB
    assert v["traffic_winner_bytes:bandwidth-bound"] == -1 and "CMA off" in split[0]


def test_unstable_decision_has_low_confidence_and_says_it_flips():
    d = minimax.decide([paired_from_evidence(paired_evidence(CLEAN))], 8 * KiB)
    rec = story.DecisionRecord(dataclasses.replace(d, stability=0.6))
    assert rec.confidence == "low" and "flips on noise" in rec.rationale(
        evidence.library_of(_library(), FACTS_5))
    assert "cma-advice-unstable" in {f.id for f in rec.findings([])}
    assert "stability 0.60" in rec.title()


def test_default_not_measured_as_itself_lowers_confidence():
    """Issue 25 item 8, constructed: the same paired evidence, once with the library's own
    defaults (mpivars) and once with defaults the probe could not read (built-in table) or a
    Cray default mode it does not switch (XPMEM): the second advice says so and is less sure."""
    ev = paired_evidence(CLEAN)
    adv_ok, v_ok = _check(_library() + [ev])
    sib = [e for e in _library() if e.id == evidence.SIBLING]
    adv_tab, v_tab = _check(sib + [ev])  # no cma-library record: the knob table stands in
    conf = {a: [r.confidence for r in x.recommendations if r.id == "cma-threshold"][0]
            for a, x in (("ok", adv_ok), ("table", adv_tab))}
    assert conf["ok"] == "high" and conf["table"] == "medium"
    assert v_ok["default_measured"] is True and v_tab["default_measured"] is False
    found = [f for f in adv_tab.findings if f.id == "cma-default-not-measured"]
    assert found and "not measured as itself" in found[0].message
    assert "not measured as itself" in [r.rationale for r in adv_tab.recommendations][0]
    cray = evidence.Library("mpich", "cray", "8.1.28", None, 8192, "mpivars", "XPMEM")
    ok, why = story.default_measured(cray)
    assert not ok and "XPMEM" in why
    d = minimax.decide([paired_from_evidence(ev)], None)
    assert story.DecisionRecord(d, default_ok=False, default_note=why).confidence == "medium"
    assert story.DecisionRecord(d).confidence == "high"


def test_the_checker_catches_the_observed_contradictions():
    """The two texts of issue 25 side by side, as the old generator wrote them."""
    from advisor.models import Advice, Finding, Recommendation
    adv = Advice(recommendations=[Recommendation(
        id="cma-threshold", title="Keep the default CMA threshold 8192 bytes", confidence="high",
        rationale="threshold 16 KiB has the best worst ratio, but the default is within noise "
                  "of it")], findings=[Finding(id="cma-regret-left", severity="warning",
                                               message="no threshold fixes that")])
    got = contradictions(adv, {"kept_default": False, "advice_threshold_bytes": 8192,
                               "best_threshold_bytes": 16384, "confidence": "high"})
    assert len(got) >= 3


@pytest.mark.parametrize("truth", [CLEAN, NEAR_DEFAULT])
def test_a_one_state_tie_is_not_called_a_tie_within_noise(truth):
    """Every launch met one copy state: every candidate ties by rule.  The texts say so, once,
    whether the measured best is the default (seen on the 2-core VM: the rationale listed CMA
    off at 0.27 "within noise" of the default's 0.76) or another threshold."""
    ev = paired_evidence(truth, noise=0.02)
    ev = ev.model_copy(update={"values": {**ev.values, "machine_states": "one"}})
    adv, v = _check(_library() + [ev])
    assert v["one_state"] is True and v["kept_default"] is True
    rat = [r.rationale for r in adv.recommendations if r.id == "cma-threshold"][0]
    assert "within noise of the best worst ratio" not in rat
    assert ("counts as tied, by rule" in rat) != ("every candidate ties" in rat)


def test_a_withheld_unstable_change_keeps_the_default_and_says_why():
    """A change the rule chose but too few resamples keep (``minimax.Decision.withheld``):
    the title keeps the default and names the change and its share, the rationale says why,
    no text says the default is the best or within noise, and the record says so too."""
    from test_cma_launches import STATE_A, STATE_D, _launch, _paired

    d = minimax.decide([_paired(_launch(STATE_A), _launch(STATE_D), _launch(STATE_D))], 8 * KiB)
    rec = story.DecisionRecord(d)
    lib = evidence.library_of(_library(), FACTS_5)
    assert rec.kept_default and rec.kept_why == "unstable"
    title, why = rec.title(), rec.rationale(lib)
    assert title.startswith("Keep the default CMA threshold 8192 bytes: threshold 16 KiB was "
                            "chosen, but only ")
    assert "of resamples change the default (stability" in title
    assert "is not advised, so the default stays" in why and "It replaces" not in why
    texts = [title, why] + [f.message for f in rec.findings([])]
    assert not any("within noise of it" in t or "loses least" in t for t in texts)
    if len(d.tie) > 1:
        assert "the rule's choice is its member nearest" in why
    v = rec.as_values()
    assert v["kept_default"] is True and v["kept_why"] == "unstable"
    assert v["withheld_threshold_bytes"] == 16 * KiB
