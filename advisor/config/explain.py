"""The rows of ``advisor explain NAME``: the value emit will write for a setting, each scope's
contribution with file and line, then the evidence and verdict behind the advice.  Pure: the
CLI renders them as text or JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from advisor.errors import BadInputError

if TYPE_CHECKING:  # pragma: no cover
    from advisor.config.scopes import Config
    from advisor.knobs import Knob
    from advisor.models import Profile

__all__ = ["ScopeRow", "AdviceRow", "Explanation", "explain"]


@dataclass(frozen=True)
class ScopeRow:
    """What one scope says about the setting.

    :ivar scope: defaults, site, user, env or cli.
    :ivar where: ``FILE:LINE`` (or the variable/option) of the contribution; for a scope that
        says nothing, its file (or ``-``).
    :ivar says: e.g. ``pin = 16384 (site policy)``, ``exclude (not on this fabric)``,
        ``accept mpich-cma:cma-threshold``, or ``nothing`` / ``no file``.
    """

    scope: str
    where: str
    says: str


@dataclass(frozen=True)
class AdviceRow:
    """One recommendation of the profile that sets the name.

    :ivar evidence: ``(id, description)`` of each evidence record it cites.
    :ivar verdict: the latest ``advisor verify`` verdict of the recommendation (None: never
        verified) and ``verdict_detail`` its ratio/CI/reason.
    """

    probe: str
    recommendation: str
    title: str
    value: str
    default: Optional[str]
    is_default: bool
    confidence: str
    rationale: str
    evidence: list = field(default_factory=list)
    verdict: Optional[str] = None
    verdict_detail: str = ""


@dataclass(frozen=True)
class Explanation:
    """``advisor explain NAME``.

    :ivar value: the value ``advisor emit`` writes (list variables: the items joined), None when
        it writes nothing; ``status`` says why, in one line.
    """

    name: str
    value: Optional[str]
    status: str
    scopes: list
    advice: list

    def to_json(self) -> dict:
        return asdict(self)


def _text(v: Any) -> str:
    from advisor.specs.writing import value_string_of

    return value_string_of(v)


def _scope_rows(name: str, config: "Config", refs: set) -> list[ScopeRow]:
    from advisor.config.apply import pin_value

    rows = []
    for s in config.scopes:
        said = []
        pin = s.data.get("settings", {}).get("pin", {})
        if name in pin:
            from advisor.config.schema import Pin

            raw = pin[name]
            value, library, reason = pin_value(Pin.model_validate(raw) if isinstance(raw, dict)
                                               else raw)
            extra = ", ".join(x for x in (library and f"library {library}", reason) if x)
            said.append((s.where(("settings", "pin", name)),
                         f"pin = {_text(value)}" + (f" ({extra})" if extra else "")))
        exclude = s.data.get("settings", {}).get("exclude", {})
        if name in exclude:
            why = exclude[name]
            says = ("exclusion lifted (false)" if why is False else
                    "exclude" + (f" ({why})" if isinstance(why, str) else ""))
            said.append((s.where(("settings", "exclude", name)), says))
        for i, ref in enumerate(s.data.get("recommendations", {}).get("accept", [])):
            if ref in refs:
                said.append((s.where(("recommendations", "accept", i)), f"accept {ref}"))
        if not said:
            where = str(s.path) if s.path is not None else "-"
            note = "nothing" if s.exists or s.path is None else "no file"
            rows.append(ScopeRow(s.name, where, note))
        rows.extend(ScopeRow(s.name, w, says) for w, says in said)
    return rows


def _advice_rows(name: str, profile: "Profile") -> list[AdviceRow]:
    rows = []
    for res in profile.results:
        for rec in res.recommendations:
            mine = [s for s in rec.settings if s.name == name]
            if not mine:
                continue
            sep = mine[0].separator or ", "
            evidence = []
            for ev_id in rec.evidence:
                ev = next((e for e in res.evidence if e.id == ev_id), None)
                evidence.append((ev_id, ev.description if ev is not None else "(not recorded)"))
            ref = f"{res.probe}:{rec.id}"
            ver = [v for v in profile.verifications if v.recommendation == ref]
            verdict, detail = None, ""
            if ver:
                v = ver[-1]
                verdict = v.verdict
                parts = []
                if v.ratio is not None:
                    ci = (f" [{v.ci_low:.3g}, {v.ci_high:.3g}]"
                          if v.ci_low is not None and v.ci_high is not None else "")
                    parts.append(f"advised/baseline {v.ratio:.3g}{ci}")
                if v.reason:
                    parts.append(v.reason)
                if v.time:
                    parts.append(f"at {v.time}")
                detail = "; ".join(parts)
            default = mine[0].default
            rows.append(AdviceRow(
                res.probe, rec.id, rec.title, sep.join(_text(s.value) for s in mine),
                _text(default) if default is not None else None,
                all(s.is_default for s in mine), rec.confidence, rec.rationale, evidence,
                verdict, detail))
    return rows


def explain(name: str, profile: "Profile", applied: "Profile", config: "Config",
            knobs: Sequence[tuple[str, "Knob"]] = (), *, include_defaults: bool = False,
            libraries: Mapping[str, Any]) -> Explanation:
    """Explain setting ``name``.

    :param profile: the profile as recorded (its advice and verifications are shown).
    :param applied: the same after ``advisor.config.apply.apply_config`` (what emit renders).
    :param include_defaults: as ``emit --all``.
    :raises BadInputError: ``name`` is advised by neither profile, named by no scope and
        declared by no knob (a typo; the message suggests close names).
    """
    import difflib

    from advisor.libraries.reads import drop_reason

    advice = _advice_rows(name, profile)
    refs = {f"{a.probe}:{a.recommendation}" for a in advice}
    scopes = _scope_rows(name, config, refs)
    said = any(r.says not in ("nothing", "no file") for r in scopes)
    declared = any(name in (k.name, *k.aliases) for _, k in knobs)
    if not advice and not said and not declared:
        known = sorted({s.name for _, _, s in profile.settings(kinds=("env", "config"),
                                                                include_defaults=True)})
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise BadInputError(f"{name}: no such setting: the profile does not advise it, no "
                            f"scope names it and no loaded knob declares it{hint}")
    found = [(res, rec, s) for res, rec, s in applied.settings(
        kinds=("env", "config"), include_defaults=True) if s.name == name]
    value, status = None, ""
    if found:
        res, rec, s = found[0]
        why = drop_reason(s, applied.facts, [k for _, k in knobs], libraries)
        if why:
            status = f"not written: {why}"
        elif all(s.is_default for _, _, s in found) and not include_defaults:
            status = "not written: it only confirms the library default (emit --all writes it)"
        else:
            value = (s.separator or "").join(_text(x.value) for _, _, x in found)
            status = (f"written: {rec.title}" if rec.title.startswith("pinned by")
                      else f"written as advised by {res.probe}/{rec.id}")
    else:
        excl = config.model.settings.exclude.get(name)
        accept = config.model.recommendations.accept
        if excl not in (None, False):
            status = f"not written: excluded by {config.where(('settings', 'exclude', name))}"
        elif advice and accept:
            status = (f"not written: [recommendations] accept "
                      f"({config.where(('recommendations', 'accept'))}) lists none of "
                      f"{', '.join(sorted(refs))}")
        else:
            status = "not written: the profile advises no value for it"
    return Explanation(name, value, status, scopes, advice)
