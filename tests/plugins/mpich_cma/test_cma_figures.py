"""mpich-cma figures (issue 17) against the evidence they are drawn from: the shipped profile's
recorded sweep (and the recorded 5.0.2 sweep of tests/data).

Plotted medians must equal the medians of the stored samples, CI bands the bootstrap CIs of
those samples (``advisor.measure.stats``), markers the library default and the advice stored in
the profile, and the regret curves the scores of the minimax decision itself.
"""

from __future__ import annotations

import numpy as np
import pytest

from advisor.measure.stats import bootstrap_median_ci
from advisor.models import Facts
from advisor.profile import load_profile
from advisor_mpich_cma import minimax
from advisor_mpich_cma.crossover import cma_better
from advisor_mpich_cma.pairs import paired_from_evidence
from advisor_mpich_cma.figures import crossover, figures
from advisor_mpich_cma.plugin import CmaProbe
from cma_support import load_evidence
from support import REPO, SHIPPED_PROFILE
from test_cma_minimax import FACTS_5, LOSES_SMALL_AND_LARGEST, KiB, MiB, _library, paired_evidence

PAIRED_PROFILE = REPO / "profiles" / "x86_64-icelake-2core-vm-2026-12-01.toml"


@pytest.fixture(scope="module")
def shipped():
    prof = load_profile(SHIPPED_PROFILE)
    res = next(r for r in prof.results if r.probe == "mpich-cma")
    return prof, res, {f.id: f for f in CmaProbe().figures(res.evidence, prof.facts)}


def _pooled(ev, name: str) -> dict[float, list[float]]:
    out: dict[float, list[float]] = {}
    for p in ev.series_named(name).points:
        if not p.artefact and p.samples:
            out.setdefault(p.x, []).extend(p.samples)
    return out


def test_shipped_profile_gives_latency_bandwidth_and_regret(shipped):
    _, _, figs = shipped
    assert set(figs) == {"latency", "bandwidth", "regret"}
    for f in ("latency", "bandwidth"):
        spec = figs[f]
        assert (spec.x_scale, spec.y_scale) == ("log", "log")
        assert [s.label for s in spec.series] == ["cma-on", "cma-off"]
        assert spec.x_unit == "bytes" and spec.y_unit == ("s" if f == "latency" else "bytes/s")
        # the caption says how it was measured, from the evidence
        assert "5 separate launch(es)" in spec.caption and "3 warm-up" in spec.caption
        assert "pageable random-filled buffers aligned to 4 KiB" in spec.caption


@pytest.mark.parametrize("metric", ["latency", "bandwidth"])
def test_plotted_medians_and_bands_are_the_stored_samples(shipped, metric):
    _, res, figs = shipped
    ev = next(e for e in res.evidence if e.id == "cma-sweep")
    for s in figs[metric].series:
        assert s.evidence == "cma-sweep" and s.series == f"{metric}:{s.label}"
        stored = _pooled(ev, s.series)
        assert s.x == sorted(stored) and len(s.x) == 18
        for x, y, lo, hi in zip(s.x, s.y, s.lo, s.hi):
            assert y == pytest.approx(float(np.median(stored[x])), rel=1e-12)
            assert (lo, hi) == pytest.approx(bootstrap_median_ci(stored[x]), rel=1e-12)
            assert lo <= y <= hi


def test_markers_are_the_default_the_stored_advice_and_the_crossover(shipped):
    prof, res, figs = shipped
    lib = next(e for e in res.evidence if e.id == "cma-library")
    rec = next(r for r in res.recommendations if r.id == "cma-threshold")
    advised = next(s.value for s in rec.settings if s.name.endswith("CMA_P2P_THRESHOLD"))
    marks = {m.role: m.value for m in figs["latency"].markers}
    assert marks["default"] == lib.values["threshold_default_bytes"] == 8192
    assert marks["advised"] == advised
    # the crossover: CMA off wins below it, on at and above it, on this evidence
    better = cma_better([paired_from_evidence(
        next(e for e in res.evidence if e.id == "cma-sweep"))])
    x = int(marks["crossover"])
    assert not better[max(n for n in better if n < x)]
    assert all(v for n, v in better.items() if n >= x)
    # the regret figure: the advice keeps the default, so one threshold marker says both, and no
    # worst-regret line (no regret beyond noise)
    assert [(m.axis, m.role, m.value, m.label) for m in figs["regret"].markers] == [
        ("x", "advised", 8192.0, "threshold: advice = default")]


def test_regret_curves_are_the_decisions_scores(shipped):
    _, res, figs = shipped
    ev = next(e for e in res.evidence if e.id == "cma-sweep")
    d = minimax.decide([paired_from_evidence(ev)], 8192)
    by_role = {s.role: s for s in figs["regret"].series if s.role in ("default", "advised")}
    for role, per_size in (("default", d.per_size_default), ("advised", d.per_size_advice)):
        s = by_role[role]
        assert s.y == pytest.approx([100 * (1 - per_size[("", int(x))]) for x in s.x])
    # the default as a ring, the advice as a dot inside it: both visible where they are equal
    assert (by_role["default"].marker, by_role["advised"].marker) == ("ring", "dot")
    # the grey reference: at each size the regret of the path that is not the best there
    scores = minimax.per_size_scores([paired_from_evidence(ev)], [0, None])
    other = next(s for s in figs["regret"].series if s.label == "the other path")
    assert other.y == pytest.approx([100 * (1 - min(scores[0][("", int(x))],
                                                    scores[None][("", int(x))]))
                                     for x in other.x])
    assert other.y[0] > 0  # forcing CMA at 1 KiB loses: the recorded off/on ratios say so


def test_regret_figure_names_the_best_path_and_no_trade_off(shipped):
    """Both shipped MPICH profiles: the copy path is best below 8 KiB, CMA from 8 KiB (the
    default threshold), so the default and the advice have no regret anywhere: said in a note,
    no diamond, no worst-regret line, no CI to shade."""
    _, _, figs = shipped
    spec = figs["regret"]
    assert [b.label for b in spec.bands] == ["best: CMA off", "best: CMA on"]
    assert spec.bands[0].low == 1024 and spec.bands[1].high == 16 * 1024 * 1024
    assert 6144 < spec.bands[0].high == spec.bands[1].low < 8192
    assert spec.notes == ["best: CMA off at 1-6 KiB, CMA on at 8 KiB-16 MiB",
                          "default = advice (8 KiB): regret 0 at every size",
                          "no trade-off: the advice is within noise of the best at every size"]
    assert not [s for s in spec.series if s.marker == "diamond"]
    assert all(s.lo is None for s in spec.series)


def test_paired_regret_equals_the_recorded_decision():
    """The 2026-12-01 profile's regret figure (paired, base and THP pages) plots the per-size
    ratios its ``cma-decision`` evidence stored: the worst over rank pairs and buffer kinds."""
    prof = load_profile(PAIRED_PROFILE)
    res = next(r for r in prof.results if r.probe == "mpich-cma")
    spec = {f.id: f for f in CmaProbe().figures(res.evidence, prof.facts)}["regret"]
    stored = next(e for e in res.evidence if e.id == "cma-decision").values
    for s, key in ((s, k) for s in spec.series for k in ("default", "advice")
                   if s.role == ("advised" if k == "advice" else k)):
        per = {}
        for k, v in stored.items():
            if k.startswith(f"ratio_{key}:"):
                n = int(k.rsplit(":", 1)[1])
                per[n] = min(per.get(n, 1.0), v)
        assert s.x == sorted(per) and s.evidence == "cma-paired,cma-paired.thp"
        assert s.y == pytest.approx([100 * (1 - per[int(x)]) for x in s.x])


def test_a_trade_off_is_shown_as_one():
    """Constructed: CMA loses at 4-16 KiB and at 16 MiB and wins 2x in between, so no threshold
    wins everywhere.  The advice's losses beyond noise are the decision's own ``losses`` (as
    diamonds), the worst regrets the minimax compares are horizontal lines, the best path
    flips back to the copy path at 16 MiB, and the note says it is a trade-off."""
    evs = _library() + [paired_evidence(LOSES_SMALL_AND_LARGEST)]
    spec = {f.id: f for f in figures(evs, FACTS_5)}["regret"]
    d = minimax.decide([paired_from_evidence(evs[-1])], 8 * KiB)
    diamonds = next(s for s in spec.series if s.marker == "diamond")
    assert diamonds.x == [float(n) for _, n, _, _ in d.losses] == [16.0 * MiB]
    assert diamonds.y == pytest.approx([100 * (1 - r) for _, _, r, _ in d.losses])
    ceilings = {m.role: m.value for m in spec.markers if m.axis == "y"}
    assert ceilings == pytest.approx({"default": 100 * d.regret_default,
                                      "advised": 100 * d.regret_advice})
    assert [b.label for b in spec.bands] == ["best: CMA off", "best: CMA on", "best: CMA off"]
    assert spec.notes[0] == ("best: CMA off at 4-16 KiB, CMA on at 64 KiB-1 MiB, CMA off at "
                             "16 MiB")
    assert spec.notes[1].startswith("advice (64 KiB): up to 15 % at 16 MiB")
    assert spec.notes[2] == "trade-off: no threshold is within noise of the best at every size"
    assert spec.notes[3].startswith("default (8 KiB): up to 20.1 % at 16 KiB")


def test_recorded_sweep_of_tests_data():
    evs = load_evidence("sweep-5.0.2")
    facts = Facts.model_validate({"mpi": {"implementation": "mpich", "flavour": "upstream",
                                          "version": "5.0.2"}})
    figs = {f.id: f for f in figures(evs, facts)}
    assert {"latency", "bandwidth", "regret"} <= set(figs)
    ev = next(e for e in evs if e.id == "cma-sweep")
    on = next(s for s in figs["bandwidth"].series if s.label == "cma-on")
    stored = _pooled(ev, "bandwidth:cma-on")
    assert on.y == pytest.approx([float(np.median(stored[x])) for x in on.x])
    assert crossover(ev) is None or crossover(ev) in stored


def test_no_sweep_no_figures():
    evs = [e for e in load_evidence("sweep-5.0.2") if not e.id.startswith("cma-sweep")]
    assert figures(evs, Facts()) == []
