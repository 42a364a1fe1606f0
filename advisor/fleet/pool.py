"""Pooling a class's evidence and re-deriving its advice (one class profile per machine class).

How evidence is pooled, per probe, over the class's pooled nodes (``ok`` for that probe, not
flagged as outliers, at most :data:`POOL_NODES` of them, evenly spaced in name order):

* records are matched by evidence id, series by name, points by ``(x, label)``;
* a pooled point's samples are the nodes' samples concatenated in node order, then thinned
  (``measure.thinning.thin_evidence``: every k-th) to ``measure.thinning.MAX_SAMPLES_PER_POINT``,
  so every node contributes; warm-up samples the same way;
* each node's records are read through ``advisor.measure.relabel`` (artefact labels re-derived
  from what the node recorded, artefact points without samples), so a node's artefact point
  (not a physical measurement) adds no samples; the pooled point is an artefact only when
  every node's is;
* ``stats`` are recomputed on all pooled samples (n, median, mean, p5, p95, min, max; no CI:
  the samples of different nodes are not one run);
* ``values`` and ``conditions`` are the first pooled node's (they describe how it was measured:
  sizes, rounds, ceilings, which the nodes of one class share).

The advice is then the probe's own pure ``recommend(pooled evidence, facts)``, with the facts
of the first pooled node, through ``advisor.measure.veto`` (an artefact in the pooled evidence
withdraws or lowers the advice drawn from it); a probe not installed here keeps the first
node's result as recorded.

Public API: :func:`pool_evidence`, :func:`class_profile`, :data:`POOL_NODES`.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Evidence, Profile

__all__ = ["POOL_NODES", "pool_evidence", "class_profile"]

#: Nodes whose evidence a class pools: a pooled point keeps 48 samples
#: (``measure.thinning.MAX_SAMPLES_PER_POINT``), so more nodes add no samples, only reading time.
POOL_NODES = 48


def _stats(samples: list[float], n_taken: int):
    from advisor.models import Stats

    a = np.asarray(samples, dtype=float)
    p5, med, p95 = np.percentile(a, [5, 50, 95])
    return Stats(n=max(n_taken, a.size), median=float(med), mean=float(a.mean()), p5=float(p5),
                 p95=float(p95), min=float(a.min()), max=float(a.max()))


def pool_evidence(per_node: Sequence[Sequence["Evidence"]]) -> list["Evidence"]:
    """The pooled evidence of several nodes' records of one probe (see the module docstring)."""
    from advisor.measure.artefacts import relabel
    from advisor.models import Point
    from advisor.measure.thinning import thin_evidence

    order: list[str] = []
    groups: dict[str, list] = {}
    for evs in per_node:
        for e in map(relabel, evs):  # a node's artefact labels re-derived from its record
            if e.id not in groups:
                order.append(e.id)
                groups[e.id] = []
            groups[e.id].append(e)
    out = []
    for ev_id in order:
        evs = groups[ev_id]
        first = evs[0]
        series = []
        names = list(dict.fromkeys(s.name for e in evs for s in e.series))
        for name in names:
            ss = [s for e in evs for s in e.series if s.name == name]
            keys: dict[tuple, list] = {}
            for s in ss:
                for p in s.points:
                    keys.setdefault((p.x, p.label), []).append(p)
            points = []
            for (x, label), pts in keys.items():
                real = [p for p in pts if not p.artefact]
                if not real:
                    points.append(pts[0])
                    continue
                samples = [v for p in real for v in p.samples]
                warm = [v for p in real for v in p.warmup]
                taken = sum(p.stats.n if p.stats else len(p.samples) for p in real)
                stats = _stats(samples, taken) if samples else None
                points.append(Point(x=x, label=label, samples=samples, warmup=warm, stats=stats))
            series.append(ss[0].model_copy(update={"points": points}))
        pooled = first.model_copy(update={"series": series})
        out.append(thin_evidence(pooled))
    # warm-up samples are thinned like samples (thin_evidence keeps them whole)
    return [_thin_warmup(e) for e in out]


def _thin_warmup(e: "Evidence") -> "Evidence":
    from advisor.measure.thinning import MAX_SAMPLES_PER_POINT as limit

    if all(len(p.warmup) <= limit for s in e.series for p in s.points):
        return e
    return e.model_copy(update={"series": [s.model_copy(update={"points": [
        p.model_copy(update={"warmup": p.warmup[::-(-len(p.warmup) // limit)]})
        if len(p.warmup) > limit else p for p in s.points]}) for s in e.series]})


def class_profile(class_id: str, profiles: Sequence["Profile"], probes: Mapping[str, Any], *,
                  n_nodes: int, hostlist: str) -> "Profile":
    """The class profile of ``profiles`` (the pooled nodes, first one representative).

    ``n_nodes``: the class's node count (provenance); ``hostlist``: its nodes, compressed.
    ``recommend`` runs through ``advisor.steps.StepRunner.call`` (as in ``advisor probe``):
    one that raises, exits, returns the wrong type or overruns ``advisor.steps.GRACE_S`` on the
    pooled evidence gives a ``failed`` result whose reason is the step's error text.
    """
    from advisor import __version__
    from advisor.measure.artefacts import veto
    from advisor.models import Advice, PluginResult, Profile, Provenance
    from advisor.steps import StepRunner

    rep = profiles[0]
    results = []
    with StepRunner() as runner:
        for res in rep.results:
            oks = [r for p in profiles for r in p.results
                   if r.probe == res.probe and r.status == "ok"]
            probe = probes.get(res.probe)
            if not oks or probe is None:
                results.append(res)
                continue
            evidence = pool_evidence([r.evidence for r in oks])
            done = runner.call(lambda: probe.recommend(list(evidence), rep.facts),
                               step="recommend", owner=res.probe, expect=Advice)
            if not done.ok:
                results.append(PluginResult(plugin=res.plugin, probe=res.probe, status="failed",
                                            reason=f"{done.error} (on the pooled evidence)",
                                            evidence=evidence))
                continue
            advice = veto(done.value, evidence)
            results.append(PluginResult(
                plugin=oks[0].plugin, probe=res.probe, status="ok",
                duration_s=max(r.duration_s for r in oks), findings=advice.findings,
                recommendations=advice.recommendations, evidence=evidence))
    prov = Provenance(
        advisor_version=__version__,
        command=f"advisor fleet report: class profile of {n_nodes} nodes ({hostlist}), "
                f"evidence pooled from {len(profiles)}",
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        hostname=f"class {class_id}")
    return Profile(provenance=prov, fingerprint=rep.fingerprint, facts=rep.facts,
                   results=results)
