"""Headline figures: the few numbers per probe that a fleet report compares across nodes.

A probe may define the optional method ``headline(evidence) -> dict[str, float]`` (pure, like
``recommend``): figure name -> value, the unit at the end of the name (``..._bytes_per_s``,
``..._s``), keys stable across machines (never a message size or a host in the name).  A probe
without it, or whose evidence lacks the figure, simply has no headline there.

Public API: :func:`median_at_largest_x` (for plugins), :func:`headlines_of` (for the report).
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Iterable, Mapping, Optional

from advisor.models import Evidence, Series

__all__ = ["median_at_largest_x", "headlines_of"]


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


def headlines_of(probe: Any, evidence: Iterable[Evidence], *,
                 faults: Optional[list[str]] = None) -> dict[str, float]:
    """``probe.headline(evidence)`` with non-finite and non-numeric values dropped; empty when the
    probe has no ``headline`` method.  The evidence is read through ``advisor.measure.relabel``:
    a point that its record shows to be an artefact is never a headline figure.

    ``headline`` runs through ``advisor.steps.StepRunner.call``, like every call into plugin
    code: one that raises, exits, returns something other than a mapping or overruns
    ``advisor.steps.GRACE_S`` gives no figures (the evidence came from an untrusted node file;
    the report records that node as having none, never stops), and its one-line error text
    (``headline: RuntimeError: ...``) is appended to ``faults`` when given.  A hung
    ``headline`` is not called again in this process (``StepRunner.call``)."""
    fn = getattr(probe, "headline", None)
    if fn is None:
        return {}
    from advisor.measure.artefacts import relabel_all
    from advisor.steps import StepRunner, fault_text

    owner = str(getattr(probe, "name", "") or type(probe).__name__)
    done = StepRunner(reap=False).call(lambda: fn(relabel_all(evidence)), step="headline",
                                       owner=owner)
    got = done.value if done.ok else None
    error = done.error
    if done.ok and got is not None and not isinstance(got, Mapping):
        error = fault_text("headline", TypeError(
            f"headline() returned {type(got).__name__}, not a dict"))
        got = None
    if error is not None:
        if faults is not None:
            faults.append(error)
        return {}
    out = {}
    for k, v in (got or {}).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out[str(k)] = float(v)
    return out
