"""Every figure of every shipped profile, drawn as ``advisor report`` draws it, measured the way a
reader looks at it (matplotlib's own bounding boxes, after the layout is final):

* no two labels drawn at the same place: every marker's label (thresholds, crossovers, often at
  one x) and every mark's label is its own box, overlapping no other one;
* every marker is named: one label per marker, with the marker's text, and no label lies
  across a vertical marker line;
* the legend overlaps neither the axes (it is outside them, so no curve runs under it) nor a
  label, the title, the axis labels and ticks, or the notes and footer under the figure;
* no data point lies under a marker's label;
* tick labels are numbers in the unit the axis label names (``bandwidth (GB/s)`` over ``0.5 .. 20``,
  ``message size (B)`` over ``1 Ki .. 16 Mi``), never a unit of their own;
* the x range fits the data: no tick lies outside the span of the series' x values by more than
  matplotlib's margin (the THP figures once started at 1 KiB for data from 64 KiB).
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("matplotlib", reason="the report extra is not installed")

from advisor.shipped import list_shipped  # noqa: E402

#: A tick label: a number, with a binary prefix on a ``B`` axis (``64 Ki``).
TICK = re.compile(r"^-?\d+(\.\d+)?(e[+-]?\d+)?( (Ki|Mi|Gi|Ti))?$")
#: The unit in an axis label: the last parenthesised word group (``latency (µs)``).
LABEL_UNIT = re.compile(r"\(([^()]+)\)$")


def _figures():
    from advisor.plugins import load
    from advisor.profile import load_profile
    from advisor.report.collect import collect_figures
    from advisor.shipped import shipped_path

    probes = dict(load().probes)
    out = []
    for p in list_shipped():
        figs = collect_figures(load_profile(shipped_path(p.name)), probes)
        out += [pytest.param(spec, id=f"{p.name}:{probe}-{spec.id}") for probe, spec in figs.items()]
    return out


FIGURES = _figures()


def _drawn(spec):
    from advisor.report.draw import figure

    fig = figure(spec, footer="class x · host h · probed 2026-12-01 · profile @p")
    fig.canvas.draw()
    return fig, fig.axes[0], fig.canvas.get_renderer()


@pytest.mark.parametrize("spec", FIGURES)
def test_labels_are_apart_and_every_marker_is_named(spec):
    from advisor.report.markers import MARKER_LABEL_GID

    fig, ax, r = _drawn(spec)
    labels = [t for t in ax.texts if t.get_text()]
    named = [t for t in labels if t.get_gid() == MARKER_LABEL_GID]
    assert len(named) == len(spec.markers)
    for m in spec.markers:
        assert any(m.label in t.get_text() for t in named), m.label
    boxes = [t.get_window_extent(r) for t in labels]
    from advisor.report.markers import MARKER_LINE_GID

    for line in ax.lines:  # no label across a vertical marker line
        if line.get_gid() != MARKER_LINE_GID or line.get_xdata()[0] != line.get_xdata()[1]:
            continue
        (x0, y0), (x1, y1) = line.get_transform().transform(line.get_xydata())
        for t, b in zip(labels, boxes):
            assert not (b.x0 + 1 < x0 < b.x1 - 1 and b.y0 + 1 < max(y0, y1)), t.get_text()
    for i, b in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            assert not b.overlaps(boxes[j]), (labels[i].get_text(), labels[j].get_text())
        assert fig.bbox.x0 <= b.x0 and b.x1 <= fig.bbox.x1, labels[i].get_text()


@pytest.mark.parametrize("spec", FIGURES)
def test_the_legend_is_off_the_data_and_the_labels(spec):
    fig, ax, r = _drawn(spec)
    frame = ax.get_window_extent(r)
    words = [ax.title, ax.xaxis.label, ax.yaxis.label] + ax.get_xticklabels() + \
        ax.get_yticklabels() + ([fig._supxlabel] if fig._supxlabel else [])
    words = [w for w in words if w.get_text() and w.get_visible()]
    for legend in fig.legends + ([ax.get_legend()] if ax.get_legend() else []):
        box = legend.get_window_extent(r)
        assert not box.overlaps(frame), spec.id
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 + 1, spec.id
        assert fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1 + 1, spec.id
        for w in words:  # nor over the title, an axis' words or the notes under the figure
            assert not box.overlaps(w.get_window_extent(r)), (spec.id, w.get_text())
    from advisor.report.markers import MARKER_LABEL_GID

    # no data point under a marker's label
    points = [ax.transData.transform((x, y)) for s in spec.series for x, y in zip(s.x, s.y)
              if s.kind != "bar"]
    for t in ax.texts:
        if t.get_gid() != MARKER_LABEL_GID:
            continue
        b = t.get_window_extent(r)
        inside = [p for p in points if b.x0 <= p[0] <= b.x1 and b.y0 <= p[1] <= b.y1]
        assert not inside, (spec.id, t.get_text())


@pytest.mark.parametrize("spec", FIGURES)
def test_ticks_are_in_the_axis_labels_unit(spec):
    from advisor.report.draw import axis_scale_of

    fig, ax, _ = _drawn(spec)
    axes = [("y", ax.get_ylabel(), ax.yaxis)] + ([] if spec.names else
                                                 [("x", ax.get_xlabel(), ax.xaxis)])
    for which, label, axis in axes:
        unit = axis_scale_of(spec, which).unit
        m = LABEL_UNIT.search(label)
        if unit:
            assert m and m.group(1) == unit, (label, unit)
        lo, hi = sorted(ax.get_xlim() if which == "x" else ax.get_ylim())
        texts = [t.get_text() for t in axis.get_majorticklabels()
                 if t.get_text() and lo <= t.get_position()[0 if which == "x" else 1] <= hi]
        assert len(texts) >= 2, (spec.id, which, texts)
        for text in texts:
            assert TICK.match(text), (spec.id, which, label, text)
            if unit != "B":
                assert " " not in text, (spec.id, which, text)


@pytest.mark.parametrize("spec", [f for f in FIGURES if not f.values[0].names])
def test_the_x_range_fits_the_data(spec):
    import math

    fig, ax, _ = _drawn(spec)
    xs = [x for s in spec.series for x in s.x]
    lo, hi = ax.get_xlim()
    if spec.x_scale == "log":
        span = math.log(max(xs)) - math.log(min(xs)) or 1.0
        assert math.log(min(xs)) - math.log(lo) <= 0.1 * span
        assert math.log(hi) - math.log(max(xs)) <= 0.1 * span
    else:
        span = max(xs) - min(xs) or 1.0
        assert min(xs) - lo <= 0.1 * span and hi - max(xs) <= 0.1 * span


def test_coinciding_markers_are_drawn_side_by_side():
    """Three markers at one x (crossover = default = advised = 8 KiB, as the shipped MPICH
    profile has them): three lines, each at its own place on the page, each labelled."""
    from advisor.report.markers import LINE_GAP_PT
    from advisor.specs.figures import FigureMarker, FigureSeries, FigureSpec

    spec = FigureSpec(id="t", title="t", caption="c", x_label="message size", x_unit="bytes",
                      y_label="bandwidth", y_unit="bytes/s", x_scale="log", y_scale="log",
                      series=[FigureSeries(label="a", x=[1024, 8192, 65536], y=[1e9, 4e9, 9e9])],
                      markers=[FigureMarker(axis="x", value=8192, label=r, role=r)
                               for r in ("crossover", "default", "advised")])
    fig, ax, r = _drawn(spec)
    xs = sorted({round(float(line.get_transform().transform((8192, 0.5))[0]), 1)
                 for line in ax.lines if list(line.get_xdata()) == [8192, 8192]})
    assert len(xs) == 3
    gap_px = LINE_GAP_PT * fig.dpi / 72
    assert all(abs((b - a) - gap_px) < 1.0 for a, b in zip(xs, xs[1:])), xs


def test_bars_on_a_log_axis_are_dot_and_whisker():
    from advisor.specs.figures import FigureSeries, FigureSpec

    spec = FigureSpec(id="t", title="t", caption="c", x_label="op", x_unit="", y_label="time",
                      y_unit="s", y_scale="log", names={0: "a", 1: "b"},
                      series=[FigureSeries(label="s", x=[0, 1], y=[1e-4, 1e-2], kind="bar",
                                           lo=[0.9e-4, 0.9e-2], hi=[1.1e-4, 1.1e-2])])
    _, ax, _ = _drawn(spec)
    assert not ax.patches  # no bar
    assert [list(line.get_ydata()) for line in ax.lines if line.get_marker() == "o"] == [
        [1e-4, 1e-2]]


def test_the_footer_is_under_the_figure():
    from advisor.specs.figures import FigureSeries, FigureSpec

    spec = FigureSpec(id="t", title="t", caption="c", x_label="x", x_unit="count", y_label="y",
                      y_unit="count", series=[FigureSeries(label="s", x=[1, 2], y=[1, 2])])
    fig, ax, r = _drawn(spec)
    foot = fig._supxlabel
    assert foot.get_text().endswith("profile @p")
    assert foot.get_window_extent(r).y1 < ax.get_window_extent(r).y0
