"""Figures of the host-buffer probe (``figures`` hook, issue 17): pure, no I/O, no drawing.

From this plugin's evidence (ids in ``advisor_host_buffer.evidence``), each figure only when its
evidence is there:

* ``memcpy-sweep``: memcpy bandwidth (bytes/s) against copy size (bytes, log), the current
  tunables (``default``) vs the tuned non-temporal threshold (``tuned``), medians with their
  95 % CIs; markers: glibc's non-temporal threshold in effect and the tuned one; the cliff
  (``cliff.find_cliff``, the rule ``recommend`` uses) as a band, or a marker when it is one
  swept size; the sizes where both runs take the same copy path shaded, with the tuned /
  default ratio measured there as a note (:func:`same_path`).
* ``zero-page-memcpy``, ``zero-page-opencl``, ``zero-page-cuda``: bandwidth per source fill (and
  direction), bars with CIs; artefact points (zero page, above the copy ceiling) as their own
  series, never as a bandwidth; the copy ceiling of the run as a horizontal marker; the
  measured inflation ratios with their CIs as notes.
* ``first-touch``: first-use time of a fresh buffer with base pages vs huge pages, and the
  rewrite of resident pages, bars with CIs; fault cost per GiB and the huge-page speedup as notes.
* ``malloc-hugetlb``: malloc + memset + free of one large block, current tunables vs
  ``glibc.malloc.hugetlb=1``.
"""

from __future__ import annotations

import textwrap
from typing import Optional, Sequence

from advisor.measure import artefact_kind
from advisor.models import Evidence, Facts, Point
from advisor.specs.figures import (FigureBand, FigureMark, FigureMarker, FigureSeries, FigureSpec,
                                    series_from_points)
from advisor.specs.units import format_bandwidth, format_bytes, format_seconds

from advisor_host_buffer.cliff import find_cliff
from advisor_host_buffer.evidence import (
    EV_FIRST_TOUCH,
    EV_MALLOC_HUGETLB,
    EV_SWEEP,
    EV_ZERO_CUDA,
    EV_ZERO_MEMCPY,
    EV_ZERO_OPENCL,
    sweep_points,
)
from advisor_host_buffer.recommend import recommend

#: Zero-page evidence ids and the name of their figure.
ZERO_PAGE = ((EV_ZERO_MEMCPY, "memcpy (numpy.copyto)"), (EV_ZERO_OPENCL, "OpenCL"),
             (EV_ZERO_CUDA, "CUDA"))


def _range(values: list[int]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def how_measured(ev: Evidence) -> str:
    """Samples per point, warm-up samples left out, buffer kind, fill, alignment, THP mode, from
    the evidence's points and conditions."""
    pts = [p for s in ev.series for p in s.points if p.stats is not None or p.samples]
    parts = []
    if pts:
        parts.append(f"{_range([p.stats.n if p.stats else len(p.samples) for p in pts])} timed "
                     f"samples per point after {_range([len(p.warmup) for p in pts])} warm-up "
                     "sample(s), left out")
    c = ev.conditions
    buf = " ".join(x for x in (c.buffer_kind, f"{c.buffer_fill}-filled" if c.buffer_fill else None)
                   if x)
    if buf:
        parts.append(f"{buf} buffers" + (f" aligned to {format_bytes(c.align_bytes)}"
                                         if c.align_bytes else ""))
    if c.thp_enabled:
        parts.append(f"THP {c.thp_enabled}")
    rounds = ev.values.get("interleave.rounds")
    if rounds is not None:
        parts.append(f"{rounds} interleaved rounds of fresh processes")
    return "; ".join(parts)


def _advised(evidence: Sequence[Evidence], facts: Facts) -> set[str]:
    return {r.id for r in recommend(evidence, facts).recommendations}


def sweep_figure(ev: Evidence, advised: bool) -> Optional[FigureSpec]:
    """The ``memcpy-sweep`` figure (see the module docstring); None without a ``default``
    series."""
    d = ev.series_named("default")
    if d is None:
        return None
    series = [series_from_points("default tunables", d.points, evidence=ev.id, series="default",
                                 role="default")]
    t = ev.series_named("tuned")
    tuned = ev.values.get("nt_threshold.tuned_bytes")
    if t is not None:
        name = f"tuned threshold {format_bytes(int(tuned))}" if tuned is not None else "tuned"
        series.append(series_from_points(name, t.points, evidence=ev.id, series="tuned",
                                         role="advised" if advised else "measured"))
    markers, bands, notes = [], [], []
    current = ev.values.get("nt_threshold.default_bytes")
    if current is not None:
        markers.append(FigureMarker(axis="x", value=float(current), role="default",
                                    label="glibc non-temporal threshold in effect"))
    if tuned is not None:
        markers.append(FigureMarker(axis="x", value=float(tuned),
                                    role="advised" if advised else "note",
                                    label=("advised" if advised else "tuned") +
                                    " non-temporal threshold"))
    cliff = find_cliff(sweep_points(d),
                       noise_floor=float(ev.values.get("noise_floor.within_run", 0.0)),
                       threshold_bytes=int(current) if current is not None else None)
    if cliff is not None:
        text = (f"cliff: {cliff.depth:.2f}x below the plateau "
                f"{format_bandwidth(cliff.plateau_bps)}")
        if cliff.end_bytes > cliff.start_bytes:
            bands.append(FigureBand(axis="x", low=float(cliff.start_bytes),
                                    high=float(cliff.end_bytes), label=text))
        else:
            markers.append(FigureMarker(axis="x", value=float(cliff.start_bytes), role="limit",
                                        label=text))
    else:
        notes.append("no cliff with the current tunables (cliff.find_cliff)")
    if t is not None and current is not None and tuned is not None:
        same, control = same_path(ev, series, float(current), float(tuned))
        bands += same
        notes += control
    if not advised:
        notes.append("no non-temporal threshold advised from this sweep")
    return FigureSpec(
        id="memcpy-sweep", title="memcpy bandwidth against copy size: glibc's cliff",
        caption=(f"{ev.description}. {how_measured(ev)}. Point: median bandwidth; band: its "
                 "95 % bootstrap CI."),
        x_label="copy size", x_unit="bytes", y_label="bandwidth", y_unit="bytes/s",
        x_scale="log", y_scale="linear", series=series, markers=markers, bands=bands,
        notes=notes)


def same_path(ev: Evidence, series: list[FigureSeries], current: float,
              tuned: float) -> tuple[list[FigureBand], list[str]]:
    """Where the default and the tuned runs take the same copy path, and what the runs measured
    there.  glibc switches to non-temporal stores at its threshold, so a copy below both
    thresholds (cached stores) or at or above both (non-temporal stores) runs the same code in
    both configurations (``measure_sweep.followup_sizes``; the measurement flags those sizes
    ``gain.<n>.affected = False``): a gap there is drift between fresh processes, not the
    setting's effect, and the advice does not count it.  Returns the bands over those copy
    sizes (bytes, within the tuned run's range) and notes giving the tuned / default ratio at those
    sizes (``gain.<n>`` with its CI) and the within-process floor (``noise_floor.within_run``)."""
    xs = [x for s in series if s.series == "tuned" for x in s.x]  # where both runs measured
    lo, hi = sorted((current, tuned))
    bands = []
    if xs and min(xs) < lo:
        bands.append(FigureBand(axis="x", low=min(xs), high=lo,
                                label="same copy path in both runs (cached stores)"))
    if xs and max(xs) >= hi:
        bands.append(FigureBand(axis="x", low=hi, high=max(xs),
                                label="same copy path in both runs (non-temporal stores)"))
    v = ev.values
    ctl = sorted((int(k.split(".")[1]), float(g)) for k, g in v.items()
                 if k.startswith("gain.") and k.count(".") == 1
                 and v.get(f"{k}.affected") is False)
    if not ctl:
        return bands, []
    if len(ctl) <= 3:
        what = ", ".join(f"{format_bytes(n)} {g:.2f}x" + (
            f" (95 % CI {float(v[f'gain.{n}.ci_low']):.2f}-{float(v[f'gain.{n}.ci_high']):.2f})"
            if f"gain.{n}.ci_low" in v and f"gain.{n}.ci_high" in v else "") for n, g in ctl)
    else:
        gs = [g for _, g in ctl]
        what = f"{min(gs):.2f}x to {max(gs):.2f}x over {len(ctl)} sizes"
    floor = v.get("noise_floor.within_run")
    return bands, [f"tuned / default where both runs take the same copy path: {what};",
                   "drift between fresh processes, not the threshold's effect (the advice does "
                   "not count it)" + (f"; passes within one process agree to {100 * float(floor):.1f} %"
                                      if floor is not None else "")]


def _bar(label: str, rows: list[tuple[float, Point]], ev_id: str, series: Optional[str],
         role: str, kind: str = "bar") -> Optional[FigureSeries]:
    """Bars (or points) at the given x positions from each point's stats (median, CI), else
    its samples."""
    rows = [(x, p) for x, p in rows if p.median() is not None]
    if not rows:
        return None
    ci = all(p.stats is not None and p.stats.ci_low is not None for _, p in rows)
    return FigureSeries(label=label, x=[x for x, _ in rows], y=[p.median() for _, p in rows],
                        lo=[p.stats.ci_low for _, p in rows] if ci else None,
                        hi=[p.stats.ci_high for _, p in rows] if ci else None,
                        kind=kind, role=role, evidence=ev_id, series=series)


def categorical(ev: Evidence, *, physical: str = "measured",
                artefact: str = "artefact: not a bandwidth") -> tuple[list[FigureSeries],
                                                                      dict[float, str],
                                                                      list[str]]:
    """One bar per point of every series of ``ev`` (``<series> <label>`` names when it has
    several series): physical points as bars, artefact points as a separate series of points
    (never drawn as a bandwidth bar); artefact points without samples are left out and named in
    the notes."""
    names: dict[float, str] = {}
    phys, arte, notes = [], [], []
    many = len(ev.series) > 1
    for s in ev.series:
        for p in s.points:
            name = f"{s.name} {p.label}" if many and s.name != p.label else str(p.label)
            if p.median() is None:
                notes.append(f"{name}: " + (f"artefact ({artefact_kind(p.artefact)}), not a "
                                            "bandwidth; no samples" if p.artefact else
                                            "no samples"))
                continue
            x = float(len(names))
            names[x] = name
            (arte if p.artefact else phys).append((x, p, s.name))
    out = []
    for label, rows, role, kind in ((physical, phys, "measured", "bar"),
                                    (artefact, arte, "reference", "points")):
        names_of = {n for _, _, n in rows}
        got = _bar(label, [(x, p) for x, p, _ in rows], ev.id,
                   names_of.pop() if len(names_of) == 1 else None, role, kind)
        if got is not None:
            out.append(got)
    return out, names, notes


#: Characters per line of a cross's label: one category's share of the axis at six categories
#: (the OpenCL figure's), at the marks' 7.5 pt font.
MARK_CHARS = 16


def zero_page_figure(ev: Evidence, api: str) -> Optional[FigureSpec]:
    """A zero-page figure (see the module docstring); None without points."""
    series, names, notes = categorical(ev)
    if not series:
        return None
    markers = []
    ceiling = ev.values.get("ceiling_bytes_per_s")
    if ceiling is not None:
        markers.append(FigureMarker(axis="y", value=float(ceiling), role="limit",
                                    label="copy ceiling of this run"))
    inflation: dict[str, str] = {}
    for s in ev.series:
        r = ev.values.get(f"{s.name}.inflation")
        lo, hi = (ev.values.get(f"{s.name}.inflation_ci_low"),
                  ev.values.get(f"{s.name}.inflation_ci_high"))
        if r is not None:
            inflation[s.name] = f"x{float(r):.2f}" + (
                f" (95 % CI {float(lo):.2f}-{float(hi):.2f})"
                if lo is not None and hi is not None else "")
            notes.insert(0, f"{s.name}: untouched / random-filled source {inflation[s.name]}")
    # the finding itself: an untouched source has no bandwidth to draw (its figure is the zero
    # page's), so it gets its category with a cross and what it read as, not an empty gap
    marks = []
    many = len(ev.series) > 1
    for s in ev.series:
        for p in s.points:
            if not p.artefact or p.median() is not None:
                continue
            name = f"{s.name} {p.label}" if many and s.name != p.label else str(p.label)
            x = float(len(names))
            names[x] = name
            seen = inflation.get(s.name) if p.label == "untouched" else None
            ratio = seen.split(" ", 1)[0] if seen else None  # x2.31, the CI is in the notes
            # short lines: the label sits over its own category, side by side with the next
            marks.append(FigureMark(x=x, shape="x", role="reference", label=(
                textwrap.fill(f"{artefact_kind(p.artefact)}:", MARK_CHARS) + "\n"
                + (f"{ratio} of random" if ratio else "no bandwidth"))))
            notes[:] = [n for n in notes if not n.startswith(f"{name}: artefact")]
    nbytes = ev.values.get("nbytes")
    size = f" of {format_bytes(int(nbytes))}" if nbytes is not None else ""
    return FigureSpec(
        id=ev.id, title=f"Zero-page inflation: {api}",
        caption=(f"{ev.description}; copies{size}. {how_measured(ev)}. Bar: median bandwidth; "
                 "whisker: its 95 % bootstrap CI. An untouched source maps the kernel's zero "
                 "page: its figure is an artefact, not a bandwidth."),
        x_label="source", x_unit="", y_label="bandwidth", y_unit="bytes/s",
        series=series, names=names, markers=markers, marks=marks, notes=notes)


def first_touch_figure(ev: Evidence) -> Optional[FigureSpec]:
    """The ``first-touch`` figure (see the module docstring); None without points."""
    series, names, notes = categorical(ev, physical="first use")
    if not series:
        return None
    v = ev.values
    for kind in ("base", "huge"):
        f = v.get(f"fault_s_per_gib.{kind}")
        if f is not None:
            notes.append(f"fault cost with {kind} pages: {format_seconds(float(f))} per GiB")
    if v.get("huge_speedup") is not None:
        lo, hi = v.get("huge_speedup.ci_low"), v.get("huge_speedup.ci_high")
        notes.append(f"huge pages first use x{float(v['huge_speedup']):.2f} faster"
                     + (f" (95 % CI {float(lo):.2f}-{float(hi):.2f})" if lo is not None and
                        hi is not None else ""))
    nbytes = v.get("nbytes")
    size = f" of {format_bytes(int(nbytes))}" if nbytes is not None else ""
    return FigureSpec(
        id="first-touch", title="First touch: base pages vs huge pages",
        caption=(f"{ev.description}; buffers{size}. {how_measured(ev)}. Bar: median time; "
                 "whisker: its 95 % bootstrap CI."),
        x_label="pages", x_unit="", y_label="time", y_unit="s",
        series=series, names=names, notes=notes)


def malloc_figure(ev: Evidence) -> Optional[FigureSpec]:
    """The ``malloc-hugetlb`` figure; None without points."""
    series, names, notes = categorical(ev, physical="malloc + memset + free")
    if not series:
        return None
    v = ev.values
    if v.get("speedup") is not None:
        lo, hi = v.get("speedup.ci_low"), v.get("speedup.ci_high")
        notes.append(f"glibc.malloc.hugetlb=1 x{float(v['speedup']):.2f} faster"
                     + (f" (95 % CI {float(lo):.2f}-{float(hi):.2f})" if lo is not None and
                        hi is not None else "") + (f", verdict {v['verdict']}"
                                                   if v.get("verdict") else ""))
    nbytes = v.get("nbytes")
    size = f" of {format_bytes(int(nbytes))}" if nbytes is not None else ""
    return FigureSpec(
        id="malloc-hugetlb", title="malloc with glibc.malloc.hugetlb=1",
        caption=(f"{ev.description}; one block{size}. {how_measured(ev)}. Bar: median time; "
                 "whisker: its 95 % bootstrap CI."),
        x_label="tunables", x_unit="", y_label="time", y_unit="s",
        series=series, names=names, notes=notes)


def figures(evidence: Sequence[Evidence], facts: Facts) -> list[FigureSpec]:
    """The figures of the module docstring that the evidence holds, in that order."""
    evidence = list(evidence)
    out: list[Optional[FigureSpec]] = []
    sweep = Evidence.find(evidence, EV_SWEEP)
    if sweep is not None:
        out.append(sweep_figure(sweep, "glibc-non-temporal-threshold" in
                                _advised(evidence, facts)))
    for ev_id, api in ZERO_PAGE:
        ev = Evidence.find(evidence, ev_id)
        if ev is not None:
            out.append(zero_page_figure(ev, api))
    ft = Evidence.find(evidence, EV_FIRST_TOUCH)
    if ft is not None:
        out.append(first_touch_figure(ft))
    mh = Evidence.find(evidence, EV_MALLOC_HUGETLB)
    if mh is not None:
        out.append(malloc_figure(mh))
    return [f for f in out if f is not None]
