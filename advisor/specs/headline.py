"""Headline figures: the few numbers per probe that a fleet report compares across nodes.

A probe may define the optional method ``headline(evidence) -> Headlines`` (pure, like
``recommend``): figure name -> value, the unit at the end of the name (``..._bytes_per_s``,
``..._s``), keys stable across machines (never a message size or a host in the name).  A probe
without it, or whose evidence lacks the figure, simply has no headline there.  The fleet reads
them through ``advisor.fleet.headline.headlines_of``.

A probe may also declare the human name of each figure, as data beside ``headline``: the
optional attribute ``headline_titles`` (figure name -> title, e.g.
``"memcpy_bandwidth_largest_bytes_per_s": "memcpy bandwidth at the largest copy size"``).  The
fleet figures are titled with it (:func:`headline_title`, which derives a readable title from
the name for a figure the probe does not name); the keys stay what ``--floor`` and the fleet
tables use.

A probe may also define ``measure_headline(ctx, recorded) -> list[Evidence]`` (``advisor
check``, ``advisor.fleet.check_run``): a short measurement, within ``ctx.deadline``, of what
``headline`` reads, made the way ``recorded`` (this probe's evidence in the class profile) was
measured, so that the value is comparable with the class's band.  It is called without
``check``; a probe without it is not measured by ``advisor check``.

Public API: :data:`Headlines` (the type), :func:`median_at_largest_x` (the usual figure),
:func:`headline_unit`, :func:`headline_quantity`, :func:`headline_title` (how a figure is
labelled).
"""

from __future__ import annotations

import statistics
from typing import Mapping, Optional

from advisor.models import Series

__all__ = ["Headlines", "median_at_largest_x", "headline_unit", "headline_quantity",
           "headline_title", "UNIT_SUFFIXES"]

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


#: Name endings and the unit they mean (longest first: ``_bytes_per_s`` before ``_s``), with
#: the quantity a figure in that unit is (the fleet figure's y axis name).
UNIT_SUFFIXES = (("_bytes_per_s", "bytes/s", "bandwidth"), ("_bytes", "bytes", "size"),
                 ("_s", "s", "time"))
#: Words of a figure name and the phrase they read as in a derived title.
TITLE_WORDS = {"largest": "at the largest size", "smallest": "at the smallest size"}


def _suffix(name: str) -> Optional[tuple[str, str, str]]:
    return next((t for t in UNIT_SUFFIXES if name.endswith(t[0])), None)


def headline_unit(name: str) -> str:
    """The unit of a headline figure from its name's end: ``bytes/s``, ``bytes``, ``s``, else
    ``""`` (``"memcpy_bandwidth_largest_bytes_per_s"`` -> ``"bytes/s"``)."""
    got = _suffix(name)
    return got[1] if got else ""


def headline_quantity(name: str) -> str:
    """What a headline figure measures, from its unit: ``bandwidth``, ``size``, ``time``, else
    ``value``."""
    got = _suffix(name)
    return got[2] if got else "value"


def headline_title(name: str, titles: Optional[Mapping[str, str]] = None) -> str:
    """The human title of headline figure ``name``: the probe's own (``titles``, its
    ``headline_titles``) when it names the figure, else one derived from the name: the unit
    ending dropped, ``largest``/``smallest`` read as "at the largest/smallest size",
    underscores as spaces (``"cma_on_bandwidth_largest_bytes_per_s"`` -> ``"cma on bandwidth
    at the largest size"``).  Never raises; a non-string title is ignored."""
    own = (titles or {}).get(name) if isinstance(titles, Mapping) else None
    if isinstance(own, str) and own.strip():
        return own.strip()
    got = _suffix(name)
    stem = name[:-len(got[0])] if got and len(name) > len(got[0]) else name
    words = [TITLE_WORDS.get(w, w) for w in stem.split("_") if w]
    return " ".join(words) or name
