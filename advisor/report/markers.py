"""Draw a figure's markers (thresholds, crossovers, ceilings) so that each one can be told apart.

A probe's markers often coincide: the crossover, the library default and the advice all at
8 KiB.  Drawn as plain lines at one x they cover each other and only the last one shows; named
only in a legend the reader has to match dash patterns.  Here:

* markers closer than :data:`MERGE_PT` on the page form one group; the group's lines are drawn
  side by side, :data:`LINE_GAP_PT` apart (each keeps its role's dash pattern and colour from
  ``draw.MARKER_STYLES``), so every one of them shows;
* every marker is named where it is drawn: one label per marker, in its role's colour, in rows
  at the top of the axes beside its lines, each label on a row of its own; a group's lines stop
  under its last label, and the rows are ordered so that no label crosses another group's
  lines (labels that run right first, in x order; then those that must run left);
* a marker outside the x range the data spans is not drawn as a line (the range fits the data)
  but labelled at that edge with an arrow, ``◂ default threshold (8 KiB)``;
* the y axis gets headroom so no curve or CI band runs under a label.

Public API: :func:`draw_markers` (called by ``advisor.report.draw`` with a laid-out figure),
:data:`MARKER_LABEL_GID` (the ``gid`` of every label drawn here, for tests).
"""

from __future__ import annotations

import math
from typing import Callable

from advisor.specs.figures import FigureMarker, FigureSpec

__all__ = ["MARKER_LABEL_GID", "MARKER_LINE_GID", "draw_markers"]

#: ``gid`` of the label texts drawn here (``advisor.report.draw`` tests find them by it).
MARKER_LABEL_GID = "marker-label"
#: ``gid`` of the marker lines drawn here.
MARKER_LINE_GID = "marker-line"
#: Markers nearer than this on the page (points) are one group: 4 pt is about a line's width
#: plus the gap at which two 1.6 pt lines read as two (at 100 % in a 900 px page).
MERGE_PT = 4.0
#: Distance between the lines of one group, points: wider than the widest marker line (1.8 pt).
LINE_GAP_PT = 2.6
#: Gap between a group's lines and its labels, and between a label and the axes edge, points.
PAD_PT = 3.0
#: Font size of the labels, points (the legend's and the marks' size).
FONT_PT = 7.5
#: Radius of the largest dot a series draws (points; ``draw``'s 6 pt markers): a label kept
#: this far from a point's centre does not cover the dot.
DOT_PT = 3.5
#: Fraction of the axes height kept free between the highest data and the lowest label.
HEADROOM_PAD = 0.03


def _to_points(fig) -> float:
    return fig.dpi / 72.0


def _groups(ax, markers: list[FigureMarker], axis: str) -> list[list[FigureMarker]]:
    """Markers on ``axis`` sorted by value, those within ``MERGE_PT`` of the previous one in
    a group with it."""
    trans = ax.transData
    fig = ax.figure

    def pos(m: FigureMarker) -> float:
        xy = (m.value, 1.0) if axis == "x" else (1.0, m.value)
        return trans.transform(xy)[0 if axis == "x" else 1] / _to_points(fig)

    out: list[list[FigureMarker]] = []
    last = -math.inf
    for m in sorted(markers, key=lambda m: m.value):
        p = pos(m)
        if out and p - last < MERGE_PT:
            out[-1].append(m)
        else:
            out.append([m])
        last = p
    return out


def _inside(ax, axis: str, value: float) -> int:
    """-1 below the axis' range, 0 inside, 1 above it."""
    lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    return -1 if value < lo else (1 if value > hi else 0)


def _line(ax, m: FigureMarker, offset_pt: float, styles: dict, top: float = 1.0) -> None:
    from matplotlib import transforms

    shifted = transforms.offset_copy(ax.transData, fig=ax.figure,
                                     x=offset_pt if m.axis == "x" else 0.0,
                                     y=offset_pt if m.axis == "y" else 0.0, units="points")
    if m.axis == "x":
        trans = transforms.blended_transform_factory(shifted, ax.transAxes)
        ax.plot([m.value, m.value], [0, top], transform=trans, zorder=5, gid=MARKER_LINE_GID,
                **styles[m.role])
    else:
        trans = transforms.blended_transform_factory(ax.transAxes, shifted)
        ax.plot([0, 1], [m.value, m.value], transform=trans, zorder=5, gid=MARKER_LINE_GID,
                **styles[m.role])


def _place(ax, text, taken: list, renderer) -> None:
    """Move ``text`` down (in points) until its box overlaps none of ``taken``; add its box."""
    box = text.get_window_extent(renderer)
    step_pt = (box.height + 1.0) / _to_points(ax.figure)
    for _ in range(40):  # 40 rows: far more than any figure's markers
        if not any(box.overlaps(t) for t in taken):
            break
        text.xyann = (text.xyann[0], text.xyann[1] - step_pt)
        box = text.get_window_extent(renderer)
    taken.append(box)


#: Height of one label row, points (the font and a little leading).
ROW_PT = FONT_PT + 2.0


def _x_labels(ax, groups: list[list[FigureMarker]], label: Callable[[FigureMarker], str],
              styles: dict, renderer) -> tuple[list, list[float]]:
    """The labels of the x groups in rows from the top of the axes, one row per label, and
    the top of each group's lines (axes fraction: the bottom of its last label row).

    Each label starts beside its lines and runs right (left when it would leave the axes).
    Groups whose labels run right take the top rows in x order, those that run left the rows
    under them in reverse x order; a line stops under its own labels and under any label
    across its x, so no label crosses a line, and labels never share a row.  A group outside
    the x range has no line; its labels sit at that edge with an arrow.
    """
    from matplotlib import transforms

    trans = transforms.blended_transform_factory(ax.transData, ax.transAxes)
    lo, hi = ax.get_xlim()
    placed: list[tuple[int, float, bool, list]] = []  # (group index, x, runs right, texts)
    for gi, group in enumerate(groups):
        side = _inside(ax, "x", group[0].value)
        value = group[0].value if side == 0 else (lo if side < 0 else hi)
        half = (len(group) - 1) / 2 * LINE_GAP_PT if side == 0 else 0.0
        texts = []
        for m in group:
            text = ("◂ " if side < 0 else "") + label(m) + (" ▸" if side > 0 else "")
            t = ax.annotate(text, (value, 1.0), xycoords=trans, xytext=(half + PAD_PT, 0),
                            textcoords="offset points", ha="left", va="top", fontsize=FONT_PT,
                            color=styles[m.role]["color"], zorder=7, annotation_clip=False)
            t.set_gid(MARKER_LABEL_GID)
            texts.append(t)
        frame = ax.get_window_extent(renderer)
        right = side <= 0 and max(t.get_window_extent(renderer).x1 for t in texts) <= frame.x1
        if not right:
            for t in texts:
                t.set_horizontalalignment("right")
                t.xyann = (-(half + PAD_PT), 0)
        placed.append((gi, value, right, texts))
    order = sorted((p for p in placed if p[2]), key=lambda p: p[1]) + \
        sorted((p for p in placed if not p[2]), key=lambda p: -p[1])
    row = 0
    out = []
    for _gi, _value, _right, texts in order:
        for t in texts:
            t.xyann = (t.xyann[0], -PAD_PT - row * ROW_PT)
            row += 1
            out.append(t)
    # a group's lines stop under its own labels, and under any other label across their x
    # (a label that had to run left over the line of a group in an upper row)
    inv = ax.transAxes.inverted()
    boxes = [t.get_window_extent(renderer) for t in out]
    tops = [1.0] * len(groups)
    for gi, value, _right, texts in placed:
        x = ax.transData.transform((value, 1.0))[0]
        over = [b for b in boxes if b.x0 - 1 <= x <= b.x1 + 1] + \
            [t.get_window_extent(renderer) for t in texts]
        if _inside(ax, "x", groups[gi][0].value) == 0:
            tops[gi] = max(0.0, min(inv.transform((x, b.y0))[1] for b in over) - 0.005)
    return out, tops


def _points(ax, spec: FigureSpec) -> list:
    """Display coordinates of every plotted point of ``spec``'s series (bars excepted)."""
    return [ax.transData.transform((x, y)) for s in spec.series if s.kind != "bar"
            for x, y in zip(s.x, s.y) if math.isfinite(y)]


def _label_y_group(ax, group: list[FigureMarker], label: Callable[[FigureMarker], str],
                   styles: dict, taken: list, points: list, renderer) -> list:
    """The labels of one y group beside its lines: right end above, left end above, right end
    below, left end below: the first place where the label covers no point of the data and
    no other label (else the first, moved clear of the other labels)."""
    from matplotlib import transforms

    trans = transforms.blended_transform_factory(ax.transAxes, ax.transData)
    texts = []
    half = (len(group) - 1) / 2 * LINE_GAP_PT
    for i, m in enumerate(reversed(group)):
        rise = half + PAD_PT + i * (FONT_PT + 1.5)
        places = [(1.0, -PAD_PT, rise, "right", "bottom"), (0.0, PAD_PT, rise, "left", "bottom"),
                  (1.0, -PAD_PT, -rise, "right", "top"), (0.0, PAD_PT, -rise, "left", "top")]

        def put(at, dx, dy, ha, va, m=m):
            return ax.annotate(label(m), (at, group[0].value), xycoords=trans, xytext=(dx, dy),
                               textcoords="offset points", ha=ha, va=va, fontsize=FONT_PT,
                               color=styles[m.role]["color"], zorder=7,
                               bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none",
                                     "alpha": 0.8})

        for place in places:
            t = put(*place)
            box = t.get_window_extent(renderer)
            near = box.expanded(1.0, 1.0).padded(DOT_PT * _to_points(ax.figure))
            if not any(box.overlaps(o) for o in taken) and not any(
                    near.x0 <= px <= near.x1 and near.y0 <= py <= near.y1 for px, py in points):
                break
            t.remove()
        else:
            t = put(*places[0])
        t.set_gid(MARKER_LABEL_GID)
        _place(ax, t, taken, renderer)
        texts.append(t)
    return texts


def _data_top(spec: FigureSpec) -> float:
    ys = [v for s in spec.series for v in (s.hi or []) + s.y if math.isfinite(v)]
    return max(ys) if ys else math.nan


def _headroom(ax, spec: FigureSpec, texts: list, renderer) -> None:
    """Raise the top of the y axis so the highest value (or CI bound) sits below the lowest
    x-marker label (``HEADROOM_PAD`` between)."""
    top = _data_top(spec)
    boxes = [t.get_window_extent(renderer) for t in texts]
    if not boxes or not math.isfinite(top):
        return
    inv = ax.transAxes.inverted()
    bottom = min(inv.transform((b.x0, b.y0))[1] for b in boxes) - HEADROOM_PAD
    lo, hi = ax.get_ylim()
    log = ax.get_yscale() == "log" and lo > 0 and top > 0
    f = (lambda v: math.log(v)) if log else (lambda v: v)
    g = (lambda v: math.exp(v)) if log else (lambda v: v)
    if (f(top) - f(lo)) / (f(hi) - f(lo)) <= bottom or bottom <= 0.2:
        return  # the data already stays below, or too little room would be left for it
    ax.set_ylim(lo, g(f(lo) + (f(top) - f(lo)) / bottom))


def draw_markers(ax, spec: FigureSpec, styles: dict, label: Callable[[FigureMarker], str],
                 renderer) -> list:
    """Draw ``spec.markers`` on ``ax`` (limits final, figure laid out) with ``styles[role]``
    (line keyword arguments with a ``color``) and one label per marker (``label(marker)``);
    returns the label texts.  Existing texts of ``ax`` (marks' labels) are kept clear of."""
    x_groups = _groups(ax, [m for m in spec.markers if m.axis == "x"], "x")
    x_texts, tops = _x_labels(ax, x_groups, label, styles, renderer)
    for group, top in zip(x_groups, tops):
        _lines(ax, group, styles, top)
    _headroom(ax, spec, x_texts, renderer)  # before the y labels: it moves the data
    taken = [t.get_window_extent(renderer) for t in ax.texts if t.get_text()]
    y_texts: list = []
    points = _points(ax, spec)
    for group in _groups(ax, [m for m in spec.markers if m.axis == "y"], "y"):
        _lines(ax, group, styles)  # the y range takes in every y marker (draw.py)
        y_texts += _label_y_group(ax, group, label, styles, taken, points, renderer)
    return x_texts + y_texts


def _lines(ax, group: list[FigureMarker], styles: dict, top: float = 1.0) -> None:
    """The group's lines side by side, ``LINE_GAP_PT`` apart (none outside the axis' range),
    up to ``top`` (axes fraction) for x markers."""
    if _inside(ax, group[0].axis, group[0].value) == 0:
        half = (len(group) - 1) / 2
        for i, m in enumerate(group):
            _line(ax, m, (i - half) * LINE_GAP_PT, styles, top)
