"""Headline figures: the few numbers per probe that a fleet report compares across nodes.

A probe may define the optional method ``headline(evidence) -> Headlines`` (pure, like
``recommend``): figure name -> value, the unit at the end of the name (``..._bytes_per_s``,
``..._s``), keys stable across machines (never a message size or a host in the name).  A probe
without it, or whose evidence lacks the figure, simply has no headline there.  The fleet reads
them through ``advisor.fleet.headline.headlines_of``.

Public API: :data:`Headlines` (the type), :func:`median_at_largest_x` (the usual figure).
"""

from __future__ import annotations

import statistics
from typing import Optional

from advisor.models import Series

__all__ = ["Headlines", "median_at_largest_x"]

#: What ``headline(evidence)`` returns: figure name (unit at its end) -> value in that unit.
Headlines = dict[str, float]


def median_at_largest_x(series: Optional[Series], label: Optional[str] = None) -> Optional[float]:
    """The median of the point medians at the series' largest x (e.g. the bandwidth of the
    largest message over all launches), in the series' unit; only points labelled ``label``
    when given; artefact points are left out.  None when no point qualifies."""
    if series is None:
        return None
    pts = [p for p in series.points if p.x is not None and not p.artefact
           and (label is None or p.label == label) and p.median() is not None]
    if not pts:
        return None
    top = max(p.x for p in pts)
    return statistics.median(p.median() for p in pts if p.x == top)
