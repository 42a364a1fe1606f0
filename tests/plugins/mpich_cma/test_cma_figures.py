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
from support import SHIPPED_PROFILE


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
    assert {m.role for m in figs["regret"].markers} == {"default", "advised"}


def test_regret_curves_are_the_decisions_scores(shipped):
    _, res, figs = shipped
    ev = next(e for e in res.evidence if e.id == "cma-sweep")
    d = minimax.decide([paired_from_evidence(ev)], 8192)
    by_role = {s.role: s for s in figs["regret"].series if s.role in ("default", "advised")}
    for role, per_size in (("default", d.per_size_default), ("advised", d.per_size_advice)):
        s = by_role[role]
        assert s.y == pytest.approx([100 * (1 - per_size[("", int(x))]) for x in s.x])
    every = next(s for s in figs["regret"].series if s.label == "CMA at every size")
    # forcing CMA at 1 KiB loses: the recorded off/on ratios there say so
    assert every.y[0] > 0


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
