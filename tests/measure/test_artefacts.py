"""Artefacts in recorded evidence (constructed data, pure): labels re-derived from the record,
artefact points stored without a bandwidth, the veto on the advice drawn from such evidence,
and the sanity bounds of a library-reported threshold."""

from __future__ import annotations

import numpy as np

from advisor.measure import (ARTEFACT_LOWERED, ARTEFACT_WITHDRAWN, artefact_point, flags,
                             implausible_threshold, relabel, summarize, veto, withheld)
from advisor.models import Advice, Conditions, Evidence, Point, Recommendation, Series, Setting

MiB = 1 << 20


def _pt(x, median, label=None, n=20, seed=0, artefact=None):
    rng = np.random.default_rng(seed)
    s = list(median * (1 + 0.01 * rng.standard_normal(n)))
    return Point(x=float(x), label=label, samples=s, warmup=[median * 3], stats=summarize(s),
                 artefact=artefact)


def _sweep(notes=None, values=None, medians=((1, 12e9), (4, 9e9), (16, 6e9), (64, 4e9)),
           fill=None, ev_id="sweep"):
    pts = [_pt(m * MiB, bw, label="default", seed=i) for i, (m, bw) in enumerate(medians)]
    return Evidence(id=ev_id, series=[Series(name="default", unit="bytes/s", x_name="nbytes",
                                             x_unit="bytes", points=pts)],
                    conditions=Conditions(notes=notes or {}, buffer_fill=fill),
                    values=values or {})


def _no_bandwidth(p: Point) -> bool:
    return p.samples == [] and p.warmup == [] and p.stats is None and p.median() is None


def _rec(ev_ids, rid="tuned", confidence="high"):
    return Recommendation(id=rid, title="a tuned setting", rationale="measured", evidence=ev_ids,
                          confidence=confidence,
                          settings=[Setting(library="glibc", name="GLIBC_TUNABLES", value="x=1")])


def test_artefact_point_keeps_label_and_no_bandwidth():
    p = artefact_point(_pt(1, 30e9, label="untouched"), "artefact: zero page")
    assert p.artefact == "artefact: zero page" and p.label == "untouched" and p.x == 1.0
    assert _no_bandwidth(p)
    assert artefact_point(p) is p  # already stripped


def test_old_style_point_with_a_bandwidth_and_a_label_is_stripped():
    old = Evidence(id="z", series=[Series(name="copy", unit="bytes/s", points=[
        _pt(1, 30e9, label="untouched", artefact="zero-page artefact: never written"),
        _pt(1, 10e9, label="random")])])
    new = relabel(old)
    u, r = new.series[0].points
    assert u.artefact.startswith("zero-page") and _no_bandwidth(u)
    assert r == old.series[0].points[1]  # the physical point is untouched
    assert relabel(new) is new  # idempotent


def test_labels_re_derived_from_recorded_conditions():
    # a source recorded as untouched: every bandwidth point reads the zero page
    z = relabel(_sweep(fill="untouched"))
    assert all("zero page" in p.artefact and _no_bandwidth(p) for p in z.series[0].points)
    # a placement a power of two apart
    a = relabel(_sweep({"placement_near_power_of_two": True, "placement_distance_bytes": 1 << 26}))
    assert all("address aliasing" in p.artefact for p in a.series[0].points)
    ok = _sweep({"placement_near_power_of_two": False})
    assert relabel(ok) is ok
    # a falling curve into an untouched destination; the same into a touched one is kept
    t = relabel(_sweep({"dst_fill": "untouched"}))
    assert all("first touch" in p.artefact and _no_bandwidth(p) for p in t.series[0].points)
    touched = _sweep({"dst_fill": "random"})
    assert relabel(touched) is touched
    # above 3x the recorded copy ceiling (only that point)
    c = relabel(_sweep(values={"ceiling_bytes_per_s": 3e9}))
    labels = [p.artefact for p in c.series[0].points]
    assert labels[:2] != [None, None] and "ceiling" in labels[0] and labels[-1] is None


def test_other_units_are_not_judged_as_bandwidths():
    ev = Evidence(id="t", series=[Series(name="first-use", unit="s", points=[_pt(1, 0.2)])],
                  conditions=Conditions(buffer_fill="untouched"))
    assert relabel(ev) is ev


def test_artefact_flagged_sweep_yields_no_high_confidence_advice():
    advice = Advice(recommendations=[_rec(["sweep"]), _rec(["other"], rid="unrelated")])
    # some points above the ceiling: lowered to low, with a finding saying why
    part = _sweep(values={"ceiling_bytes_per_s": 3e9})
    got = veto(advice, [part])
    rec = {r.id: r for r in got.recommendations}
    assert rec["tuned"].confidence == "low" and rec["unrelated"].confidence == "high"
    (f,) = [f for f in got.findings if f.id == ARTEFACT_LOWERED]
    assert "tuned" in f.message and "above the copy ceiling" in f.message
    assert f.evidence == ["sweep"]
    # aliasing or first touch: withdrawn, the finding names the settings it would have set
    for notes in ({"placement_near_power_of_two": True}, {"dst_fill": "untouched"}):
        got = veto(advice, [_sweep(notes)])
        assert [r.id for r in got.recommendations] == ["unrelated"]
        (f,) = [f for f in got.findings if f.id == ARTEFACT_WITHDRAWN]
        assert "GLIBC_TUNABLES=x=1" in f.message and f.remedy
        assert veto(got, [_sweep(notes)]) == got  # idempotent
    # a family id (sweep.cross-numa) counts as the record the advice cites
    fam = veto(advice, [_sweep({"dst_fill": "untouched"}, ev_id="sweep.cross-numa")])
    assert [r.id for r in fam.recommendations] == ["unrelated"]
    # every point an artefact: withdrawn
    assert veto(advice, [_sweep(fill="untouched")]).recommendations[0].id == "unrelated"
    # nothing flagged: the advice itself
    clean = _sweep({"dst_fill": "random"})
    assert veto(advice, [clean]) is advice and flags([clean]) == []
    assert not any(r.confidence == "high" for r in veto(advice, [part]).recommendations
                   if r.id == "tuned")


def test_withheld_says_why_no_advice_is_derived():
    assert withheld([_sweep({"dst_fill": "random"})], "sweep", "threshold advice") is None
    f = withheld([_sweep({"placement_near_power_of_two": True}, ev_id="sweep.same-numa")],
                 "sweep", "threshold advice")
    assert f.id == ARTEFACT_WITHDRAWN and f.evidence == ["sweep.same-numa"]
    assert f.message.startswith("no threshold advice") and "address aliasing" in f.message
    # only lowering artefacts: the advice is derived (and then lowered by veto)
    assert withheld([_sweep(values={"ceiling_bytes_per_s": 3e9})], "sweep", "x") is None


def test_implausible_library_threshold():
    page, mem = 4096, 16 << 30
    assert implausible_threshold(8192, page_bytes=page, memory_bytes=mem) is None
    assert "below one 4096 B page" in implausible_threshold(16, page_bytes=page, memory_bytes=mem)
    assert "above" in implausible_threshold(1 << 40, page_bytes=page, memory_bytes=mem)
    assert "not a positive" in implausible_threshold(0, page_bytes=None, memory_bytes=None)
    assert "not a positive" in implausible_threshold("8k", page_bytes=page, memory_bytes=mem)
    assert implausible_threshold(16, page_bytes=None, memory_bytes=None) is None  # unknown page
