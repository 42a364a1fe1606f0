"""Pure rows of ``advisor verify``: the alone and joint tables and the ``--json`` document.

No printing here (the CLI prints).  Outcomes are ``advisor.verify_outcome.VerifyOutcome``
(``to_dict`` is the JSON of one, ``measured`` what it compared).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional, Sequence

from advisor.models import Finding
from advisor.verify_outcome import VerifyOutcome, measured

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile


def _fmt(x: Optional[float]) -> str:
    return "" if x is None else f"{x:.3f}"


def _cells(o: VerifyOutcome) -> dict[str, str]:
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


def table_rows(outcomes: Sequence[VerifyOutcome]) -> list[list[str]]:
    """Rows for the per-recommendation (alone) table: probe, recommendation, verdict, ratio,
    CI, noise floor, note."""
    return [[o.probe, o.recommendation, o.verdict, c["ratio"], c["ci"], c["floor"], c["note"]]
            for o in outcomes if o.scope == "alone" for c in [_cells(o)]]


def joint_rows(outcomes: Sequence[VerifyOutcome]) -> list[list[str]]:
    """Rows for the joint-environment table, one per plugin recommendation, in the alone
    table's order: probe, what was measured, verdict, ratio advised/baseline, CI, A/A noise
    floor, note."""
    return [[o.probe, measured(o), o.verdict, c["ratio"], c["ci"], c["floor"], c["note"]]
            for o in outcomes if o.scope == "joint" for c in [_cells(o)]]


def to_json(outcomes: Sequence[VerifyOutcome], findings: Sequence[Finding] = ()) -> str:
    """JSON object ``{"verifications": [alone outcomes], "joint": [joint outcomes],
    "findings": [reversal findings]}`` (outcomes as ``VerifyOutcome.to_dict``)."""
    data = {"verifications": [o.to_dict() for o in outcomes if o.scope == "alone"],
            "joint": [o.to_dict() for o in outcomes if o.scope == "joint"],
            "findings": [f.model_dump(mode="json") for f in findings]}
    return json.dumps(data, indent=2) + "\n"


__all__ = ["class_cells", "joint_rows", "table_rows", "to_json"]
