"""Figure specs as text for a terminal (``advisor show --plot``), drawn by plotext.

Pure apart from plotext's own state: :func:`render` returns the text, the CLI prints it.  plotext
(5.x API) is in the optional ``report`` extra and imported lazily; without it :func:`render`
raises ``ImportError`` and the CLI names the extra.  Tick positions come from matplotlib's
locators (``MaxNLocator`` / ``LogLocator``, same extra; no drawing); each axis is read in one
unit, ``advisor.specs.units.axis_scale``'s (the report's rule): the axis label names it
(``latency (µs)``, ``bandwidth (GB/s)``) and every tick is a number in it.

What a terminal shows of a spec, readable without colour (a captured screen has none):

- each series' medians as a curve of its own marker character (series sharing a label share
  one), listed under the plot as ``o cma-on   x cma-off``; the library default's and the
  advice's curves (``role``) are drawn last, over the others;
- each marker (threshold, crossover, ceiling) as a line tagged ``A``, ``B``, ... where it is
  drawn (above the frame over a vertical line, right of the frame beside a horizontal one;
  markers at one value share the line and list every tag, ``A,B,C``), then listed under the
  plot with its tag and value as a key (``A  8 KiB  crossover: CMA better from here on``); a
  marker outside the measured range is listed as such, tagged ``-``;
- the first ``MAX_NOTES`` notes.

CI bands and categorical bar figures are left to ``advisor report`` (:func:`drawable` says
which specs are curves).

Public API: :data:`DEFAULT_WIDTH`, :data:`HEIGHT`, :data:`MARKERS`, :func:`drawable`,
:func:`render`.
"""

from __future__ import annotations

import math
import textwrap
from string import ascii_uppercase

from advisor.specs.figures import FigureMarker, FigureSpec
from advisor.specs.units import AxisScale, axis_scale, format_value

__all__ = ["DEFAULT_WIDTH", "HEIGHT", "MARKERS", "drawable", "render"]

#: Columns when the terminal's width is unknown: the classic terminal width (VT100, 80 columns).
DEFAULT_WIDTH = 80
#: Rows of one plot (title, canvas, ticks, axis labels): two plots fit a 50-row screen.  Never
#: cut to the terminal's height (plotext would, leaving an empty frame on a short terminal).
HEIGHT = 22
#: Narrowest plot drawn: below this the tick labels (up to 9 characters each) overlap.
MIN_WIDTH = 40
#: Marker characters, one per series label in order (plotext accepts any single character);
#: none is a frame, grid or tag character, so each is told apart without colour.
MARKERS = ("o", "x", "+", "*", "#", "@", "%", "&", "=", "$", "~", "^")
#: Ticks per axis at most: 5 labels of up to 9 characters fit 80 columns with room between.
MAX_TICKS = 5
#: Notes listed under a plot at most (the report shows them all).
MAX_NOTES = 3
#: Series roles drawn last, in this order, so the answer's curves stay on top where curves meet.
ON_TOP = ("default", "advised")
#: Frame characters where plotext's vertical line meets the top frame / a horizontal line meets
#: the right frame (a line at the canvas' last row or column may land on a corner instead).
TOP_JOINS = "┬┐"
RIGHT_JOINS = "┤┐┘"


def _points(spec: FigureSpec) -> list[list[tuple[float, float]]]:
    """Each series' ``(x, y)`` points a canvas can place: all, less those at or below zero on
    a log axis."""
    log_x, log_y = spec.x_scale == "log", spec.y_scale == "log"
    return [[(x, y) for x, y in zip(s.x, s.y) if not (log_x and x <= 0 or log_y and y <= 0)]
            for s in spec.series]


def drawable(spec: FigureSpec) -> bool:
    """True for curve figures (numeric x, at least one series with a point its axes can
    place); categorical bar figures (``spec.names``) are left to ``advisor report``."""
    return not spec.names and any(_points(spec))


def _ticks(lo: float, hi: float, unit: str, scale: str,
           axis: AxisScale) -> tuple[list[float], list[str]]:
    """At most ``MAX_TICKS`` tick positions in ``[lo, hi]`` (base ``unit``) and their labels,
    numbers in ``axis``' unit.  Log byte axes tick at powers of 2, other log axes at powers
    of 10."""
    from matplotlib.ticker import LogLocator, MaxNLocator

    vals: list = []
    if scale == "log" and lo > 0:
        base = 2 if unit in ("bytes", "B") else 10
        vals = [v for v in LogLocator(base=base, numticks=64).tick_values(lo, hi)
                if lo <= v <= hi]
        step = max(1, math.ceil(len(vals) / MAX_TICKS))
        vals = vals[::step]
    if len(vals) < 2:  # linear, or a log axis narrower than two of its ticks: nice numbers
        vals = [v for v in MaxNLocator(nbins=MAX_TICKS - 1).tick_values(lo, hi) if lo <= v <= hi]
    return [float(v) for v in vals], [axis.tick(v) for v in vals]


def _chars(spec: FigureSpec) -> list[str]:
    """The marker character of each series: one per distinct label, in order of first use."""
    by_label: dict[str, str] = {}
    for s in spec.series:
        by_label.setdefault(s.label, MARKERS[len(by_label) % len(MARKERS)])
    return [by_label[s.label] for s in spec.series]


def _legend(spec: FigureSpec, chars: list[str], width: int) -> list[str]:
    """``o cma-on   x cma-off``, wrapped to ``width``: each labelled series once, with its
    marker character; a series whose points are those of an earlier one says so (one curve
    covers the other on the canvas)."""
    entries, seen = [], set()
    for i, s in enumerate(spec.series):
        if not s.label or s.label in seen:
            continue
        seen.add(s.label)
        same = next((chars[j] for j, t in enumerate(spec.series[:i])
                     if t.label != s.label and t.x == s.x and t.y == s.y), None)
        entries.append(f"{chars[i]} {s.label}" + (f" (same points as {same})" if same else ""))
    lines: list[str] = []
    for entry in entries:  # whole entries per line: a character is never parted from its label
        if lines and len(lines[-1]) + 3 + len(entry) <= width:
            lines[-1] += "   " + entry
        else:
            lines += _wrap(entry, width)
    return lines


def _wrap(item: str, width: int, indent: int = 4) -> list[str]:
    """``item`` as lines under the plot, ``width`` at most: indented 2, continued at ``indent``
    (at 4 where a long word, a variable's name, does not fit there; cut only where it does
    not fit at 4 either)."""
    for at, cut in ((indent, False), (4, False), (4, True)):
        lines = textwrap.wrap(item, width, initial_indent="  ", subsequent_indent=" " * at,
                              break_on_hyphens=False, break_long_words=cut)
        if all(len(ln) <= width for ln in lines):
            break
    return lines


def _inside(m: FigureMarker, spec: FigureSpec, xs: list[float], ys: list[float]) -> bool:
    """Whether the marker's line falls on the canvas (within the drawn data's range)."""
    vals, log = (xs, spec.x_scale == "log") if m.axis == "x" else (ys, spec.y_scale == "log")
    return bool(vals) and min(vals) <= m.value <= max(vals) and not (log and m.value <= 0)


def _groups(spec: FigureSpec, xs: list[float], ys: list[float]):
    """The markers drawn, one group per line (axis, value): ``[(axis, value, tags)]``, tags
    ``A``, ``B``, ... in marker order; and every marker as ``(tag, value, label)``, tag ``-``
    for one outside the canvas."""
    groups: dict[tuple[str, float], list[str]] = {}
    listed = []
    for m in spec.markers:
        value = format_value(m.value, spec.x_unit if m.axis == "x" else spec.y_unit)
        if not _inside(m, spec, xs, ys):
            listed.append(("-", value, f"{m.label}, outside the measured range: not drawn"))
            continue
        n = sum(len(t) for t in groups.values())
        tag = ascii_uppercase[n % 26] + ("" if n < 26 else str(n // 26))
        groups.setdefault((m.axis, m.value), []).append(tag)
        listed.append((tag, value, m.label))
    return [(a, v, ",".join(t)) for (a, v), t in groups.items()], listed


def _key(listed: list[tuple[str, str, str]], width: int) -> list[str]:
    """The markers as a key under the plot, one per marker: tag, value, label in aligned
    columns (``A  8 KiB  crossover: CMA better from here on``), a label wrapped at its
    column."""
    if not listed:
        return []
    tw = max(len(t) for t, _, _ in listed)
    vw = max(len(v) for _, v, _ in listed)
    return [ln for t, v, label in listed
            for ln in _wrap(f"{t:<{tw}}  {v:<{vw}}  {label}", width, 2 + tw + 2 + vw + 2)]


def _position(v: float, lo: float, hi: float, log: bool, first: int, last: int) -> int:
    """Column (or row) of ``v`` on a canvas whose ``lo`` is at ``first`` and ``hi`` at
    ``last``: linear, or linear in log10 on a log axis."""
    f = math.log10 if log else float
    span = f(hi) - f(lo)
    frac = (f(v) - f(lo)) / span if span > 0 else 0.0
    return first + round(frac * (last - first))


def _snap(pos: int, joins: list[int]) -> int:
    """The frame join nearest to the computed ``pos`` (plotext's own rounding may put the line
    one cell off), ``pos`` itself when there is none within two cells."""
    near = [j for j in joins if abs(j - pos) <= 2]
    return min(near, key=lambda j: abs(j - pos)) if near else pos


def _tag_rows(cols: list[tuple[int, str]], width: int) -> list[str]:
    """Rows of tags above the frame, each tag starting at its line's column (ending there when
    it would pass ``width``); a tag that would touch the previous one on a row goes to the next
    row."""
    rows: list[list[str]] = []
    for col, tag in sorted(cols):
        start = max(0, min(col, width - len(tag)))
        row = next((r for r in rows if not "".join(r[max(0, start - 1):start + len(tag) + 1])
                    .strip()), None)
        if row is None:
            row = [" "] * width
            rows.append(row)
        row[start:start + len(tag)] = tag
    return ["".join(r).rstrip() for r in rows]


def _place_tags(lines: list[str], groups, spec: FigureSpec, xs, ys, width: int) -> list[str]:
    """``lines`` (plotext's plot) with each marker group's tags at its line: a row of tags
    above the top frame for vertical lines, the tags right of the frame for horizontal ones."""
    top = next((i for i, ln in enumerate(lines) if "┌" in ln), None)
    bottom = next((i for i, ln in enumerate(lines) if "└" in ln), None)
    if top is None or bottom is None:
        return lines
    left, right = lines[top].index("┌"), lines[top].rindex("┐")
    joins = [i for i, c in enumerate(lines[top]) if c in TOP_JOINS and left < i]
    cols = [(_snap(_position(v, min(xs), max(xs), spec.x_scale == "log", left + 1, right - 1),
                   joins), tags) for axis, v, tags in groups if axis == "x"]
    out = list(lines)
    row_joins = [i for i in range(top + 1, bottom) if len(out[i]) > right
                 and out[i][right] in RIGHT_JOINS]
    for axis, v, tags in groups:
        if axis == "y":
            row = _snap(_position(v, min(ys), max(ys), spec.y_scale == "log", bottom - 1,
                                  top + 1), row_joins)
            out[row] = out[row][:right + 1] + " " + tags
    return out[:top] + _tag_rows(cols, width) + out[top:]


def render(spec: FigureSpec, *, width: int = DEFAULT_WIDTH, height: int = HEIGHT) -> str:
    """``spec`` as text, ``width`` columns wide at most (``MIN_WIDTH`` at least), ``height``
    rows of plot whatever the terminal's height, no colour.

    :return: the title, the marker tags, the plot (axis labels naming the unit of their
        ticks), then the series' legend (marker character and label), the markers' key
        (``A  <value>  <label>``) and up to ``MAX_NOTES`` notes, wrapped to ``width``; ends
        with a newline.
    :raises ImportError: plotext or matplotlib missing (the ``report`` extra).
    :raises ValueError: ``spec`` has nothing to draw (:func:`drawable` is False).
    """
    import plotext as plt

    if not drawable(spec):
        raise ValueError(f"figure {spec.id}: nothing a terminal can draw (categorical or empty)")
    width = max(MIN_WIDTH, int(width))
    pts = _points(spec)
    xs = [x for p in pts for x, _ in p]
    ys = [y for p in pts for _, y in p]
    groups, listed = _groups(spec, xs, ys)
    right_tags = max((len(t) + 1 for a, _, t in groups if a == "y"), default=0)
    plt.clear_figure()
    plt.limitsize(False, False)  # our size, not the terminal's (a short one left no canvas)
    plt.plotsize(width - right_tags, height)
    plt.theme("clear")
    if spec.x_scale == "log":
        plt.xscale("log")
    if spec.y_scale == "log":
        plt.yscale("log")
    chars = _chars(spec)
    # the answer's curves last, and within a role marks (kind "points": the advice's losses)
    # over curves, so a few marked sizes are not hidden under the curve through them
    order = sorted(range(len(spec.series)), key=lambda i: (
        ON_TOP.index(spec.series[i].role) + 1 if spec.series[i].role in ON_TOP else 0,
        spec.series[i].kind == "points", i))
    for i in order:
        if pts[i]:
            plt.plot([x for x, _ in pts[i]], [y for _, y in pts[i]], marker=chars[i])
    for axis, v, _ in groups:
        (plt.vline if axis == "x" else plt.hline)(v)
    x_axis = axis_scale(spec.x_unit, min(xs), max(xs), spec.x_scale)
    y_axis = axis_scale(spec.y_unit, min(ys), max(ys), spec.y_scale)
    plt.xticks(*_ticks(min(xs), max(xs), spec.x_unit, spec.x_scale, x_axis))
    plt.yticks(*_ticks(min(ys), max(ys), spec.y_unit, spec.y_scale, y_axis))
    plt.xlabel(x_axis.label(spec.x_label))
    plt.ylabel(y_axis.label(spec.y_label))
    text = plt.uncolorize(plt.build())
    plt.clear_figure()
    lines = [ln.rstrip() for ln in text.splitlines()]
    title = [t.center(width).rstrip() for t in textwrap.wrap(spec.title, width)]
    lines = title + _place_tags(lines, groups, spec, xs, ys, width)
    below = _legend(spec, chars, width)
    below += _key(listed, width)
    for note in spec.notes[:MAX_NOTES]:
        below += _wrap(note, width)
    return "\n".join(lines + below) + "\n"
