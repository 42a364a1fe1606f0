"""Headline figures read from the probes: what a fleet report compares across nodes.

A probe may define the optional method ``headline(evidence)``; what it returns, and the helper
plugins use to fill it, are in ``advisor.specs.headline``.  This module calls it on a node's
untrusted evidence and keeps only finite numbers.

Public API: :func:`headlines_of` (for the fleet and the report).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Optional

from advisor.models import Evidence
from advisor.specs.headline import Headlines

__all__ = ["headlines_of"]


def headlines_of(probe: Any, evidence: Iterable[Evidence], *,
                 faults: Optional[list[str]] = None) -> Headlines:
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
