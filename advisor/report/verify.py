"""Pure rows of ``advisor verify``: the alone and joint tables and the ``--json`` document.

No printing here (the CLI prints).  Outcomes are ``advisor.verify.VerifyOutcome``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Optional, Sequence

from advisor.models import Finding
from advisor.specs.units import sizes_in_text

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile
    from advisor.verify import VerifyOutcome


def outcome_dict(o: "VerifyOutcome") -> dict[str, Any]:
    """One outcome as a JSON-ready mapping (``VerifyOutcome.to_dict``): probe, recommendation,
    title, scope, measured, verdict, ratio (advised/baseline, > 1 better), ci_low, ci_high,
    noise_floor (relative), evidence ids, note, error, redo (None when empty)."""
    v = o.verification
    return {"probe": o.probe, "recommendation": o.recommendation, "title": o.title,
            "scope": o.scope, "measured": measured(o), "verdict": v.verdict,
            "ratio": v.ratio, "ci_low": v.ci_low, "ci_high": v.ci_high,
            "noise_floor": v.noise_floor, "evidence": [e.id for e in v.evidence],
            "note": o.note, "error": o.error, "redo": o.redo or None}


def _fmt(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.3f}"


def measured(o: "VerifyOutcome") -> str:
    """What the outcome's measurement compared: the recommendation id, plus the deciding size
    and metric when the probe's evidence names it (evidence value ``decided_by``)."""
    for e in o.verification.evidence:
        by = e.values.get("decided_by")
        if by:
            return f"{o.recommendation}: {sizes_in_text(str(by))}"
    return o.recommendation


def _cells(o: "VerifyOutcome") -> dict[str, str]:
    """The printable cells of one outcome: ratio, CI, noise floor, note (with the error)."""
    v = o.verification
    return {"ratio": _fmt(v.ratio),
            "ci": f"[{_fmt(v.ci_low)}, {_fmt(v.ci_high)}]" if v.ci_low is not None else "",
            "floor": _fmt(v.noise_floor), "note": o.note + (f" ({o.error})" if o.error else "")}


def class_cells(prof: "Profile") -> list[str]:
    """Per stored verdict of ``prof`` (``prof.verifications`` order), the machine class it was
    taken on, for ``advisor show`` and the HTML report: ``"the profile's"`` (with ``"; emit
    leaves it out"`` on the verdict that vetoes its recommendation: ``advisor.emit.veto``),
    ``"another: <class id> (vetoes nothing)"``, or ``"not recorded (vetoes nothing)"``."""
    from advisor.emit.veto import vetoes

    if not prof.verifications:
        return []
    here = prof.facts.class_fingerprint()
    vetoing = {id(v.verification) for v in vetoes(prof).values()}
    out = []
    for v in prof.verifications:
        if v.class_fingerprint is None:
            out.append("not recorded (vetoes nothing)")
        elif v.class_fingerprint != here:
            out.append(f"another: {v.class_fingerprint} (vetoes nothing)")
        else:
            out.append("the profile's" + ("; emit leaves it out" if id(v) in vetoing else ""))
    return out


def table_rows(outcomes: Sequence["VerifyOutcome"]) -> list[list[str]]:
    """Rows for the per-recommendation (alone) table: probe, recommendation, verdict, ratio,
    CI, noise floor, note."""
    return [[o.probe, o.recommendation, o.verdict, c["ratio"], c["ci"], c["floor"], c["note"]]
            for o in outcomes if o.scope == "alone" for c in [_cells(o)]]


def joint_rows(outcomes: Sequence["VerifyOutcome"]) -> list[list[str]]:
    """Rows for the joint-environment table, one per plugin recommendation, in the alone
    table's order: probe, what was measured, verdict, ratio advised/baseline, CI, A/A noise
    floor, note."""
    return [[o.probe, measured(o), o.verdict, c["ratio"], c["ci"], c["floor"], c["note"]]
            for o in outcomes if o.scope == "joint" for c in [_cells(o)]]


def to_json(outcomes: Sequence["VerifyOutcome"], findings: Sequence[Finding] = ()) -> str:
    """JSON object ``{"verifications": [alone outcomes], "joint": [joint outcomes],
    "findings": [reversal findings]}`` (outcomes as ``VerifyOutcome.to_dict``)."""
    data = {"verifications": [outcome_dict(o) for o in outcomes if o.scope == "alone"],
            "joint": [outcome_dict(o) for o in outcomes if o.scope == "joint"],
            "findings": [f.model_dump(mode="json") for f in findings]}
    return json.dumps(data, indent=2) + "\n"


__all__ = ["class_cells", "joint_rows", "measured", "outcome_dict", "table_rows", "to_json"]
