"""Figures of the memory-pool host probe (``figures`` hook, issue 17): pure, no I/O, no drawing.

* ``first-use``: the measured cost (s) of first-touching a pool chunk and of pinning
  (mlock/munlock, registration-like) a block, with MADV_HUGEPAGE on large-page-aligned chunks
  vs base pages (``host-first-touch``), medians with their 95 % CIs, log scale; the kind the
  advice uses (huge pages, large-page-multiple blocks) drawn as the advised series.
* ``pool-waste``: rounding waste and bytes reserved beyond the requests (bytes) of the current
  pool configuration and of each candidate the advice compared (``model.choose`` on the
  recorded workload, ``recommend.host_choice``), the chosen one marked.  The evidence holds no
  measured curve over alignment or block size: these are the model's figures for the recorded
  allocation sizes, and the caption says so.
"""

from __future__ import annotations

from typing import Sequence

from advisor.models import Evidence, Facts
from advisor.specs.figures import FigureMarker, FigureSeries, FigureSpec
from advisor.specs.units import format_bytes

from . import model
from .evidence import HOST_FIRST_TOUCH
from .recommend import host_choice

#: Point labels of ``host-first-touch`` and their legend names.
KINDS = (("huge", "MADV_HUGEPAGE, large-page aligned", "advised"),
         ("nohuge", "base pages (MADV_NOHUGEPAGE)", "default"))
#: Series of ``host-first-touch`` and their tick names.
MEASURES = (("first-touch", "first touch of a chunk"), ("register", "mlock + munlock of a block"))


def _exact(n: int) -> str:
    """``format_bytes`` when it is exact (a whole number of KiB, or below 1 KiB), else the power
    of two above minus the rest: a block of 1 GiB - 16 B must not read as 1024 MiB."""
    if n < 1024 or n % 1024 == 0:
        return format_bytes(n)
    up = 1 << (n - 1).bit_length()  # the power of two just above: "1 GiB - 16 B"
    return f"{format_bytes(up)} - {format_bytes(up - n)}"


def first_use_figure(ev: Evidence) -> FigureSpec | None:
    """The ``first-use`` figure; None when ``ev`` has none of its points."""
    names: dict[float, str] = {}
    rows: dict[str, list] = {k: [] for k, _, _ in KINDS}
    notes = []
    for sname, tick in MEASURES:
        s = ev.series_named(sname)
        if s is None:
            continue
        pts = {p.label: p for p in s.points if not p.artefact and p.median() is not None}
        if not any(k in pts for k, _, _ in KINDS):
            continue
        x = float(len(names))
        size = next((p.x for p in pts.values() if p.x is not None), None)
        names[x] = tick + (f" ({format_bytes(size)})" if size is not None else "")
        for k, _, _ in KINDS:
            if k in pts:
                rows[k].append((x, pts[k]))
        r = ev.values.get(f"{sname}_ratio")
        lo, hi = ev.values.get(f"{sname}_ratio_ci_low"), ev.values.get(f"{sname}_ratio_ci_high")
        if r is not None:
            notes.append(f"{sname}: base pages / huge pages x{float(r):.2f}"
                         + (f" (95 % CI {float(lo):.2f}-{float(hi):.2f})"
                            if lo is not None and hi is not None else "")
                         + (f", {ev.values[sname + '_verdict']}"
                            if ev.values.get(f"{sname}_verdict") else ""))
    series = []
    for k, label, role in KINDS:
        pts = rows[k]
        if not pts:
            continue
        ci = all(p.stats is not None and p.stats.ci_low is not None for _, p in pts)
        series.append(FigureSeries(
            label=label, kind="bar", role=role, evidence=ev.id, x=[x for x, _ in pts],
            y=[p.median() for _, p in pts], lo=[p.stats.ci_low for _, p in pts] if ci else None,
            hi=[p.stats.ci_high for _, p in pts] if ci else None))
    if not series:
        return None
    v, c = ev.values, ev.conditions
    how = [f"{v['repeats']} repeats" if v.get("repeats") is not None else "",
           f"{c.buffer_kind} {c.buffer_fill} buffers" if c.buffer_kind and c.buffer_fill else "",
           f"aligned to {format_bytes(c.align_bytes)}" if c.align_bytes else "",
           f"THP {c.thp_enabled}" if c.thp_enabled else "",
           f"large page {format_bytes(v['large_page_bytes'])} from {v['large_page_source']}"
           if v.get("large_page_bytes") and v.get("large_page_source") else ""]
    for k in ("huge", "nohuge"):
        frac = v.get(f"{k}_anon_huge_fraction")
        if frac is not None:
            notes.append(f"{k}: {float(frac):.0%} of the chunk backed by huge pages (smaps)")
    return FigureSpec(
        id="first-use", title="Pool chunk first use: huge pages vs base pages",
        caption=(f"{ev.description}. {'; '.join(h for h in how if h)}. Bar: median time; "
                 "whisker: its 95 % bootstrap CI."),
        x_label="operation", x_unit="", y_label="time", y_unit="s", y_scale="log",
        series=series, names=names, notes=notes)


def waste_figure(evidence: Sequence[Evidence], facts: Facts) -> FigureSpec | None:
    """The ``pool-waste`` figure (model figures for the recorded workload); None when the
    workload gives no choice (``ValueError`` from the model: an empty workload)."""
    try:
        w, lp, choice = host_choice(evidence, facts)
    except ValueError:
        return None
    reports = [model.evaluate(w.current, w.sizes, lp)] + list(choice.candidates)
    names: dict[float, str] = {}
    for i, r in enumerate(reports):
        cfg = r.config
        names[float(i)] = (f"{'current' if i == 0 else cfg.label} ({_exact(cfg.alignment_bytes)}"
                           f", {_exact(cfg.next_block_bytes)})")
    xs = [float(i) for i in range(len(reports))]
    series = [
        FigureSeries(label="rounding waste", kind="bar", x=xs,
                     y=[float(r.waste_bytes) for r in reports], evidence="workload"),
        FigureSeries(label="reserved beyond the requests", kind="bar", x=xs,
                     y=[float(model.overhead_bytes(r)) for r in reports], evidence="workload",
                     role="reference")]
    chosen = next(i for i, r in enumerate(reports) if r is choice.best)
    markers = [FigureMarker(axis="x", value=float(chosen), role="advised",
                            label="chosen by the advice")]
    notes = [f"(alignment, block); backing blocks not a multiple of the {format_bytes(lp)} large "
             "page: " + ", ".join(f"{'current' if i == 0 else r.config.label} "
                                  f"{len(r.misaligned)} of {len(r.backing)}"
                                  for i, r in enumerate(reports))]
    if not choice.fits:
        notes.append("no candidate fits the memory budget: nothing is recommended")
    sizes = ", ".join(format_bytes(s) for s in w.sizes)
    return FigureSpec(
        id="pool-waste", title="Pool configurations: waste and reserved bytes",
        caption=(f"Computed, not measured: the pool model (Umpire block + alignment rule, "
                 f"LLNL/Umpire#881) applied to the recorded workload (allocation sizes {sizes}, "
                 f"source {w.source}) with the {format_bytes(lp)} host large page, for the "
                 "current configuration and the candidates the advice compared. The evidence "
                 "holds no measured sweep over alignment or block size."),
        x_label="pool configuration", x_unit="", y_label="bytes", y_unit="bytes",
        series=series, names=names, markers=markers, notes=notes)


def figures(evidence: Sequence[Evidence], facts: Facts) -> list[FigureSpec]:
    """``first-use`` (when ``host-first-touch`` is recorded) and ``pool-waste``."""
    evidence = list(evidence)
    out = []
    ev = Evidence.find(evidence, HOST_FIRST_TOUCH)
    if ev is not None:
        out.append(first_use_figure(ev))
    out.append(waste_figure(evidence, facts))
    return [f for f in out if f is not None]
