"""Figure specs as text for a terminal (``advisor show --plot``), drawn by plotext.

Pure apart from plotext's own state: :func:`render` returns the text, the CLI prints it.  plotext
(5.x API) is in the optional ``report`` extra and imported lazily; without it :func:`render`
raises ``ImportError`` and the CLI names the extra.  Tick positions come from matplotlib's
locators (``MaxNLocator`` / ``LogLocator``, same extra; no drawing), tick labels from
``advisor.specs.units`` (KiB/MiB, µs/ms, GB/s), so the terminal reads like the report.

What a terminal shows of a spec: each series' medians as a curve with its own marker character
(distinct without colour: a captured screen has none), the markers (thresholds, ceilings) as
vertical or horizontal lines listed under the plot with their values, and the first notes.  CI
bands and categorical bar figures are left to ``advisor report`` (:func:`drawable` says which
specs are curves).

Public API: :data:`DEFAULT_WIDTH`, :data:`HEIGHT`, :func:`drawable`, :func:`render`.
"""

from __future__ import annotations

import math

from advisor.specs.figures import FigureSpec
from advisor.specs.units import format_value

__all__ = ["DEFAULT_WIDTH", "HEIGHT", "drawable", "render"]

#: Columns when the terminal's width is unknown: the classic terminal width (VT100, 80 columns).
DEFAULT_WIDTH = 80
#: Rows of one plot (title, canvas, ticks, axis labels): two plots fit a 50-row screen.  Never
#: cut to the terminal's height (plotext would, leaving an empty frame on a short terminal).
HEIGHT = 22
#: Narrowest plot drawn: below this the tick labels (up to 9 characters each) overlap.
MIN_WIDTH = 40
#: Marker characters, one per series in order (plotext accepts any single character).
MARKERS = ("o", "x", "+", "*", "#", "@", "%", "&")
#: Ticks per axis at most: 5 labels of up to 9 characters fit 80 columns with room between.
MAX_TICKS = 5
#: Notes listed under a plot at most (the report shows them all).
MAX_NOTES = 3


def drawable(spec: FigureSpec) -> bool:
    """True for curve figures (numeric x, at least one series with a point); categorical bar
    figures (``spec.names``) are left to ``advisor report``."""
    return not spec.names and not spec.is_empty()


def _ticks(lo: float, hi: float, unit: str, scale: str) -> tuple[list[float], list[str]]:
    """At most ``MAX_TICKS`` tick positions in ``[lo, hi]`` and their human-readable labels."""
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
    return [float(v) for v in vals], [format_value(v, unit) for v in vals]


def render(spec: FigureSpec, *, width: int = DEFAULT_WIDTH, height: int = HEIGHT) -> str:
    """``spec`` as text, ``width`` columns wide at most (``MIN_WIDTH`` at least), ``height``
    rows of plot whatever the terminal's height, no colour.

    :return: the plot, then one line per marker (``| label: value``) and up to ``MAX_NOTES``
        notes; ends with a newline.
    :raises ImportError: plotext or matplotlib missing (the ``report`` extra).
    :raises ValueError: ``spec`` has nothing to draw (:func:`drawable` is False).
    """
    import plotext as plt

    if not drawable(spec):
        raise ValueError(f"figure {spec.id}: nothing a terminal can draw (categorical or empty)")
    width = max(MIN_WIDTH, int(width))
    plt.clear_figure()
    plt.limitsize(False, False)  # our size, not the terminal's (a short one left no canvas)
    plt.plotsize(width, height)
    plt.theme("clear")
    log_x = spec.x_scale == "log"
    log_y = spec.y_scale == "log"
    xs = [x for s in spec.series for x in s.x if not (log_x and x <= 0)]
    ys = [y for s in spec.series for y in s.y if not (log_y and y <= 0)]
    if log_x:
        plt.xscale("log")
    if log_y:
        plt.yscale("log")
    for i, s in enumerate(spec.series):
        pts = [(x, y) for x, y in zip(s.x, s.y)
               if not (log_x and x <= 0) and not (log_y and y <= 0)]
        if not pts:
            continue
        plt.plot([x for x, _ in pts], [y for _, y in pts], label=s.label,
                 marker=MARKERS[i % len(MARKERS)])
    below = []
    for m in spec.markers:
        unit = spec.x_unit if m.axis == "x" else spec.y_unit
        inside = (min(xs) <= m.value <= max(xs)) if m.axis == "x" else True
        if inside and not (m.axis == "x" and log_x and m.value <= 0):
            (plt.vline if m.axis == "x" else plt.hline)(m.value)
        below.append(f"  | {m.label}: {format_value(m.value, unit)}"
                     + ("" if inside else " (outside the measured range)"))
    if xs:
        plt.xticks(*_ticks(min(xs), max(xs), spec.x_unit, spec.x_scale))
    if ys:
        plt.yticks(*_ticks(min(ys), max(ys), spec.y_unit, spec.y_scale))
    plt.title(spec.title)
    plt.xlabel(f"{spec.x_label} ({spec.x_unit})" if spec.x_unit else spec.x_label)
    plt.ylabel(f"{spec.y_label} ({spec.y_unit})" if spec.y_unit else spec.y_label)
    text = plt.uncolorize(plt.build())
    plt.clear_figure()
    lines = [ln.rstrip() for ln in text.splitlines()]
    lines += below + [f"  {n}" for n in spec.notes[:MAX_NOTES]]
    return "\n".join(lines) + "\n"
