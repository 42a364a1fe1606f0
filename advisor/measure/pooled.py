"""Figure series pooled over launches: one point per x, its median and bootstrap CI.

A separate-launch sweep records several points per x (one per launch or round); a figure shows
one point per x.  Pooling their samples needs the bootstrap of ``advisor.measure.stats``, so
this builder of an ``advisor.specs.figures.FigureSeries`` lives in the harness, beside the
statistics, and the spec types stay at the bottom (``advisor.specs``).  Pure: no I/O.
"""

from __future__ import annotations

import statistics
from typing import Optional

from advisor.measure.stats import summarize
from advisor.specs.figures import FigureSeries, point_median

__all__ = ["series_pooled"]


def series_pooled(label: str, points, *, evidence: Optional[str] = None,
                  series: Optional[str] = None, role: str = "measured",
                  kind: str = "line") -> FigureSeries:
    """A ``FigureSeries`` with one point per distinct x of ``points`` (``advisor.models.Point``
    list), for series that hold several points per x (one per launch or round, e.g. a
    separate-launch sweep's ``run<i>`` points).

    At an x with one physical point: that point's median and CI (as
    ``advisor.specs.figures.series_from_points``).  At an x with several: the samples of all its
    physical points pooled, and the median and the 95 % percentile-bootstrap CI of that median
    from ``advisor.measure.stats.summarize`` (seed 0, so the same points give the same figure);
    when the points kept no samples, only stats, the median of their medians and no CI.  Artefact points and points without samples or
    stats are left out; x ascending.  Units: those of the points' series.

    :raises ValueError: from ``summarize`` on non-finite samples.
    """
    by_x: dict[float, list] = {}
    for p in points:
        if p.x is None or point_median(p) is None:
            continue
        by_x.setdefault(float(p.x), []).append(p)
    xs, ys, lo, hi = [], [], [], []
    has_ci = True
    for x in sorted(by_x):
        pts = by_x[x]
        pooled = [v for p in pts for v in p.samples]
        if len(pts) == 1 and pts[0].stats is not None:
            med, ci = pts[0].stats.median, (pts[0].stats.ci_low, pts[0].stats.ci_high)
        elif pooled:
            st = summarize(pooled)
            med, ci = st.median, (st.ci_low, st.ci_high)
        else:  # points that kept only their stats: the median of their medians
            med, ci = statistics.median(point_median(p) for p in pts), (None, None)
        xs.append(x)
        ys.append(float(med))
        if ci[0] is not None and ci[1] is not None:
            lo.append(float(ci[0]))
            hi.append(float(ci[1]))
        else:
            has_ci = False
    return FigureSeries(label=label, x=xs, y=ys, lo=lo if has_ci and xs else None,
                        hi=hi if has_ci and xs else None, evidence=evidence, series=series,
                        role=role, kind=kind)
