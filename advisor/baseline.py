"""What ``advisor verify`` compares advice with, and when no measurement is needed.

:class:`Baseline` is the baseline of a verification (``MeasureContext.against``,
``advisor.verify.verify_profile(against=...)``; the CLI's ``--against-env`` is converted to it
once).  A recommendation whose every setting equals the library default (:func:`all_default`),
or, against the environment, whose values the environment already holds (:func:`all_in_env`),
cannot change what the library does: its verdict is ``no-effect`` without measuring.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence


if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.models import Facts, Recommendation, Setting
    from advisor.libraries import Library


class Baseline(str, Enum):
    """What ``advisor verify`` compares the advice with.

    ``DEFAULTS`` (``"defaults"``): the library defaults, the advised variables removed;
    ``ENV`` (``"env"``): the current environment as it is (``advisor verify --against-env``).
    A ``str`` enum (``enum.StrEnum`` needs Python 3.11): a member equals its value
    (``Baseline.ENV == "env"``) and prints as it."""

    DEFAULTS = "defaults"
    ENV = "env"

    def __str__(self) -> str:
        return self.value


def _norm(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value).strip()
    low = text.lower()
    if low in ("true", "yes", "on"):
        return "1"
    if low in ("false", "no", "off"):
        return "0"
    try:
        f = float(text)
        return str(int(f)) if f.is_integer() else repr(f)
    except ValueError:
        return text


def setting_default(s: Setting, facts: Optional[Facts], knobs: Sequence["Knob"],
                    libraries: Mapping[str, "Library"]) -> Any:
    """The library default ``s`` replaces: ``Setting.default``, else the knob record's default
    for the detected version of the library (``advisor.libraries.version_of`` over
    ``libraries``, the registry's records), None when unknown."""
    if s.default is not None:
        return s.default
    from advisor.libraries import version_of

    version = version_of(facts, s.library, libraries)
    for k in knobs:
        if k.library == s.library and (s.name == k.name or s.name in k.aliases) and (
                k.flavour is None or s.flavour is None or k.flavour == s.flavour):
            return k.default_for(version)
    return None


def all_default(rec: Recommendation, facts: Optional[Facts], knobs: Sequence["Knob"],
                libraries: Mapping[str, "Library"]) -> bool:
    """True when ``rec`` has settings and each equals its library default (``is_default`` or
    value == default): applying it cannot change anything."""
    if not rec.settings:
        return False
    for s in rec.settings:
        if s.is_default:
            continue
        d = setting_default(s, facts, knobs, libraries)
        if d is None or _norm(d) != _norm(s.value):
            return False
    return True


def all_in_env(rec: Recommendation, environ: Mapping[str, str]) -> bool:
    """True when every env setting of ``rec`` already has its value in ``environ``."""
    env = [s for s in rec.settings if s.kind == "env"]
    if not env or len(env) != len(rec.settings):
        return False
    for s in env:
        cur = environ.get(s.name)
        if cur is None:
            return False
        if s.separator:
            if _norm(s.value) not in [_norm(x) for x in cur.split(s.separator)]:
                return False
        elif _norm(cur) != _norm(s.value):
            return False
    return True


__all__ = ["Baseline", "all_default", "all_in_env", "setting_default"]
