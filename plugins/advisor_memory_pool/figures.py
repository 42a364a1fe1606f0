"""Figures of the memory-pool host probe (``figures`` hook, issue 17): pure, no I/O, no drawing.

* ``first-use``: the measured cost (s) of first-touching a pool chunk and of pinning
  (mlock/munlock, registration-like) a block, with MADV_HUGEPAGE on large-page-aligned chunks
  vs base pages (``host-first-touch``), medians as dots with their 95 % CIs as whiskers, log
  scale (never bars on a log axis); the kind the advice uses (huge pages, large-page-multiple
  blocks) drawn as the advised series.
* ``pool-waste``: what decided the pool choice (``model.choose`` on the recorded workload,
  ``recommend.host_choice``): per configuration (the current one and each candidate), the share
  of its backing blocks that are multiples of the host large page, each labelled with its
  blocks in large pages and its rounding waste (the tie-break), the chosen one drawn as
  advised; the rule and any tie in the notes.  The evidence holds no measured curve over
  alignment or block size: these are the model's figures for the recorded allocation sizes,
  and the caption says so.
"""

from __future__ import annotations

from typing import Sequence

from advisor.models import Evidence, Facts
from advisor.specs.figures import FigureMark, FigureSeries, FigureSpec
from advisor.specs.units import format_bytes

from . import model
from .evidence import HOST_FIRST_TOUCH
from .recommend import host_choice

#: Point labels of ``host-first-touch`` and their legend names.
KINDS = (("huge", "MADV_HUGEPAGE, large-page aligned", "advised"),
         ("nohuge", "base pages (MADV_NOHUGEPAGE)", "default"))
#: Series of ``host-first-touch`` and their tick names.
MEASURES = (("first-touch", "first touch of a chunk"), ("register", "mlock + munlock of a block"))
#: Sideways offset (x units: operations are 1 apart) between the two kinds' dots of one
#: operation, so that equal medians (THP "never": both get base pages) do not hide each other.
DODGE = 0.16


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
    notes, ratios = [], []
    for sname, tick in MEASURES:
        s = ev.series_named(sname)
        if s is None:
            continue
        pts = {p.label: p for p in s.points if not p.artefact and p.median() is not None}
        if not any(k in pts for k, _, _ in KINDS):
            continue
        x = float(len(names))
        size = next((p.x for p in pts.values() if p.x is not None), None)
        names[x] = tick + (f"\n({format_bytes(size)})" if size is not None else "")
        for k, _, _ in KINDS:
            if k in pts:
                rows[k].append((x, pts[k]))
        r = ev.values.get(f"{sname}_ratio")
        lo, hi = ev.values.get(f"{sname}_ratio_ci_low"), ev.values.get(f"{sname}_ratio_ci_high")
        if r is not None and "nohuge" in pts:
            verdict = ev.values.get(f"{sname}_verdict")  # compare(nohuge, huge): "better"
            ratios.append((x, pts["nohuge"].median(), (
                f"x{float(r):.2f} the huge-page time"
                + (f"\n95 % CI {float(lo):.2f}-{float(hi):.2f}" if lo is not None and
                   hi is not None else "")
                + (f", {verdict}" if verdict and verdict != "better" else ""))))
    series = []
    for j, (k, label, role) in enumerate(KINDS):
        pts = rows[k]
        if not pts:
            continue
        ci = all(p.stats is not None and p.stats.ci_low is not None for _, p in pts)
        dodge = (j - (len(KINDS) - 1) / 2) * DODGE  # side by side: equal medians stay visible
        series.append(FigureSeries(
            label=label, kind="points", role=role, evidence=ev.id,
            x=[x + dodge for x, _ in pts],
            y=[p.median() for _, p in pts], lo=[p.stats.ci_low for _, p in pts] if ci else None,
            hi=[p.stats.ci_high for _, p in pts] if ci else None))
    if not series:
        return None
    at = dict((k, (j - (len(KINDS) - 1) / 2) * DODGE) for j, (k, _, _) in enumerate(KINDS))
    marks = [FigureMark(x=x + at["nohuge"], y=y, label=text, role="default", shape="label")
             for x, y, text in ratios]  # beside the base-page dot: how much slower it is
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
        caption=(f"{ev.description}. {'; '.join(h for h in how if h)}. Dot: median time; "
                 "whisker: its 95 % bootstrap CI."),
        x_label="operation", x_unit="", y_label="time", y_unit="s", y_scale="log",
        series=series, names=names, marks=marks, notes=notes)


def _in_pages(n: int, page: int) -> str:
    """``n`` bytes as whole large pages and the rest: ``513 x 2 MiB``, ``512 x 2 MiB + 16 B``
    (the quantity the choice turns on: a remainder means a backing block is not a multiple)."""
    q, r = divmod(int(n), page)
    whole = f"{q} x {format_bytes(page)}" if q else ""
    rest = _exact(r) if r else ""
    return " + ".join(t for t in (whole, rest) if t) or "0 B"


def _block_text(r: model.PoolReport) -> str:
    """The distinct backing block sizes of ``r`` in large pages (at most two, then a count)."""
    sizes = sorted(set(r.backing))
    text = ", ".join(_in_pages(b, r.large_page) for b in sizes[:2])
    return text + (f" and {len(sizes) - 2} more sizes" if len(sizes) > 2 else "")


def waste_figure(evidence: Sequence[Evidence], facts: Facts) -> FigureSpec | None:
    """The ``pool-waste`` figure: per pool configuration, the share (%) of its backing blocks
    that are multiples of the host large page, the quantity ``model.choose`` keeps candidates
    by; each point labelled with its blocks in large pages and its rounding waste (bytes, the
    tie-break), the chosen one drawn as advised.  Model figures for the recorded workload (no
    measurement).  None when the workload gives no choice (``ValueError`` from the model: an
    empty workload)."""
    try:
        w, lp, choice = host_choice(evidence, facts)
    except ValueError:
        return None
    reports = [model.evaluate(w.current, w.sizes, lp)] + list(choice.candidates)
    names: dict[float, str] = {}
    groups: dict[str, tuple[str, list[tuple[float, float]]]] = {
        "default": ("current settings", []), "reference": ("candidate", []),
        "advised": ("chosen by the advice" if choice.fits else
                    "least over the budget: not recommended", [])}
    marks = []
    for i, r in enumerate(reports):
        x, cfg = float(i), r.config
        names[x] = (f"{'current' if i == 0 else cfg.label}\n"
                    f"{_exact(cfg.alignment_bytes)}, {_exact(cfg.next_block_bytes)}")
        share = 100.0 * (len(r.backing) - len(r.misaligned)) / len(r.backing)
        role = "default" if i == 0 else "advised" if r is choice.best else "reference"
        groups[role][1].append((x, share))
        text = (f"{len(r.backing) - len(r.misaligned)} of {len(r.backing)} blocks a multiple\n"
                f"{_block_text(r)}, waste {_exact(r.waste_bytes)}")
        if cfg.label in choice.rejected and i > 0:
            text += "\nover the memory budget"
        marks.append(FigureMark(x=x, y=share, label=text, role=role, shape="label"))
    series = [FigureSeries(label=label, kind="points", role=role, evidence="workload",
                           x=[x for x, _ in pts], y=[y for _, y in pts])
              for role, (label, pts) in groups.items() if pts]
    budget = choice.grow.budget_bytes
    notes = [f"Rule: reserve within the memory budget ("
             + (format_bytes(budget) if budget else "none known")
             + f"), every backing block a {format_bytes(lp)} multiple, then the least rounding "
             "waste;",
             "a tie goes to the large-page alignment (it holds where a library ignores the "
             "next-block setting)."]
    ties = [r.config.label for r in choice.candidates if r is not choice.best
            and r.config.label not in choice.rejected
            and r.all_multiples == choice.best.all_multiples
            and r.waste_bytes == choice.best.waste_bytes]
    if not choice.fits:
        notes.append("No candidate fits the memory budget: nothing is recommended.")
    elif ties:
        notes.append(f"Here {choice.best.config.label} and {', '.join(ties)} tie (same share of "
                     f"multiples, waste {_exact(choice.best.waste_bytes)}): the tie rule chose "
                     f"{choice.best.config.label}.")
    sizes = ", ".join(format_bytes(s) for s in w.sizes)
    return FigureSpec(
        id="pool-waste",
        title=f"Pool choice: backing blocks that are {format_bytes(lp)} large-page multiples",
        caption=(f"Computed, not measured: the pool model (Umpire block + alignment rule, "
                 f"LLNL/Umpire#881) applied to the recorded workload (allocation sizes {sizes}, "
                 f"source {w.source}) with the {format_bytes(lp)} host large page, for the "
                 "current configuration and the candidates the advice compared. Labels: each "
                 "configuration's backing blocks in large pages and its rounding waste. The "
                 "evidence holds no measured sweep over alignment or block size."),
        x_label="pool configuration (alignment, block)", x_unit="",
        y_label=f"backing blocks that are {format_bytes(lp)} multiples", y_unit="%",
        series=series, names=names, marks=marks, notes=notes)


def figures(evidence: Sequence[Evidence], facts: Facts) -> list[FigureSpec]:
    """``first-use`` (when ``host-first-touch`` is recorded) and ``pool-waste``."""
    evidence = list(evidence)
    out = []
    ev = Evidence.find(evidence, HOST_FIRST_TOUCH)
    if ev is not None:
        out.append(first_use_figure(ev))
    out.append(waste_figure(evidence, facts))
    return [f for f in out if f is not None]
