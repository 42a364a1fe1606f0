"""The runner stores artefact points without a bandwidth and vetoes the advice drawn from them,
whatever the plugin does (a probe that labels a point but keeps its samples, and gives
high-confidence advice from that record)."""

from __future__ import annotations

from advisor.measure import ARTEFACT_LOWERED, ARTEFACT_WITHDRAWN, summarize
from advisor.models import (Advice, Conditions, Evidence, Facts, Point, Recommendation, Series,
                            Setting)
from advisor.probe import Applicability
from advisor.runner import rerecommend, run_probes


def _point(x, bw, artefact=None):
    s = [bw * (1 + 0.001 * i) for i in range(10)]
    return Point(x=float(x), label="copy", samples=s, warmup=[bw / 10], stats=summarize(s),
                 artefact=artefact)


class CarelessProbe:
    """Labels one point an artefact but keeps its samples; advises from the record at high."""

    name = "careless"
    description = "a third-party probe that keeps artefact samples"

    def __init__(self, notes=None):
        self.notes = notes or {}

    def check(self, facts):
        return Applicability(usable=True)

    def measure(self, ctx):
        pts = [_point(1 << 20, 10e9), _point(1 << 22, 9e9),
               _point(1 << 24, 900e9, artefact="artefact: above the copy ceiling")]
        return [Evidence(id="copy-sweep", series=[Series(name="copy", unit="bytes/s",
                                                         points=pts)],
                         conditions=Conditions(notes=self.notes))]

    def recommend(self, evidence, facts):
        return Advice(recommendations=[Recommendation(
            id="tuned", title="a tuned copy", rationale="measured", confidence="high",
            evidence=["copy-sweep"],
            settings=[Setting(library="glibc", name="GLIBC_TUNABLES", value="a=1")])])


def _run(probe):
    return run_probes({probe.name: probe}, {probe.name: "third-party"}, Facts(),
                      time_budget_s=30.0).results[0]


def test_stored_artefact_point_has_no_bandwidth_and_the_advice_is_lowered():
    res = _run(CarelessProbe())
    pts = res.evidence[0].series[0].points
    bad = [p for p in pts if p.artefact]
    assert len(bad) == 1 and bad[0].samples == [] and bad[0].warmup == []
    assert bad[0].stats is None and bad[0].median() is None
    (rec,) = res.recommendations
    assert rec.confidence == "low"
    assert any(f.id == ARTEFACT_LOWERED and "tuned" in f.message for f in res.findings)


def test_an_aliasing_placement_withdraws_the_advice_in_the_runner():
    res = _run(CarelessProbe({"placement_near_power_of_two": True}))
    assert res.recommendations == []
    (f,) = [f for f in res.findings if f.id == ARTEFACT_WITHDRAWN]
    assert "GLIBC_TUNABLES=a=1" in f.message


def test_rerecommend_says_why_advice_is_gone():
    from advisor.models import PluginResult, Profile, Provenance

    res = _run(CarelessProbe())
    ev = [res.evidence[0].model_copy(update={"conditions": Conditions(
        notes={"dst_fill": "untouched"})})]
    # a falling curve into an untouched destination: the first touch label withdraws it
    prof = Profile(provenance=Provenance(advisor_version="0", command="t", created="now"),
                   fingerprint="0" * 16, facts=Facts(), results=[PluginResult(
                       plugin="third-party", probe="careless", status="ok", evidence=ev)])
    again = rerecommend(prof, {"careless": CarelessProbe()}).results[0]
    assert again.recommendations == []
    assert [f.id for f in again.findings] == [ARTEFACT_WITHDRAWN]
