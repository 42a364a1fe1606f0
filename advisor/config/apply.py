"""Pins, exclusions and accepted recommendations of the configuration applied to a profile
before ``advisor emit`` renders it.

:func:`apply_config` returns a new profile (the file is never changed):

1. ``[recommendations] accept``: when non-empty, recommendations not listed
   (``probe:recommendation-id``) lose their settings;
2. ``[settings.exclude]``: every setting of an excluded name is removed (list variables such as
   ``GLIBC_TUNABLES``: all their items);
3. ``[settings.pin]``: every setting of a pinned name is removed and one setting with the pinned
   value is added, in a recommendation ``<rec>.pin`` of the probe result that advised the name
   (or, when none did, of the plugin that registered the knob), titled ``pinned by FILE:LINE``
   (so every format's comment says where the pin is); it is never "default-confirming", so it is
   written without ``--all``.  Its library, kind, type, unit and separator come from the knob
   record that declares the name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from advisor.errors import BadInputError

if TYPE_CHECKING:  # pragma: no cover
    from advisor.config.scopes import Config
    from advisor.knobs import Knob
    from advisor.models import Profile

__all__ = ["Applied", "apply_config", "pin_value", "find_knob", "knob_entries"]


@dataclass(frozen=True)
class Applied:
    """What :func:`apply_config` did.

    :ivar profile: the profile to render.
    :ivar notes: human lines (the CLI prints them as notes): pins and excludes that matched no
        advice, accepted ids the profile lacks.
    """

    profile: "Profile"
    notes: tuple[str, ...] = ()
    #: ``advisor.specs.selection.LeftOut`` entries (cause ``"scope"``) of the settings an exclusion
    #: or the accepted list removed, for the formats' left-out comment (``EmitOptions.left_out``)
    left_out: tuple = ()


def pin_value(pin: Any) -> tuple[Any, Optional[str], Optional[str]]:
    """``(value, library, reason)`` of a pin written as a scalar or a table."""
    from advisor.config.schema import Pin

    if isinstance(pin, Pin):
        return pin.value, pin.library, pin.reason
    return pin, None, None


def find_knob(name: str, library: Optional[str], knobs: Sequence[tuple[str, "Knob"]],
              where: str) -> tuple[str, "Knob"]:
    """The ``(plugin, knob)`` that declares ``name`` (its canonical name or an alias).

    :raises BadInputError: no loaded knob declares it, or several libraries do and the pin
        names none (the message starts with ``where``, the pin's FILE:LINE).
    """
    from packaging.utils import canonicalize_name

    found = [(p, k) for p, k in knobs if name in (k.name, *k.aliases)
             and (library is None or canonicalize_name(k.library) == canonicalize_name(library))]
    libs = sorted({canonicalize_name(k.library) for _, k in found})
    if not found:
        lib = f" of library {library}" if library else ""
        raise BadInputError(f"{where}: key 'settings.pin.{name}': no loaded plugin declares a "
                            f"setting {name!r}{lib} (see 'advisor plugins'; a pin must name a "
                            "knob)")
    if len(libs) > 1:
        raise BadInputError(f"{where}: key 'settings.pin.{name}': declared by several "
                            f"libraries ({', '.join(libs)}); pin it as {{value = ..., library = "
                            "...}}")
    return found[0]


def apply_config(profile: "Profile", config: "Config", knobs: Sequence[tuple[str, "Knob"]],
                 libraries: Mapping[str, Any]) -> Applied:
    """The profile ``advisor emit`` renders under ``config`` (see the module docstring).

    :param knobs: ``(plugin, Knob)`` of every loaded knob record (``Registry.entries``).
    :raises BadInputError: a pinned name no knob declares, or a pinned value the knob's library
        cannot read; the message names the scope file and line of the pin.
    """
    from advisor.models import PluginResult, Recommendation

    cfg = config.model
    notes: list[str] = []
    accept = set(cfg.recommendations.accept)
    excluded = {n for n, v in cfg.settings.exclude.items() if v is not False}
    advised = {f"{r.probe}:{rec.id}" for r in profile.results for rec in r.recommendations}
    for ref in sorted(accept - advised):
        notes.append(f"{config.where(('recommendations', 'accept'))}: accepted {ref} is not a "
                     "recommendation of this profile")
    new_settings = pinned_settings(config, knobs, libraries, profile.facts)
    from advisor.specs.selection import LeftOut

    results = []
    removed: list = []
    placed: set[str] = set()
    for res in profile.results:
        recs = []
        for rec in res.recommendations:
            keep_all = not accept or f"{res.probe}:{rec.id}" in accept
            kept, pinned = [], []
            for s in rec.settings:
                if s.name in new_settings:
                    if s.name not in placed:
                        placed.add(s.name)
                        pinned.append(s.name)
                elif keep_all and s.name not in excluded:
                    kept.append(s)
                else:
                    why = (f"excluded by {config.where(('settings', 'exclude', s.name))}"
                           if s.name in excluded else
                           f"{res.probe}:{rec.id} is not in recommendations.accept")
                    removed.append(LeftOut(res.probe, rec.id, s, "scope", why))
            recs.append(rec.model_copy(update={"settings": kept}))
            for name in pinned:
                s, title, _ = new_settings[name]
                old = next(o for o in rec.settings if o.name == name)
                if s.default is None:
                    s = s.model_copy(update={"default": old.default})
                # the evidence measured the advice, not the pin: named in the text, not
                # claimed by the pin (which carries no evidence and low confidence)
                ev = f" (evidence: {', '.join(rec.evidence)})" if rec.evidence else ""
                title = f"{title}; not measured; the measured advice was {old.value}{ev}"
                recs.append(Recommendation(id=_free_id(f"{rec.id}.pin", recs), title=title,
                                           settings=[s], rationale=title, confidence="low"))
        results.append(res.model_copy(update={"recommendations": recs}))
    for name, (s, title, plugin) in new_settings.items():
        if name in placed:
            continue
        rec = Recommendation(id=_free_id("pin", [r for res in results
                                                 for r in res.recommendations]), title=title, settings=[s], rationale=title,
                             confidence="high")
        host = next((i for i, r in enumerate(results) if r.plugin == plugin), None)
        if host is None:
            results.append(PluginResult(plugin=plugin, probe=plugin, status="ok",
                                        reason="pinned settings of the configuration",
                                        recommendations=[rec]))
        else:
            r = results[host]
            results[host] = r.model_copy(update={"recommendations": [*r.recommendations, rec]})
    named = {s.name for _, _, s in profile.settings(kinds=("env", "config"),
                                                    include_defaults=True)}
    for name in sorted(excluded - named):
        notes.append(f"{config.where(('settings', 'exclude', name))}: excluded {name} is not "
                     "advised by this profile")
    return Applied(profile.model_copy(update={"results": results}), tuple(notes),
                   tuple(removed))


def _free_id(base: str, recs: Sequence[Any]) -> str:
    """``base``, or ``base`` + a number when a recommendation in ``recs`` has that id."""
    taken = {r.id for r in recs}
    n, rid = 1, base
    while rid in taken:
        n += 1
        rid = f"{base}{n}"
    return rid


def knob_entries(registry: Any) -> list[tuple[str, "Knob"]]:
    """``(plugin, Knob)`` of every knob a plugin registry holds (``Registry.entries``)."""
    return [(e.plugin, e.item) for e in registry.entries if e.kind == "knob"]


def pinned_settings(config: "Config", knobs: Sequence[tuple[str, "Knob"]],
                    libraries: Mapping[str, Any],
                    facts: Optional[Any] = None) -> dict[str, tuple[Any, str, str]]:
    """The settings the pins of ``config`` stand for: name -> ``(Setting, title, plugin)``.
    Also run by ``advisor config set`` / ``edit`` on the file being changed, so a pin emit
    would refuse is refused there, before anything is written.

    :param facts: the profile's facts (the recorded library versions give each pin's default).
    :raises BadInputError: a pin of an excluded name, of a name no knob declares, or a value
        the knob's library cannot read (names the scope file and line).
    """
    from advisor.libraries import version_of
    from advisor.libraries.reads import value_problem
    from advisor.models import Setting

    cfg = config.model
    excluded = {n for n, v in cfg.settings.exclude.items() if v is not False}
    new_settings: dict[str, tuple[Any, str, str]] = {}
    for name, pin in dict(cfg.settings.pin).items():
        where = config.where(("settings", "pin", name))
        if name in excluded:
            raise BadInputError(f"{where}: key 'settings.pin.{name}': {name} is also excluded "
                                f"({config.where(('settings', 'exclude', name))}); remove one, "
                                f"or lift the exclusion in a higher scope (settings.exclude."
                                f"{name} = false)")
        value, library, reason = pin_value(pin)
        plugin, knob = find_knob(name, library, knobs, where)
        version = version_of(facts, knob.library, libraries) if facts is not None else None
        s = Setting(library=knob.library, flavour=knob.flavour, name=name, value=value,
                    type=knob.type,
                    unit=knob.unit, default=knob.default_for(version), kind=knob.kind,
                    separator=knob.separator)
        bad = value_problem(s, [knob], libraries)
        if bad:
            raise BadInputError(f"{where}: key 'settings.pin.{name}': {bad}")
        title = f"pinned by {where}" + (f" ({reason})" if reason else "")
        new_settings[name] = (s, title, plugin)
    return new_settings


def check_scope_pins(scope: Any, knobs: Sequence[tuple[str, "Knob"]],
                     libraries: Mapping[str, Any]) -> None:
    """Refuse the pins of one scope file (``advisor.config.scopes.Scope``) that emit would
    refuse (:func:`pinned_settings`); ``advisor config set`` / ``edit`` call it before writing.

    :raises BadInputError: as :func:`pinned_settings`.
    """
    from advisor.config.schema import ScopeFile
    from advisor.config.scopes import Config

    pinned_settings(Config((scope,), scope.data, ScopeFile.model_validate(scope.data)), knobs,
                    libraries)
