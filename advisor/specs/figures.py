"""Figure specs: what a figure shows, as data, built by a probe from its own evidence.

A probe may offer ``figures(evidence, facts) -> list[FigureSpec]`` (pure, no I/O, like
``recommend``; documented in ``advisor.hookspecs.advisor_register_probes`` and docs/plugins.md).
The core never draws anything plugin-specific: ``advisor report`` (HTML, PNG, SVG) and
``advisor show --plot`` (terminal) draw whatever specs the probes return, with the units said
here (ticks in KiB/MiB, µs, GB/s).

Units are the project's units: ``bytes``, ``s``, ``bytes/s``, ``ratio``, ``count`` (or any other
short word, drawn as written).  Every series names the evidence it came from, so a figure is
traceable to the measurement; a test checks that plotted medians equal the stored ones.
"""

from __future__ import annotations

import statistics
from typing import Literal, Optional

from pydantic import Field, model_validator

from advisor.models import Model, Point

__all__ = ["FigureSeries", "FigureMarker", "FigureMark", "FigureBand", "FigureSpec",
           "point_median", "series_from_points"]

Scale = Literal["linear", "log"]


class FigureSeries(Model):
    """One curve (or set of bars) of a figure.

    :ivar label: legend text (e.g. ``"cma-on"``, ``"default"``); empty: no legend entry (a
        strip whose category tick already names it).  Series sharing a label share one entry.
    :ivar x, y: equal-length lists, in the figure's ``x_unit`` / ``y_unit`` (medians for
        measured points).
    :ivar lo, hi: the confidence band of ``y`` (same length), or None when not measured.
    :ivar kind: ``line`` (markers joined), ``points`` (markers only), ``bar``, ``step``,
        ``strip`` (one dot per value at its category x, spread sideways by the renderer so
        repeated values stay visible: every run of a configuration, not a summary).
    :ivar hollow: markers drawn open (values shown but not counted, e.g. a discarded warm-up).
    :ivar marker: the marker shape of a ``line`` or ``points`` series: ``ring`` (a large open
        circle), ``dot`` (a small filled one), ``diamond`` (filled); a ring and a dot on the same
        values stay told apart (the dot inside the ring: the default and the advice where they
        agree).  None: the renderer's usual filled circle.
    :ivar role: how the renderer emphasises it: ``measured`` (default), ``default`` (the
        library default's curve), ``advised`` (the advice's curve), ``reference``.
    :ivar evidence: the evidence id the data was read from (``Evidence.id``).
    :ivar series: the ``Series.name`` inside that evidence, when the data is one series.
    """

    label: str
    x: list[float]
    y: list[float]
    lo: Optional[list[float]] = None
    hi: Optional[list[float]] = None
    kind: Literal["line", "points", "bar", "step", "strip"] = "line"
    role: Literal["measured", "default", "advised", "reference"] = "measured"
    hollow: bool = False
    marker: Optional[Literal["ring", "dot", "diamond"]] = None
    evidence: Optional[str] = None
    series: Optional[str] = None

    @model_validator(mode="after")
    def _same_lengths(self) -> "FigureSeries":
        n = len(self.x)
        if len(self.y) != n:
            raise ValueError(f"series {self.label!r}: {len(self.y)} y values for {n} x values")
        for name in ("lo", "hi"):
            band = getattr(self, name)
            if band is not None and len(band) != n:
                raise ValueError(f"series {self.label!r}: {name} has {len(band)} values, not {n}")
        return self


class FigureMarker(Model):
    """A vertical (``axis="x"``) or horizontal (``axis="y"``) line with a label: a threshold,
    a crossover, a ceiling, the chosen point.  ``value`` is in that axis' unit.  ``role``:
    ``default`` (the library default), ``advised`` (the advice), ``crossover``, ``limit``
    (a ceiling, a floor), ``note``."""

    axis: Literal["x", "y"]
    value: float
    label: str
    role: Literal["default", "advised", "crossover", "limit", "note"] = "note"


class FigureMark(Model):
    """A mark at one place with its label drawn beside it (never in the legend): ``shape="bar"``
    a short horizontal bar at ``(x, y)`` (a strip's median), ``shape="x"`` a cross at ``x`` on
    the bottom edge of the plot (``y`` None: values that do not exist, e.g. failed runs, with
    their count in ``label``), ``shape="label"`` the label alone, beside the point ``(x, y)`` a
    series already draws (a direct label: a ratio next to its dot).  ``x`` and ``y`` are in the axes' units; ``role`` picks the
    colour as for a series."""

    x: float
    y: Optional[float] = None
    label: str
    shape: Literal["bar", "x", "label"] = "bar"
    role: Literal["measured", "default", "advised", "reference"] = "measured"


class FigureBand(Model):
    """A shaded range on one axis (``low`` .. ``high`` in that axis' unit): a noise floor, a
    fleet's outlier band, a cliff."""

    axis: Literal["x", "y"]
    low: float
    high: float
    label: str


class FigureSpec(Model):
    """One figure.

    :ivar id: unique within the probe's figures (``[a-z0-9][a-z0-9-]*``); files are named
        ``<probe>-<id>.png``.
    :ivar title: short title; :ivar caption: what was measured and how (runs, warm-up, buffer
        kind, launches), one or two sentences - required, a figure without it is not shown.
    :ivar x_label, y_label: axis names; :ivar x_unit, y_unit: units (see module docstring).
    :ivar x_scale, y_scale: ``linear`` or ``log``.
    :ivar names: for categorical x (bars per configuration): the tick label of each x value
        (may hold line breaks).
    :ivar marks: labelled marks (``FigureMark``): medians of strips, counts of failed runs.
    :ivar notes: short lines drawn under the figure (e.g. "regret of the default: 1.8x at 64 KiB").
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    caption: str = Field(min_length=1)
    x_label: str
    x_unit: str
    y_label: str
    y_unit: str
    x_scale: Scale = "linear"
    y_scale: Scale = "linear"
    series: list[FigureSeries] = Field(default_factory=list)
    markers: list[FigureMarker] = Field(default_factory=list)
    bands: list[FigureBand] = Field(default_factory=list)
    marks: list[FigureMark] = Field(default_factory=list)
    names: Optional[dict[float, str]] = None
    notes: list[str] = Field(default_factory=list)

    def is_empty(self) -> bool:
        """True when no series has a point (nothing to draw)."""
        return not any(s.x for s in self.series)


def point_median(p: Point) -> Optional[float]:
    """Median of a physical point (its ``stats.median``, else the median of its samples), in the
    series' unit; None for an artefact point or a point without samples."""
    if p.artefact:
        return None
    if p.stats is not None:
        return p.stats.median
    return statistics.median(p.samples) if p.samples else None


def series_from_points(label: str, points, *, evidence: Optional[str] = None,
                       series: Optional[str] = None, role: str = "measured",
                       kind: str = "line") -> FigureSeries:
    """A ``FigureSeries`` of the physical points of ``points`` (``advisor.models.Point`` list):
    x, median, and the bootstrap CI where the point has one.  Artefact points (``Point.artefact``
    set) and points without an x or a median are left out (an artefact is never a bandwidth)."""
    xs, ys, lo, hi = [], [], [], []
    has_ci = True
    for p in points:
        m = point_median(p)
        if m is None or p.x is None:
            continue
        xs.append(float(p.x))
        ys.append(float(m))
        st = p.stats
        if st is not None and st.ci_low is not None and st.ci_high is not None:
            lo.append(float(st.ci_low))
            hi.append(float(st.ci_high))
        else:
            has_ci = False
    return FigureSeries(label=label, x=xs, y=ys, lo=lo if has_ci and xs else None,
                        hi=hi if has_ci and xs else None, evidence=evidence, series=series,
                        role=role, kind=kind)
