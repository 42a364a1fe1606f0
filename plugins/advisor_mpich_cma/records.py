"""What the paired measurement (``advisor_mpich_cma.paired``) records: the ``cma-paired``
evidence of one buffer kind and rank pair (one point per size and launch, one value per round,
index-aligned between CMA on and off; the machine state of the copy path as a condition) and the
``cma-decision`` evidence (the minimax-regret decision's figures over every buffer kind and per
kind, computed by the same pure function ``recommend`` uses).  Layout:
``advisor_mpich_cma.evidence``.
"""

from __future__ import annotations

from advisor.models import Evidence, Point, Series
from advisor.probe import MeasureContext

from advisor_mpich_cma.decision import kind_values, record_of
from advisor_mpich_cma.evidence import (BW, DECISION, LAT, OFF, ON, library_of, paired_id,
                                        sane_library, usable_kinds)


def paired_evidence(pair, cpus, launches: dict[str, dict], env, ctx: MeasureContext,
                     rounds: int, kind: str = "base", refined=()) -> Evidence:
    """``cma-paired`` evidence of one kind and rank pair from ``launches`` (launch label ->
    the worker's paired result): one point per size and launch."""
    from advisor.measure import conditions

    series: dict[str, list[Point]] = {}
    for label, res in launches.items():
        for srow in res["sizes"]:
            n = int(srow["bytes"])
            for metric, key in ((LAT, "lat"), (BW, "bw")):
                unit_key = "s" if metric == LAT else "Bps"
                for cfg, name in (("on", ON), ("off", OFF)):
                    series.setdefault(f"{metric}:{name}", []).append(Point(
                        x=n, label=label, samples=list(srow[f"{key}_{cfg}_{unit_key}"])))
    for pts in series.values():
        pts.sort(key=lambda pt: (pt.x, pt.label))
    res = next(iter(launches.values()))
    by_size: dict[int, list[float]] = {}
    for r in launches.values():
        for srow in r["sizes"]:
            by_size.setdefault(int(srow["bytes"]), []).extend(srow.get("bw_off_Bps") or [])
    sers = [Series(name=name, unit="s" if name.startswith(LAT) else "bytes/s",
                   x_name="message size", x_unit="bytes", points=pts)
            for name, pts in sorted(series.items())]
    buffer = res.get("buffer") or {}
    cond_fields = {k: v for k, v in buffer.items() if k in (
        "buffer_kind", "buffer_fill", "hugepages", "align_bytes")}
    thr = res.get("thresholds") or {}
    # the fast/slow machine state, a condition (the per-pair ratios cancel it): per size, the
    # CMA-off bandwidth of every round (background.md §4 defines the state on the copy path)
    from advisor_mpich_cma.states import state_of_paired

    state_values, state_notes = state_of_paired(sorted(by_size.items()))
    cond = conditions(launcher=list(ctx.launcher) if ctx.launcher else None,
                      notes={"pair": pair or "default", "cpus": cpus or "unbound",
                             "configs": f"launches with CMA enabled; MPI_T threshold "
                                        f"{thr.get('on')} (cma-on) / {thr.get('off')} (cma-off)",
                             **{k: v for k, v in env.items() if v is not None},
                             **({"dst_fill": res["dst_fill"]} if res.get("dst_fill") else {}),
                             **state_notes, "buffer_pages": kind},
                      **cond_fields)
    per_rank = [v for v in (res.get("thp_backed_bytes_per_rank") or []) if v is not None]
    kind_values = {"buffer_pages": kind, "buffer_bytes": int(res.get("buffer_bytes", 0)),
                   "refine.steps": len(refined),
                   "refine.sizes": ",".join(str(int(m)) for m in refined)}
    if per_rank:
        kind_values["thp_backed_bytes_min_rank"] = int(min(per_rank))
    return Evidence(
        id=paired_id(pair, kind),
        description="CMA on vs off switched through MPI_T between adjacent batches inside "
                    "each launch: one point per size and launch (label launch<i>), one value "
                    "per round (one-way ping-pong seconds, osu_bw-style bytes/s), "
                    "index-aligned between the configurations",
        series=sers, conditions=cond,
        values={"paired": True, "rounds": int(res.get("rounds", rounds)),
                "launches": len(launches), "sizes": len(by_size), "mpit_library": str(res.get("mpit_library", "")),
                "threshold_initial_bytes": int(res.get("threshold_initial", -1)),
                "quick": bool(ctx.quick), **state_values, **kind_values})


def decision_evidence(paired: list[Evidence], ctx: MeasureContext) -> list[Evidence]:
    """The ``cma-decision`` evidence: the minimax-regret decision's figures (regret of the
    default and of the advice, per-size ratios, stability), computed by the same pure function
    ``recommend`` uses, so the profile records them."""
    evs = list(ctx.applicability.evidence) if ctx.applicability else []
    lib, bad_thr = sane_library(library_of(evs, ctx.facts), ctx.facts)  # as recommend reads it
    used, _ = usable_kinds(paired)
    rec = record_of(used, lib, bad_thr)  # the same record recommend's texts are drawn from
    if rec is None:
        return []
    values = {**rec.as_values(), **kind_values(used, lib)}
    # how the sequential measurement ended (``run_paired``): launches taken, why it stopped
    seq = next((e.values for e in paired if "stopped" in e.values), {})
    values.update({k: seq[k] for k in ("stopped", "stability_by_launch", "machine_states",
                                       "machine_states_by_launch") if k in seq})
    return [Evidence(id=DECISION, description="minimax-regret decision on the paired "
                     "evidence of every buffer kind together: ratios are performance over the "
                     "per-size best of CMA on/off (1 = best), regret = 1 - worst ratio; "
                     "thresholds in bytes, -1 = CMA off; advice_threshold_bytes:<kind> is the "
                     "decision on one kind alone", values=values)]
