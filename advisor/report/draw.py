"""Draw a :class:`~advisor.specs.figures.FigureSpec` with matplotlib: SVG text or PNG bytes.

The spec is drawn as it is, never reinterpreted: one curve per series (CI band ``lo..hi``
shaded for lines and steps, error bars for points and bars, strips spread sideways by a fixed
pattern), each marker a labelled vertical or horizontal line whose style says its role, each
band a shaded span, each mark (``FigureMark``) with its label beside it, a legend (one entry per
label), axis labels with their unit, and tick labels in human units (``advisor.specs.units``:
KiB/MiB, ns/µs/ms, MB/s / GB/s).  Categorical x (``FigureSpec.names``) gets one tick per name.

matplotlib is imported here only, lazily, with its non-interactive Agg canvas through the
object API (``matplotlib.figure.Figure``; pyplot and its GUI backends are never touched).  Output
is deterministic: fixed size and dpi, a fixed ``svg.hashsalt`` (the figure's key, so two figures
inlined in one page never share an element id for different content), no date in the metadata;
the same spec gives the same bytes with the same matplotlib.

Public API: :func:`render` (``"svg"`` -> UTF-8 bytes, ``"png"`` -> bytes), :func:`svg_text`,
:data:`FIGSIZE_IN`, :data:`DPI`.  Raises ``ImportError`` without matplotlib (the CLI names the
``report`` extra) and ``ValueError`` for a spec with nothing to draw.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from typing import Callable, Literal

from advisor.report.markers import draw_markers
from advisor.specs.figures import FigureMarker, FigureSpec
from advisor.specs.units import AxisScale, axis_scale, format_value

__all__ = ["FIGSIZE_IN", "DPI", "axis_scale_of", "figure", "render", "svg_text"]

#: Figure size in inches (width, height): readable at 100 % in a page 900 px wide and on a
#: 16:9 slide; with :data:`DPI` a PNG is 1200 x 720 pixels.
FIGSIZE_IN = (8.0, 4.8)
#: Resolution of PNG files (SVG is vector; its nominal 72 dpi does not change the drawing).
DPI = 150

#: Line style, colour and width per ``FigureMarker.role``: each role looks different in print
#: and in grey scale (dash pattern, not colour alone).
MARKER_STYLES = {
    "default": {"linestyle": (0, (6, 3)), "color": "#b2182b", "linewidth": 1.6},
    "advised": {"linestyle": "-", "color": "#1b7837", "linewidth": 1.8},
    "crossover": {"linestyle": (0, (6, 2, 1, 2)), "color": "#762a83", "linewidth": 1.4},
    "limit": {"linestyle": (0, (1, 2)), "color": "#222222", "linewidth": 1.4},
    "note": {"linestyle": (0, (3, 3)), "color": "#777777", "linewidth": 1.0},
}
#: Series styles per ``FigureSeries.role``; ``measured`` series take the colour cycle.
SERIES_STYLES = {
    "default": {"color": "#b2182b", "linestyle": "--"},
    "advised": {"color": "#1b7837", "linestyle": "-"},
    "reference": {"color": "#777777", "linestyle": ":"},
}
#: Colours of measured series (matplotlib's colour-blind-safe "tableau" order, red and green
#: left to the default/advised roles).
CYCLE = ("#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#bcbd22")
BAND_COLOURS = ("#fdb863", "#b2abd2", "#a6dba0", "#f4a582")


#: Half the width (in x units: categories are 1 apart) over which a strip's dots are spread; the
#: median bar is a little wider, and the 0.6 left to the next category holds the bar's label.
STRIP_HALF_WIDTH = 0.15
MARK_BAR_HALF_WIDTH = 0.22
#: Room right of the last category for a mark's label, x units ("median 1.23 s" at the
#: legend's 7.5 pt font is about half a category wide at FIGSIZE_IN with four categories).
MARK_LABEL_ROOM = 0.95
#: Fractional offsets of a strip's dots: multiples of the golden ratio modulo 1 (a
#: low-discrepancy sequence: any number of dots spread evenly, deterministically; no random
#: jitter, so the same spec gives the same picture).
GOLDEN = (5 ** 0.5 - 1) / 2
#: Height of the crosses of ``shape="x"`` marks above the bottom edge, as a fraction of the plot
#: height, and the room the y axis gets below its lowest value for them.
CROSS_Y = 0.04
CROSS_ROOM = 0.12

#: Characters of category names one line of the x axis holds (all names side by side, at the
#: tick labels' 10 pt font, in the axes left beside the legend at ``FIGSIZE_IN``).
CATEGORY_CHARS = 60

#: Longest legend label kept in a column right of the axes, characters: at the legend's 7.5 pt
#: font about a third of ``FIGSIZE_IN``'s width, so the axes keep two thirds.
LEGEND_SIDE_CHARS = 36

#: A number and its unit (``1 GiB``, ``16 B``): kept on one line when a name is wrapped.
UNBROKEN = re.compile(r"(\d) (B|KiB|MiB|GiB|TiB|s|ms|µs|ns|x|%)\b")

#: A log axis spanning less than this ratio (two decades) gets ticks at 1, 2 and 5 of each decade
#: (under one decade: linear "nice" steps); wider ones at the powers of ten.
NARROW_LOG_SPAN = 100.0


def _values(spec: FigureSpec, which: str) -> list[float]:
    """Every finite value the series put on axis ``which`` (CI bounds included for y)."""
    if which == "x":
        vals = [v for s in spec.series for v in s.x]
    else:
        vals = [v for s in spec.series for v in s.y + (s.lo or []) + (s.hi or [])]
        vals += [m.y for m in spec.marks if m.y is not None]
    return [v for v in vals if math.isfinite(v)]


def axis_scale_of(spec: FigureSpec, which: str) -> AxisScale:
    """The unit axis ``which`` of ``spec`` is read in (``advisor.specs.units.axis_scale`` of
    the range its data spans); the terminal plot uses the same."""
    unit = spec.x_unit if which == "x" else spec.y_unit
    scale = spec.x_scale if which == "x" else spec.y_scale
    vals = _values(spec, which)
    if scale == "log":
        vals = [v for v in vals if v > 0]
    return axis_scale(unit, min(vals), max(vals), scale) if vals else axis_scale(unit, 0, 0)


def _power_of_two_step(span: float) -> float:
    """The power of two (bytes) that cuts ``span`` into 3 to 8 steps."""
    step = 2.0 ** math.floor(math.log2(span / 3)) if span > 0 else 1.0
    return max(step, 1.0)


def _axis(ax, which: str, spec: FigureSpec) -> AxisScale:
    """Ticks of axis ``which``: categories by name, else numbers in the axis' one unit
    (``axis_scale_of``), power-of-two steps on byte axes.  Returns that unit."""
    from matplotlib import ticker

    unit = spec.x_unit if which == "x" else spec.y_unit
    scale = spec.x_scale if which == "x" else spec.y_scale
    axis = ax.xaxis if which == "x" else ax.yaxis
    if which == "x" and spec.names:
        keys = sorted(spec.names)
        axis.set_major_locator(ticker.FixedLocator(keys))
        # names too wide for their share of the axis are wrapped at spaces and hyphens (never
        # inside a word, nor between a number and its unit) and never rotated (a rotated name
        # runs off the page's left edge)
        width = max(CATEGORY_CHARS // len(keys), 12)
        axis.set_major_formatter(ticker.FixedFormatter(
            ["\n".join(textwrap.fill(UNBROKEN.sub("\\1\u00a0\\2", ln), width,
                                      break_long_words=False)
                       for ln in spec.names[k].split("\n")) for k in keys]))
        axis.set_minor_locator(ticker.NullLocator())
        return AxisScale("")
    shown = axis_scale_of(spec, which)
    lo, hi = ax.get_xlim() if which == "x" else ax.get_ylim()
    byte_axis = unit in ("bytes", "byte", "B")
    if scale == "log":
        if byte_axis:  # powers of two: 1 Ki, 64 Ki, 1 Mi, never 1e+05
            axis.set_major_locator(ticker.LogLocator(base=2, numticks=9))
        elif lo > 0 and hi / lo < 10.0:
            # within one decade a log axis may have no power of ten at all (a 1.6-2.7 us
            # latency range): nice linear steps instead, on the same log scale
            axis.set_major_locator(ticker.MaxNLocator(nbins=5))
        elif lo > 0 and hi / lo < NARROW_LOG_SPAN:  # 1, 2, 5 of each decade
            axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_minor_formatter(ticker.NullFormatter())
    elif byte_axis:  # 0, 256 MiB, 512 MiB ... not 191/381/572 MiB
        axis.set_major_locator(ticker.MultipleLocator(_power_of_two_step(abs(hi - lo))))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: shown.tick(v)))
    return shown


def _series(ax, spec: FigureSpec) -> None:
    # ``FigureSeries.marker`` shapes: a ring wide enough to show another series' dot inside it
    shapes = {"ring": {"marker": "o", "markersize": 8, "markerfacecolor": "none",
                       "markeredgewidth": 1.4},
              "dot": {"marker": "o", "markersize": 3.5},
              "diamond": {"marker": "D", "markersize": 10}}
    bars = [s for s in spec.series if s.kind == "bar"]
    width = 0.8 / max(len(bars), 1)
    measured = 0
    for s in spec.series:
        style = dict(SERIES_STYLES.get(s.role, {}))
        if not style:
            style = {"color": CYCLE[measured % len(CYCLE)], "linestyle": "-"}
            measured += 1
        colour = style["color"]
        has_ci = s.lo is not None and s.hi is not None
        if s.kind == "bar" and spec.y_scale == "log":
            # a bar on a log axis has no zero to stand on (its length says nothing): drawn as
            # dot-and-whisker at the bar's place
            i = bars.index(s)
            xs = [x + (i - (len(bars) - 1) / 2) * width for x in s.x] if spec.names else s.x
            ax.plot(xs, s.y, linestyle="none", marker="o", markersize=6, color=colour,
                    label=s.label, zorder=3)
        elif s.kind == "bar":
            i = bars.index(s)
            xs = [x + (i - (len(bars) - 1) / 2) * width for x in s.x] if spec.names else s.x
            ax.bar(xs, s.y, width=width if spec.names else 0.8, color=colour, alpha=0.85,
                   label=s.label, zorder=2)
        elif s.kind == "strip":
            xs = [x + ((i * GOLDEN + 0.5) % 1.0 - 0.5) * 2 * STRIP_HALF_WIDTH
                  for i, x in enumerate(s.x)]
            ax.plot(xs, s.y, linestyle="none", marker="o", markersize=5, color=colour,
                    alpha=0.8, markerfacecolor="none" if s.hollow else colour,
                    markeredgewidth=1.3, label=s.label, zorder=3)
            continue
        elif s.kind == "points":
            ax.plot(s.x, s.y, linestyle="none", color=colour, label=s.label, zorder=3,
                    **shapes.get(s.marker, {"marker": "o", "markersize": 5}))
        else:
            ax.plot(s.x, s.y, drawstyle="steps-mid" if s.kind == "step" else "default",
                    linewidth=1.6, label=s.label, zorder=3, **style, **shapes.get(
                        s.marker, {"marker": "o" if len(s.x) <= 40 else None, "markersize": 3}))
        if not has_ci:
            continue
        if s.kind in ("line", "step"):
            ax.fill_between(s.x, s.lo, s.hi, color=colour, alpha=0.2, linewidth=0,
                            step="mid" if s.kind == "step" else None, zorder=1,
                            label=f"{s.label} CI")
        else:
            xs = ([x + (bars.index(s) - (len(bars) - 1) / 2) * width for x in s.x]
                  if s.kind == "bar" and spec.names else s.x)
            err = [[max(y - lo, 0.0) for y, lo in zip(s.y, s.lo)],
                   [max(hi - y, 0.0) for y, hi in zip(s.y, s.hi)]]
            on_bar = s.kind == "bar" and spec.y_scale != "log"
            ax.errorbar(xs, s.y, yerr=err, fmt="none", ecolor="#333333" if on_bar else colour,
                        elinewidth=1.2, capsize=4, zorder=4)


def _bands(ax, spec: FigureSpec) -> None:
    labels = list(dict.fromkeys(b.label for b in spec.bands))  # a label keeps its colour
    for b in spec.bands:
        span = ax.axvspan if b.axis == "x" else ax.axhspan
        colour = BAND_COLOURS[labels.index(b.label) % len(BAND_COLOURS)]
        span(b.low, b.high, color=colour, alpha=0.3, linewidth=0, zorder=0, label=b.label)


def _marks(ax, spec: FigureSpec) -> None:
    """Each mark with its label to its right: bars at their value, crosses on the bottom edge
    (the y axis extended below the lowest value so no dot hides under a cross)."""
    crosses = [m for m in spec.marks if m.shape == "x"]
    if crosses:
        lo, hi = ax.get_ylim()
        if spec.y_scale == "log" and lo > 0:
            ax.set_ylim(lo / (hi / lo) ** CROSS_ROOM, hi)
        else:
            ax.set_ylim(lo - CROSS_ROOM * (hi - lo), hi)
    for m in spec.marks:
        colour = SERIES_STYLES.get(m.role, {}).get("color", CYCLE[0])
        if m.shape == "label" and m.y is not None:
            ax.annotate(m.label, (m.x, m.y), xytext=(6, 0), textcoords="offset points",
                        va="center", ha="left", fontsize=7.5, color=colour, zorder=7)
        elif m.shape == "bar" and m.y is not None:
            ax.hlines(m.y, m.x - MARK_BAR_HALF_WIDTH, m.x + MARK_BAR_HALF_WIDTH, color=colour,
                      linewidth=2.4, zorder=6)
            ax.annotate(m.label, (m.x + MARK_BAR_HALF_WIDTH, m.y), xytext=(3, 0),
                        textcoords="offset points", va="center", ha="left", fontsize=7.5,
                        color=colour, zorder=7)
        else:
            trans = ax.get_xaxis_transform()  # x in data, y in axes fraction
            ax.plot([m.x], [CROSS_Y], linestyle="none", marker="x", markersize=8,
                    markeredgewidth=2, color=colour, transform=trans, zorder=6, clip_on=False)
            # above the cross, centred on its category: side by side, categories' crosses
            # and labels never meet (a label to the right ran into the next category's)
            ax.annotate(m.label, (m.x, CROSS_Y), xycoords=trans, xytext=(0, 7),
                        textcoords="offset points", va="bottom", ha="center", fontsize=7.5,
                        color=colour, zorder=7)
    if spec.names and spec.marks:  # half a category each side, room for a label on the right
        last = max(spec.names)
        room = MARK_LABEL_ROOM if any(m.x > last - 0.5 for m in spec.marks) else 0.5
        ax.set_xlim(min(spec.names) - 0.5, last + room)


def _fit_ranges(ax, spec: FigureSpec) -> None:
    """The x range fits the data (matplotlib's margins around the series' points, never
    stretched by a marker or a band); the y range also takes in every y marker (a ceiling is
    part of what the figure says)."""
    ax.autoscale_view()
    if spec.names:  # half a category each side
        ax.set_xlim(min(spec.names) - 0.5, max(spec.names) + 0.5)
    else:
        ax.set_xlim(*ax.get_xlim())
    ys = [m.value for m in spec.markers if m.axis == "y"]
    if ys:
        lo, hi = ax.get_ylim()
        ax.set_ylim(min([lo] + ys), max([hi] + ys))


def _legend(fig, ax) -> None:
    """One entry per label, outside the axes (never over the data): on the right, or above the
    axes in two columns when a label is longer than ``LEGEND_SIDE_CHARS`` (a column of long
    labels on the right would leave the plot half the page); a series and its CI band share one
    entry (line over shaded patch)."""
    from matplotlib.legend_handler import HandlerTuple

    handles, labels = ax.get_legend_handles_labels()
    first: dict = {}  # series sharing a label share one entry: the first one's
    for handle, label in zip(handles, labels):
        first.setdefault(label, handle)
    bands = {label[:-3]: first.pop(label) for label in list(first)
             if label.endswith(" CI") and label[:-3] in first}
    if not first:
        return
    entries = [(bands[k], h) if k in bands else h for k, h in first.items()]
    title = "shaded: 95 % CI" if bands else None
    side = max(len(label) for label in first) <= LEGEND_SIDE_CHARS
    fig.legend(entries, list(first), loc="outside right upper" if side else "outside upper center",
               ncols=1 if side else 2, fontsize=7.5, title=title, title_fontsize=7.5,
               handler_map={tuple: HandlerTuple(ndivide=1)}, frameon=False)


def _marker_label(spec: FigureSpec) -> Callable[[FigureMarker], str]:
    def label(m: FigureMarker) -> str:
        unit = spec.x_unit if m.axis == "x" else spec.y_unit
        where = (spec.names or {}).get(m.value) if m.axis == "x" else None
        return f"{m.label} ({where or format_value(m.value, unit)})"
    return label


def figure(spec: FigureSpec, footer: str = ""):
    """``spec`` drawn on a ``matplotlib.figure.Figure`` of ``FIGSIZE_IN`` at ``DPI`` with an Agg
    canvas, laid out once and frozen (what is saved is what a test measures).  ``footer``: a
    line under everything (machine, date, profile).

    :raises ValueError: the spec has no point to draw.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if spec.is_empty():
        raise ValueError(f"figure {spec.id}: no series has a point to draw")
    fig = Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if spec.x_scale == "log" and not spec.names:
        ax.set_xscale("log", base=2 if spec.x_unit in ("bytes", "B") else 10)
    if spec.y_scale == "log":
        ax.set_yscale("log", base=2 if spec.y_unit in ("bytes", "B") else 10)
    _series(ax, spec)
    _fit_ranges(ax, spec)
    _bands(ax, spec)
    _marks(ax, spec)
    x_unit = _axis(ax, "x", spec)
    y_unit = _axis(ax, "y", spec)
    ax.set_xlabel(x_unit.label(spec.x_label))
    ax.set_ylabel(y_unit.label(spec.y_label))
    ax.set_title(spec.title, fontsize=11)
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6, zorder=0)
    _legend(fig, ax)
    under = list(spec.notes) + ([footer] if footer else [])
    if under:
        fig.get_layout_engine().set(h_pad=0.06)
        fig.supxlabel("\n".join(under), fontsize=7.5, x=0.01, ha="left", color="#333333")
    renderer = fig.canvas.get_renderer()
    fig.get_layout_engine().execute(fig)
    ylim = ax.get_ylim()
    draw_markers(ax, spec, MARKER_STYLES, _marker_label(spec), renderer)
    if ax.get_ylim() != ylim:  # the headroom may have widened the tick labels
        fig.get_layout_engine().execute(fig)
    fig.set_layout_engine("none")
    return fig


def render(spec: FigureSpec, fmt: Literal["svg", "png"], *, salt: str = "",
           footer: str = "") -> bytes:
    """The figure of ``spec`` as an SVG document (UTF-8) or a PNG file, ``FIGSIZE_IN`` at
    ``DPI``.  ``salt`` seeds the SVG element ids (use the figure's ``<probe>-<id>``); the
    caption is stored as the file's ``Description`` metadata, the title as its ``Title``.

    :raises ValueError: ``fmt`` is neither svg nor png, or the spec has no point to draw.
    :raises ImportError: matplotlib is not installed (the ``report`` extra).
    """
    import matplotlib

    if fmt not in ("svg", "png"):
        raise ValueError(f"format {fmt!r}: expected svg or png")
    rc = {"svg.hashsalt": f"advisor-report-{salt or spec.id}", "svg.fonttype": "path",
          "font.family": "DejaVu Sans", "axes.unicode_minus": False}
    with matplotlib.rc_context(rc):
        fig = figure(spec, footer)
        buf = io.BytesIO()
        meta = ({"Date": None, "Title": spec.title, "Description": spec.caption}
                if fmt == "svg" else {"Title": spec.title, "Description": spec.caption})
        fig.savefig(buf, format=fmt, metadata=meta)
    return buf.getvalue()


def svg_text(spec: FigureSpec, *, salt: str = "", footer: str = "") -> str:
    """The ``<svg>`` element of ``spec`` alone (no XML prolog or doctype), to inline in HTML."""
    text = render(spec, "svg", salt=salt, footer=footer).decode("utf-8")
    return text[text.index("<svg"):]
