"""The selection of one emit (``advisor.specs.selection.Selection``): every selected setting
with the one decision about it, made here and nowhere else.

For each setting of the selected probes (every kind, defaults included) this module asks
``advisor.libraries.reads.drop_reason`` exactly once whether the recorded library version reads
it, looks up the verdicts (``advisor.emit.veto``) and refuses the names no format may write.
The formats, the left-out comment, the notes on stderr and ``advisor.joint`` all read the
result; none decides again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from packaging.utils import canonicalize_name

from advisor.emit.veto import vetoes
from advisor.errors import EmitError
from advisor.libraries.reads import drop_reason, value_problem
from advisor.specs.names import declared_names, refused_reason, undeclared
from advisor.specs.selection import EmitOptions, LeftOut, Selection, Source

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import PluginResult, Profile, Setting
    from advisor.plugins import Registry

__all__ = ["select"]


def _refusal(res: "PluginResult", rec_id: str, s: "Setting", registry: "Registry",
             declared: Optional[frozenset[str]], label: str) -> Optional[str]:
    """Why ``s`` may be written by no format (one line naming it), or None."""
    where = f"{label}: setting {res.probe}/{rec_id}: {s.name}"
    missing = undeclared(s, declared) if declared is not None else []
    if missing:
        return (f"{where}: refused: no loaded plugin declares "
                f"{', '.join(repr(n) for n in missing)}; plugin {res.plugin!r} "
                "recommended it but did not declare it here (disabled with "
                "ADVISOR_DISABLE_PLUGINS, failed to load, or another version: see "
                "'advisor plugins'); --plugin NAME writes only the other plugins' settings")
    bad = value_problem(s, registry.knobs, registry.libraries)
    return f"{where}: refused: {bad}" if bad else None


def select(profile: "Profile", registry: "Registry", options: EmitOptions,
           fmt: str = "this format", *, label: str = "the profile",
           source: Optional[str] = None) -> Selection:
    """The selection of ``profile`` for format ``fmt`` under ``options``.

    Each selected setting (``options.plugins``; every kind, defaults included) gets one
    ``drop_reason`` call: a setting the recorded library version does not read is left out
    (cause ``"version"``); one of a recommendation ``advisor verify`` refuted on the profile's
    machine class is left out (cause ``"verdict"``), or written with the verdict named under
    ``--all``.

    :param registry: the plugin registry (``advisor.plugins.Registry``): its knobs and library
        records judge versions and values, plugin-registered ones included.
    :param label: how messages name the profile (the CLI passes its path).
    :param source: the profile file's path (``Selection.source``); None: not from a file.
    :raises EmitError: a selected setting holds a name never emitted
        (``advisor.specs.names``; checked first, whatever a plugin declares or the recorded
        version reads), or one that is not version-dropped holds, with
        ``options.refuse_undeclared``, a name no knob declares, or a value its knob's type rules
        out; one line naming the setting and the profile.
    """
    from advisor.formats import writers_of
    from advisor.plugins import SETTING_KINDS

    knobs, libraries = registry.knobs, registry.libraries
    declared = declared_names(knobs) if options.refuse_undeclared else None
    found = vetoes(profile)
    writers: dict[tuple[str, str], tuple[str, ...]] = {}
    chosen: list[Source] = []
    plugins = set(options.plugins) if options.plugins is not None else None
    rows = profile.settings(kinds=SETTING_KINDS, include_defaults=True, plugins=plugins) \
        if plugins is None or plugins else []  # an explicit empty filter selects nothing
    for res, rec, s in rows:
        named = refused_reason(s.name)  # before the version decision: never even a comment
        if named:
            raise EmitError(f"{label}: setting {res.probe}/{rec.id}: {s.name}: refused, never "
                            f"emitted: {named}")
        drop, veto = None, ""
        why = drop_reason(s, profile.facts, knobs, libraries)  # the one version decision
        if why:
            why = why[len(s.name) + 2:] if why.startswith(f"{s.name}: ") else why
            drop = LeftOut(res.probe, rec.id, s, "version", why)
        else:
            refused = _refusal(res, rec.id, s, registry, declared, label)
            if refused:
                raise EmitError(refused)
            v = found.get((res.probe, rec.id))
            if v is not None and options.include_defaults:
                veto = f"written by --all although {v.why}"
            elif v is not None:
                drop = LeftOut(res.probe, rec.id, s, "verdict", f"{v.why}; --all writes it")
        key = (s.kind, canonicalize_name(s.library))
        if key not in writers:
            writers[key] = tuple(writers_of(s))
        # the title is the one-line "why" by contract; the full rationale stays in the profile
        chosen.append(Source(res.plugin, res.probe, rec.id, rec.title, s, veto, drop,
                             writers[key]))
    return Selection(profile, tuple(chosen), options, fmt, libraries, source)
