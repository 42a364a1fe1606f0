"""Which recommendations ``advisor verify`` refuted on the profile's machine class (design:
"verify's verdicts feed emit: advice refuted on this machine class is left out, and says so").

A recommendation is *vetoed* when the latest stored verdict of either of its scopes (alone,
``Verification.recommendation == "probe:id"``; joint, ``"probe:id@joint"``) that was taken on
the profile's machine class (``Verification.class_fingerprint`` equal to
``profile.facts.class_fingerprint()``) is ``regression``.  "Latest" orders by
``Verification.time`` (ISO 8601 UTC, so text order is time order; a record without a time
counts as oldest).

A verdict taken on another machine class, or one that recorded no class (profiles verified
before the field existed), is shown (``advisor show``) but vetoes nothing: it says nothing about
the machines the profile is for.

``advisor emit`` leaves a vetoed recommendation's settings out and names them, with the
verdict's date and figures, in the left-out block (cause ``"verdict"`` of
``advisor.specs.selection.LeftOut``, decided by ``advisor.emit.decide``); ``--all``
(``EmitOptions.include_defaults``) writes them, each with a comment naming the verdict
(``advisor.specs.selection.Source.veto``).  Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile, Verification

#: Appended to a joint verdict's key (``advisor.joint.JOINT_SUFFIX``, repeated here: emit sits
#: below the verify domain and does not import it).
JOINT_SUFFIX = "@joint"


@dataclass(frozen=True)
class Veto:
    """A recommendation left out because of a verdict.

    :ivar probe: the probe whose recommendation it is.
    :ivar recommendation: the recommendation id.
    :ivar verification: the ``regression`` verdict that vetoes it (the latest on the class).
    """

    probe: str
    recommendation: str
    verification: "Verification"

    @property
    def why(self) -> str:
        """One phrase (no setting name): the verdict's date, scope and figures."""
        return verdict_phrase(self.verification)


def _fmt(x: Optional[float]) -> str:
    return "?" if x is None else f"{x:.3f}"


def verdict_phrase(v: "Verification") -> str:
    """``refuted by advisor verify on 2026-05-01 (alone): regression, ratio 0.618 (95 % CI
    [0.615, 0.623], A/A floor 0.050; latency at 11264 bytes)``: the verdict's date (the day of
    ``Verification.time``, UTC), scope, ratio advised/baseline (> 1 better), CI, noise floor
    (relative) and what decided it (evidence value ``decided_by``), where recorded."""
    when = (v.time or "")[:10] or "an unrecorded date"
    scope = "joint emitted environment" if v.recommendation.endswith(JOINT_SUFFIX) else "alone"
    figures = []
    if v.ratio is not None:
        figures.append(f"ratio {_fmt(v.ratio)}")
    if v.ci_low is not None and v.ci_high is not None:
        figures.append(f"95 % CI [{_fmt(v.ci_low)}, {_fmt(v.ci_high)}]")
    if v.noise_floor is not None:
        figures.append(f"A/A floor {_fmt(v.noise_floor)}")
    by = next((str(e.values["decided_by"]) for e in v.evidence
               if e.values.get("decided_by")), "")
    detail = ", ".join(figures[1:]) + (f"; {by}" if by else "")
    head = f"{v.verdict}" + (f", {figures[0]}" if figures else "")
    return (f"refuted by advisor verify on {when} ({scope}) on this machine class: {head}"
            + (f" ({detail})" if detail else ""))


def vetoes(profile: "Profile") -> dict[tuple[str, str], Veto]:
    """``(probe, recommendation id) -> Veto`` for every vetoed recommendation of ``profile``
    (module docstring); empty when no verdict on the profile's class is a regression."""
    if not profile.verifications:
        return {}
    here = profile.facts.class_fingerprint()
    latest: dict[str, "Verification"] = {}
    for v in profile.verifications:
        if v.class_fingerprint != here:
            continue
        old = latest.get(v.recommendation)
        if old is None or (v.time or "") >= (old.time or ""):
            latest[v.recommendation] = v
    out: dict[tuple[str, str], Veto] = {}
    for res in profile.results:
        for rec in res.recommendations:
            key = f"{res.probe}:{rec.id}"
            found = [latest[k] for k in (key, key + JOINT_SUFFIX)
                     if k in latest and latest[k].verdict == "regression"]
            if found:
                v = max(found, key=lambda x: x.time or "")
                out[(res.probe, rec.id)] = Veto(res.probe, rec.id, v)
    return out


__all__ = ["Veto", "vetoes", "verdict_phrase", "JOINT_SUFFIX"]
