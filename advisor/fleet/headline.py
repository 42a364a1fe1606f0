"""Headline figures read from the probes: what a fleet report compares across nodes.

A probe may define the optional method ``headline(evidence)``; what it returns, and the helper
plugins use to fill it, are in ``advisor.specs.headline``.  This module calls it on a node's
untrusted evidence and keeps only finite numbers.

Public API: :func:`headlines_of` (for the fleet and the report).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from advisor.models import Evidence
from advisor.specs.headline import Headlines

__all__ = ["headlines_of"]


def headlines_of(probe: Any, evidence: Iterable[Evidence]) -> Headlines:
    """``probe.headline(evidence)`` with non-finite and non-numeric values dropped; empty when the
    probe has no ``headline`` method.  A headline that raises is treated as having none (the
    evidence came from an untrusted node file); the report records that node as having no
    figures, never stops.  The evidence is read through ``advisor.measure.relabel``: a point
    that its record shows to be an artefact is never a headline figure."""
    fn = getattr(probe, "headline", None)
    if fn is None:
        return {}
    from advisor.measure.artefacts import relabel_all

    try:
        got = fn(relabel_all(evidence))
    except Exception:  # noqa: BLE001 - untrusted evidence must not stop the report
        return {}
    out = {}
    for k, v in (got or {}).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out[str(k)] = float(v)
    return out
