"""``VerifyOutcome``: one recommendation's verification as ``advisor verify`` returns it.

``advisor.verify`` makes them, ``advisor.joint`` reads them for reversal findings and
``advisor.report.verify`` turns them into rows; this module sits below all three so that none of
them imports another for the type.  Pure: no I/O.

Public API: :class:`VerifyOutcome`, :data:`Scope`, :func:`measured`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional

from advisor.models import Verification
from advisor.specs.units import sizes_in_text

__all__ = ["Scope", "VerifyOutcome", "measured"]

#: ``alone``: the recommendation measured by itself; ``joint``: under the whole emitted
#: environment (``advisor.joint``).
Scope = Literal["alone", "joint"]


@dataclass(frozen=True)
class VerifyOutcome:
    """One recommendation's verification plus what the table shows and the profile does not
    store: the probe, the recommendation's title, why (``note``) and a failure (``error``)."""

    probe: str
    recommendation: str
    title: str
    verification: Verification
    note: str = ""
    error: Optional[str] = None
    scope: Scope = "alone"
    #: a shell command that re-probes this recommendation under the others' emitted settings,
    #: when only a re-probe can say whether it still holds jointly (printed on its own line)
    redo: str = ""

    @property
    def verdict(self) -> str:
        return self.verification.verdict

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping: probe, recommendation, title, scope, measured (:func:`measured`),
        verdict, ratio (advised/baseline, > 1 better), ci_low, ci_high, noise_floor (relative),
        evidence ids, note, error, redo (None when empty)."""
        v = self.verification
        return {"probe": self.probe, "recommendation": self.recommendation, "title": self.title,
                "scope": self.scope, "measured": measured(self), "verdict": v.verdict,
                "ratio": v.ratio, "ci_low": v.ci_low, "ci_high": v.ci_high,
                "noise_floor": v.noise_floor, "evidence": [e.id for e in v.evidence],
                "note": self.note, "error": self.error, "redo": self.redo or None}


def measured(o: VerifyOutcome) -> str:
    """What the outcome's measurement compared: the recommendation id, plus the deciding size
    and metric when the probe's evidence names it (evidence value ``decided_by``, sizes made
    readable by ``advisor.specs.units.sizes_in_text``)."""
    for e in o.verification.evidence:
        by = e.values.get("decided_by")
        if by:
            return f"{o.recommendation}: {sizes_in_text(str(by))}"
    return o.recommendation
