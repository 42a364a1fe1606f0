"""Figures of the mpich-cma probe (``figures`` hook, issue 17): pure, no I/O, no drawing.

From the evidence that decides the threshold (the MPI_T paired measurements ``cma-paired*``
when present, else the separate-launch sweeps ``cma-sweep*``; ``advisor_mpich_cma.evidence``),
per evidence:

* ``latency`` and ``bandwidth``: one-way latency (s) and streaming bandwidth (bytes/s) against
  message size (bytes), log-log, one curve per candidate path (``cma-on``: CMA forced at every
  size, ``cma-off``), each point the median of that size's samples with its 95 % bootstrap CI
  (``advisor.measure.pooled.series_pooled``); vertical markers: the crossover (the smallest
  measured size from which CMA on is better at every larger size, ``crossover.cma_better``), the
  library's default threshold (``cma-library``) and the advised one (``recommend``).
* ``regret``: per message size, the regret (1 - performance over the per-size best of CMA
  on/off, the smaller of latency and bandwidth; ``minimax.per_size_bounds``, the scoring of the
  decision itself) of the default threshold and of the advice, in percent, with the best path
  per size, the noise (CI) and any trade-off (``advisor_mpich_cma.figures_regret``).

Further evidence of the same family (other rank pairs, THP-backed buffers) gets the same
figures with its id in the figure id (``latency-cma-paired-thp``).
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from advisor.measure.pooled import series_pooled
from advisor.models import Evidence, Facts
from advisor.specs.figures import FigureMarker, FigureSpec
from advisor.specs.units import format_bytes

from advisor_mpich_cma import knobs
from advisor_mpich_cma.crossover import cma_better
from advisor_mpich_cma.pairs import paired_from_evidence
from advisor_mpich_cma.decision import default_candidate
from advisor_mpich_cma.evidence import (BW, KIND_NAMES, LAT, OFF, ON, buffer_pages, library_of,
                                        paired, sweeps, usable_kinds)
from advisor_mpich_cma.recommend import recommend
from advisor_mpich_cma.figures_regret import regret_figure

def deciding_evidence(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The evidence the threshold is decided from: the usable paired measurements when any
    (``usable_kinds``), else the separate-launch sweeps (as ``recommend`` does)."""
    used, _ = usable_kinds(paired(evidence))
    return used or sweeps(evidence)


def advised_threshold(evidence: Sequence[Evidence], facts: Facts) -> tuple[bool, Optional[int]]:
    """``(advised?, threshold in bytes or None for CMA off)`` from this plugin's own
    ``recommend`` (pure): ``cma-threshold`` gives its threshold setting, ``cma-disable`` CMA off;
    ``(False, None)`` when there is no CMA advice."""
    for rec in recommend(evidence, facts).recommendations:
        if rec.id == "cma-disable":
            return True, None
        if rec.id == "cma-threshold":
            for s in rec.settings:
                if s.name in (knobs.CMA_THRESHOLD, knobs.CRAY_SIZE):
                    return True, int(s.value)
    return False, None


def crossover(ev: Evidence) -> Optional[int]:
    """The smallest measured size (bytes) from which CMA on is better than off at every larger
    measured size (``crossover.cma_better`` on this evidence alone), when CMA is worse at some
    smaller size; None when there is no such change (better everywhere, or nowhere)."""
    better = cma_better([paired_from_evidence(ev)])
    sizes = sorted(better)
    for i, n in enumerate(sizes):
        if all(better[m] for m in sizes[i:]):
            return n if i > 0 else None
    return None


def _slug(ev_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", ev_id.lower()).strip("-")


def _range(values: list[int]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def how_measured(ev: Evidence) -> str:
    """One sentence from the evidence's conditions and points: launches or paired rounds, timed
    and warm-up iterations, buffer kind, fill, alignment, THP mode."""
    pts = [p for s in ev.series for p in s.points if p.samples or p.stats]
    parts = []
    if ev.values.get("paired"):
        parts.append(f"CMA on and off switched through MPI_T inside one launch, "
                     f"{ev.values.get('rounds', '?')} paired rounds per size")
    else:
        runs = sorted({p.label for p in pts if p.label})
        parts.append(f"{len(runs)} separate launch(es) per path")
        if pts:
            parts.append(f"{_range([p.stats.n if p.stats else len(p.samples) for p in pts])} "
                         f"timed iterations per launch and size after "
                         f"{_range([len(p.warmup) for p in pts])} warm-up iteration(s), left out")
    c = ev.conditions
    buf = " ".join(x for x in (c.buffer_kind, f"{c.buffer_fill}-filled" if c.buffer_fill else None)
                   if x)
    if buf:
        parts.append(f"{buf} buffers" + (f" aligned to {format_bytes(c.align_bytes)}"
                                         if c.align_bytes else ""))
    kind = KIND_NAMES.get(buffer_pages(ev)) if ev.values.get("paired") else None
    if kind:
        parts.append(kind)
    if c.thp_enabled:
        parts.append(f"THP {c.thp_enabled}")
    return "; ".join(parts)


def _markers(ev: Optional[Evidence], default: Optional[int],
             advised: tuple[bool, Optional[int]], name: str) -> list[FigureMarker]:
    out = []
    x = crossover(ev) if ev is not None else None
    if x is not None:
        out.append(FigureMarker(axis="x", value=float(x), role="crossover",
                                label="crossover: CMA better from here on"))
    if default is not None:
        out.append(FigureMarker(axis="x", value=float(default), role="default",
                                label=f"default {name}"))
    if advised[0] and advised[1] is not None:
        out.append(FigureMarker(axis="x", value=float(advised[1]), role="advised",
                                label=f"advised {name}"))
    return out


def _advice_note(default: Optional[int], advised: tuple[bool, Optional[int]]) -> list[str]:
    if not advised[0]:
        return ["no CMA threshold advice from this evidence"]
    if advised[1] is None:
        return ["advice: CMA off at every size"]
    if advised[1] == default:
        return [f"advice: keep the default threshold {format_bytes(default)}"]
    return []


def _curves(ev: Evidence, suffix: str, markers, notes, how: str) -> list[FigureSpec]:
    out = []
    for metric, unit, what, ylabel in ((LAT, "s", "One-way ping-pong latency", "latency"),
                                       (BW, "bytes/s", "Streaming bandwidth (osu_bw-style "
                                        "window)", "bandwidth")):
        series = [series_pooled(cfg, (ev.series_named(f"{metric}:{cfg}") or _empty()).points,
                                evidence=ev.id, series=f"{metric}:{cfg}")
                  for cfg in (ON, OFF) if ev.series_named(f"{metric}:{cfg}") is not None]
        series = [s for s in series if s.x]
        if not series:
            continue
        out.append(FigureSpec(
            id=f"{metric}{suffix}", title=f"CMA on vs off: {ylabel} ({ev.id})",
            caption=(f"{what} of 2 ranks against message size, CMA forced on at every size "
                     f"(cma-on) vs CMA off (cma-off). {how}. Line: median of the pooled "
                     f"samples at each size; band: 95 % bootstrap CI of that median."),
            x_label="message size", x_unit="bytes", y_label=ylabel, y_unit=unit,
            x_scale="log", y_scale="log", series=series, markers=markers, notes=notes))
    return out


def _empty():
    from advisor.models import Series

    return Series(name="", unit="")


def figures(evidence: Sequence[Evidence], facts: Facts) -> list[FigureSpec]:
    """The figures described in the module docstring; [] without sweep or paired evidence.

    :raises ValueError: from ``summarize`` on non-finite samples (the report records it).
    """
    evidence = list(evidence)
    evs = deciding_evidence(evidence)
    if not evs:
        return []
    lib = library_of(evidence, facts)
    default = default_candidate(lib)
    advised = advised_threshold(evidence, facts)
    name = knobs.CRAY_SIZE if lib.cray else knobs.CMA_THRESHOLD
    notes = _advice_note(default, advised)
    out: list[FigureSpec] = []
    for i, ev in enumerate(evs):
        suffix = "" if i == 0 else f"-{_slug(ev.id)}"
        out += _curves(ev, suffix, _markers(ev, default, advised, name), notes, how_measured(ev))
    reg = regret_figure(evs, default, advised, name)
    if reg is not None:
        out.append(reg)
    return out
