"""Artefacts on the CMA sweep recorded with MPICH 5.0.2 on the build machine touch the advice
drawn from it (issue 25, item 9); a threshold ``mpivars`` reports below a page is not used."""

from __future__ import annotations

from cma_support import load_evidence
from support import evidence_with

from advisor.measure import ARTEFACT_LOWERED, ARTEFACT_WITHDRAWN
from advisor.models import Evidence, Facts
from advisor_mpich_cma.evidence import LIBRARY, SWEEP
from advisor_mpich_cma import knobs
from advisor_mpich_cma import recommend

FACTS_5 = Facts.model_validate({"mpi": {"implementation": "mpich", "flavour": "upstream",
                                        "version": "5.0.2"},
                                "memory": {"page_size_bytes": 4096, "total_bytes": 8 << 30}})


def _ids(items):
    return {x.id: x for x in items}


def _bw_medians(evidence):
    sweep = Evidence.find(evidence, SWEEP)
    return sorted(p.median() for s in sweep.series if s.unit == "bytes/s" for p in s.points
                  if p.median())


def test_recorded_sweep_advice_without_artefacts():
    adv = recommend.recommend(load_evidence("sweep-5.0.2"), FACTS_5)
    rec = _ids(adv.recommendations)["cma-threshold"]
    assert rec.confidence in ("medium", "high")
    assert not {ARTEFACT_LOWERED, ARTEFACT_WITHDRAWN} & set(_ids(adv.findings))


def test_points_above_a_recorded_ceiling_leave_no_high_confidence_advice():
    ev = load_evidence("sweep-5.0.2")
    meds = _bw_medians(ev)
    # a ceiling under which only the fastest launches' bandwidth lies more than 3x above
    ceiling = meds[-1] / 3.05
    assert 0 < sum(m > 3 * ceiling for m in meds) < len(meds) // 4
    adv = recommend.recommend(evidence_with(ev, SWEEP,
                                            values={"ceiling_peak_bytes_per_s": ceiling}), FACTS_5)
    assert not any(r.confidence == "high" for r in adv.recommendations
                   if SWEEP in r.evidence)
    f = _ids(adv.findings)
    assert ARTEFACT_LOWERED in f or ARTEFACT_WITHDRAWN in f
    for r in adv.recommendations:
        if SWEEP in r.evidence:
            assert r.confidence == "low" and r.id in f[ARTEFACT_LOWERED].message


def test_every_bandwidth_point_an_artefact_withdraws_the_advice():
    ev = load_evidence("sweep-5.0.2")
    adv = recommend.recommend(evidence_with(ev, SWEEP,
                                            values={"copy_ceiling_bytes_per_s": 1.0}), FACTS_5)
    assert not [r for r in adv.recommendations if SWEEP in r.evidence]
    w = _ids(adv.findings)[ARTEFACT_WITHDRAWN]
    assert w.message.startswith("no CMA threshold advice") and "above the copy ceiling" in w.message


def test_mpivars_threshold_below_a_page_is_flagged_and_not_used():
    ev = load_evidence("sweep-5.0.2")
    lib = Evidence.find(ev, LIBRARY)
    assert lib is not None and lib.values.get("threshold_default_bytes") == 8192
    odd = lib.model_copy(update={"values": {**lib.values, "threshold_default_bytes": 8}})
    adv = recommend.recommend([odd if e.id == LIBRARY else e for e in ev], FACTS_5)
    f = _ids(adv.findings)["cma-library-threshold-implausible"]
    assert "below one 4096 B page" in f.message and "8192" in f.message
    defaults = {s.default for r in adv.recommendations for s in r.settings
                if s.name == knobs.CMA_THRESHOLD}
    assert 8 not in defaults and defaults <= {8192}
