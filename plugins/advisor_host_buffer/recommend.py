"""The pure ``recommend(evidence, facts) -> Advice`` of the host-buffer probe.

No I/O, no clock, no environment: every figure in a message comes from ``evidence`` (measured
here or recorded elsewhere) and every decision from ``facts``.  Advice is given only where it was
measured to help (the glibc tunables, the huge-page host pool); hygiene findings carry the measured
inflation.  See :mod:`advisor_host_buffer.evidence` for the evidence vocabulary.

The rules live one topic a module, run here in this order (the order of the findings):
:mod:`advisor_host_buffer.recommend_zero_page`, :mod:`advisor_host_buffer.aliasing`,
:mod:`advisor_host_buffer.recommend_touch` (placement, first touch; NUMA last),
:mod:`advisor_host_buffer.recommend_thp` and :mod:`advisor_host_buffer.recommend_nt`.
"""

from __future__ import annotations

from typing import Sequence

from advisor.measure import relabel_all, veto
from advisor.models import Advice, Evidence, Facts, Finding, Recommendation

from . import aliasing
from . import recommend_nt, recommend_thp, recommend_touch, recommend_zero_page


def _noise_floor(evidence: Sequence[Evidence], default: float) -> float:
    for ev in evidence:
        v = ev.values.get("noise_floor")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return default


def recommend(evidence: Sequence[Evidence], facts: Facts, *, noise_floor: float = 0.0) -> Advice:
    """Findings and recommendations from host-buffer evidence.

    :param evidence: ``Applicability.evidence + measure(ctx)`` or recorded evidence.
    :param facts: machine facts (THP mode, NUMA nodes, glibc version are read).
    :param noise_floor: relative difference (fraction) below which two medians are the same,
        used when the evidence carries no measured ``noise_floor`` value (the A/A floor from
        ``advisor.measure.noise_floor_from_aa``); 0.0 lets the confidence intervals decide.
    :return: ``Advice``; never raises on missing evidence (it simply gives less advice).
    """
    # labels re-derived from what each record holds, artefact points without a bandwidth
    ev = relabel_all(evidence)
    nf = _noise_floor(ev, noise_floor)
    findings: list[Finding] = []
    recs: list[Recommendation] = []

    recommend_zero_page.zero_page(ev, findings)
    findings += aliasing.findings(ev)
    recommend_touch.placement_and_touch(ev, findings, nf)
    recommend_touch.first_use(ev, findings, nf)
    recommend_thp.thp(ev, facts, findings, recs)
    recommend_nt.nt_cache_size(ev, facts, findings)
    recommend_nt.sweep(ev, facts, findings, recs, nf)
    recommend_touch.numa(ev, facts, findings)
    # an artefact in a record withdraws or lowers the advice drawn from it (harness veto)
    return veto(Advice(recommendations=recs, findings=findings), ev)

