"""Figures of the openmpi probe (``figures`` hook of issue 17): pure, no I/O, no drawing.

* ``latency`` and ``bandwidth`` (from ``ompi-paths``): one-way ping-pong latency (s) and
  ``osu_bw``-style streaming bandwidth (bytes/s) against message size (bytes), log-log, one
  curve per candidate path (the site's default selection, ob1 + sm without single copy, the
  UCX PML, ...), each point the median of that size's samples pooled over the interleaved
  launches, with its 95 % bootstrap CI (``advisor.measure.pooled.series_pooled``).  Markers:
  the sm BTL's eager limit (default and advised, where the limit stage ran on an ob1 path) and
  the size from which UCX switches to rendezvous (read from UCX's own protocol table,
  ``ompi-selection.ucx``).  Notes: each path's worst regret (``advisor_openmpi.decide``, the
  same scoring the advice uses).
* ``regret`` (from ``ompi-paths``): each path's regret per size, the best path per size and
  any trade-off of the advice (``advisor_openmpi.figures_regret``).
* ``limits-latency`` and ``limits-bandwidth`` (from ``ompi-limits``): the chosen path at its
  default limit and at each variant measured.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from advisor.measure.pooled import series_pooled
from advisor.models import Evidence, Facts, Series
from advisor.specs.figures import FigureMarker, FigureSpec

from advisor_openmpi import knobs
from advisor_openmpi.decide import decide
from advisor_openmpi.evidence import BW, LAT, LIMITS, PATHS, SELECTION, SELECTION_UCX, configs_of
from advisor_openmpi.figures_regret import regret_figure
from advisor_openmpi.recommend import recommend

_METRICS = ((LAT, "s", "latency", "One-way ping-pong latency (osu_latency's definition)"),
            (BW, "bytes/s", "bandwidth", "Streaming bandwidth (osu_bw-style window)"))
_RANGE = re.compile(r"^ucx_proto:([0-9]+)\.\.")


def ucx_rendezvous_from(evidence: Sequence[Evidence]) -> Optional[int]:
    """The smallest message size (bytes) UCX sends by rendezvous on the ucx path, from UCX's
    protocol table (``ucx_proto:<lo>..<hi>`` values of ``ompi-selection.ucx``), or None."""
    ev = Evidence.find(list(evidence), SELECTION_UCX)
    if ev is None:
        return None
    starts = [int(m.group(1)) for k, v in ev.values.items()
              if (m := _RANGE.match(k)) and "rendezvous" in str(v)]
    return min(starts) if starts else None


def _advised_limit(evidence: Sequence[Evidence], facts: Facts) -> Optional[int]:
    for rec in recommend(evidence, facts).recommendations:
        if rec.id == "ompi-eager-limit":
            for s in rec.settings:
                if not s.is_default and isinstance(s.value, int):
                    return int(s.value)
    return None


def _how(ev: Evidence) -> str:
    pts = [p for s in ev.series for p in s.points if p.samples]
    runs = len({p.label for p in pts if p.label})
    n = sorted(len(p.samples) for p in pts)
    w = sorted(len(p.warmup) for p in pts)
    span = (f"; {_range(n)} timed iterations per launch and size after {_range(w)} "
            "warm-up iteration(s), left out") if pts else ""
    return (f"2 ranks on one node, {runs} interleaved launch(es) per configuration (one "
            f"configuration per launch, the order alternating){span}")


def _keep_reason(d) -> str:
    """Why the default path stays, in one short clause (``decide`` says it at length)."""
    if d.best == d.baseline:
        return "it has the smallest worst regret"
    losses = d.losses(d.best)
    if losses:
        more = f" and {len(losses) - 1} more" if len(losses) > 1 else ""
        return (f"{d.best} has a smaller worst regret but is worse beyond noise at "
                f"{losses[0].text()}{more}")
    return f"{d.best} has a smaller worst regret but beats it beyond noise nowhere"


def _range(values: list[int]) -> str:
    return f"{values[0]}" if values[0] == values[-1] else f"{values[0]}-{values[-1]}"


def _path_label(cfg: str, default_path: Optional[str]) -> str:
    return f"default ({default_path})" if cfg == "default" and default_path else cfg


def _curves(ev: Evidence, prefix: str, title: str, what: str, roles: dict[str, str],
            labels: dict[str, str], markers: list[FigureMarker],
            notes: list[str]) -> list[FigureSpec]:
    out = []
    for metric, unit, ylabel, desc in _METRICS:
        series = []
        for cfg in configs_of(ev):
            s: Optional[Series] = ev.series_named(f"{metric}:{cfg}")
            if s is None:
                continue
            fs = series_pooled(labels.get(cfg, cfg), s.points, evidence=ev.id, series=s.name,
                               role=roles.get(cfg, "measured"))
            if fs.x:
                series.append(fs)
        if not series:
            continue
        out.append(FigureSpec(
            id=f"{prefix}{ylabel}", title=f"{title}: {ylabel}",
            caption=(f"{desc} against message size, {what}. {_how(ev)}. Line: median of the "
                     "pooled samples at each size; band: 95 % bootstrap CI of that median."),
            x_label="message size", x_unit="bytes", y_label=ylabel, y_unit=unit,
            x_scale="log", y_scale="log", series=series, markers=markers, notes=notes))
    return out


def figures(evidence: Sequence[Evidence], facts: Facts) -> list[FigureSpec]:
    """The probe's figure specs (module docstring); empty without ``ompi-paths``."""
    evidence = list(evidence)
    out: list[FigureSpec] = []
    paths = Evidence.find(evidence, PATHS)
    limits = Evidence.find(evidence, LIMITS)
    sel = Evidence.find(evidence, SELECTION)
    default_path = str(sel.values.get("path")) if sel and sel.values.get("path") else None
    markers: list[FigureMarker] = []
    ob1_limits = limits is not None and limits.values.get("variable") in (knobs.SM_EAGER,
                                                                         knobs.VADER_EAGER)
    if ob1_limits:
        default = limits.values.get("default_bytes")
        if default:
            markers.append(FigureMarker(axis="x", value=float(default), role="default",
                                        label=f"default {limits.values['variable']}"))
        advised = _advised_limit(evidence, facts)
        if advised is not None:
            markers.append(FigureMarker(axis="x", value=float(advised), role="advised",
                                        label=f"advised {limits.values['variable']}"))
    rndv = ucx_rendezvous_from(evidence)
    ucx = []
    if rndv is not None:
        ucx.append(FigureMarker(axis="x", value=float(rndv), role="note",
                                    label="ucx path: UCX's rendezvous from"))
    if paths is not None:
        d = decide(paths)
        roles = {"default": "default"}
        notes = []
        if d is not None:
            if d.advice != d.baseline:
                roles[d.advice] = "advised"
            notes = [f"worst regret of {_path_label(c, default_path)}: {100 * (1 - w):.3g} %"
                     for c, w in d.worst.items()]
            notes.append(f"advice: {d.advice}" if d.advice != d.baseline else
                         f"advice: keep the default path ({_keep_reason(d)})")
        labels = {"default": _path_label("default", default_path)}
        out += _curves(paths, "", "Open MPI paths", "one curve per path the site can choose "
                       "(MCA settings of each in the evidence's conditions)", roles, labels,
                       markers + ucx, notes)
        reg = regret_figure(paths, d, labels) if d is not None else None
        out += [reg] if reg is not None else []
    if limits is not None:
        base = str(limits.values.get("path", "default"))
        d = decide(limits, baseline=base)
        roles = {base: "default"}
        if d is not None and d.advice != base:
            roles[d.advice] = "advised"
        # "default@OMPI_MCA_btl_sm_eager_limit=16384" -> "OMPI_MCA_btl_sm_eager_limit=16384"
        labels = {c: (c.split("@", 1)[1] if "@" in c else f"{c}: default limit")
                  for c in configs_of(limits)}
        out += _curves(limits, "limits-", "Eager/rendezvous limit on the chosen path",
                       f"the chosen path ({base}) at its default "
                       f"{limits.values.get('variable', 'limit')} and at each variant measured",
                       roles, labels, markers if ob1_limits else [], [])
    return out
