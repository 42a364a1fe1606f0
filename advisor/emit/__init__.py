"""``advisor emit``: a profile's settings in the formats HPC sites load them with.

Formats are registered through the ``advisor_register_emitters`` hook; the built-in ones
(:mod:`advisor.emit.builtin`) use the same hook a third party does.  Each format is a pure
function ``render(profile, options) -> str`` with deterministic bytes.

Public API (the CLI calls these):

- :class:`EmitOptions` - what to include;
- :func:`render` - look up a format and render a profile with it, after :func:`check_names`
  (names never emitted, names no knob declares: :mod:`advisor.formats.names`);
- :func:`library_version` - the version of a library recorded in machine facts;
- :func:`dropped` - settings left out because the recorded library version excludes them.

Environment formats (env, csh, fish, lmod, tcl, spack, easybuild) write only ``kind="env"``
settings.  ``toml`` and ``json`` write the selected *settings* (``env`` and ``config`` kinds,
with library, rationale and provenance), not the whole profile: the profile itself already is
TOML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from advisor.emit.common import drop_reason, library_version
from advisor.errors import AdvisorError, BadInputError, EmitError

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.models import Profile, Setting
    from advisor.plugins import Emitter

__all__ = ["EmitOptions", "render", "check_names", "library_version", "dropped", "left_out_notes",
           "restrict_to_valid"]


@dataclass(frozen=True)
class EmitOptions:
    """What ``advisor emit`` writes.

    :ivar comments: a one-line rationale per setting (``--no-comments`` sets False); the
        provenance header is always written.
    :ivar include_defaults: also settings that only confirm the library default, and those of
        recommendations ``advisor verify`` refuted on the profile's machine class, each with a
        comment naming the verdict (``--all``; ``advisor.emit.veto``).
    :ivar plugins: keep only settings of these probe or plugin names (``--plugin``); None: all.
    :ivar knobs: knob records (``Registry.knobs``): a setting whose name (or list item name)
        none of them declares is refused (``check_names``), and their version ranges drop
        settings the recorded library version does not read
        (``advisor.emit.common.drop_reason``).  None (no registry: format unit tests) skips
        both; names never emitted are refused regardless.
    :ivar libraries: library records (``Registry.libraries``); None: the built-in ones.
    :ivar left_out: ``advisor.emit.common.LeftOut`` entries decided before the format runs
        (``render`` adds the settings the recorded library versions exclude, since the format
        gets a profile without them; a configuration scope's excludes belong here too), so
        the format's left-out comment names them (``advisor.formats.common.left_out_comment``).
    """

    comments: bool = True
    include_defaults: bool = False
    plugins: Optional[frozenset[str]] = None
    knobs: Optional[tuple] = None
    libraries: Optional[Mapping[str, Any]] = field(default=None, compare=False, hash=False)
    left_out: tuple = field(default=(), compare=False, hash=False)


def restrict_to_valid(profile: "Profile", options: Optional[EmitOptions] = None) -> "Profile":
    """A copy of ``profile`` without the settings its recorded library versions exclude, so a
    third-party format receives only settings valid for the machine (built-in formats filter
    again, which is idempotent)."""
    options = options or EmitOptions()
    results = []
    changed = False
    for res in profile.results:
        recs = []
        for rec in res.recommendations:
            keep = [s for s in rec.settings if drop_reason(
                s, profile.facts, options.knobs or (), options.libraries) is None]
            if len(keep) != len(rec.settings):
                changed = True
                rec = rec.model_copy(update={"settings": keep})
            recs.append(rec)
        results.append(res.model_copy(update={"recommendations": recs}))
    if not changed:
        return profile
    return profile.model_copy(update={"results": results})


def check_names(profile: "Profile", options: EmitOptions, label: str = "the profile") -> None:
    """Refuse a profile whose selected settings (every kind, defaults included) hold a name that
    is never emitted (``advisor.formats.names.refused_reason``), or, when ``options.knobs`` is
    given, a name no knob record declares (``advisor.formats.names.undeclared``: list items
    included) or a value its knob's type rules out (``value_problem``).

    :param label: how the message names the profile (its path, in the CLI).
    :raises EmitError: one line naming the setting, the profile and the reason.
    """
    from advisor.formats.names import declared_names, refused_reason, undeclared
    from advisor.plugins import SETTING_KINDS

    declared = declared_names(options.knobs) if options.knobs is not None else None
    for res, rec, s in profile.settings(kinds=SETTING_KINDS, include_defaults=True,
                                        plugins=options.plugins):
        where = f"{label}: setting {res.probe}/{rec.id}: {s.name}"
        why = refused_reason(s.name)
        if why:
            raise EmitError(f"{where}: refused, never emitted: {why}")
        missing = undeclared(s, declared) if declared is not None else []
        if missing:
            raise EmitError(f"{where}: refused: no loaded plugin declares "
                            f"{', '.join(repr(n) for n in missing)}; plugin {res.plugin!r} "
                            "recommended it but did not declare it here (disabled with "
                            "ADVISOR_DISABLE_PLUGINS, failed to load, or another version: see "
                            "'advisor plugins'); --plugin NAME writes only the other plugins' "
                            "settings")
        bad = value_problem(s, options.knobs or (), options.libraries)
        if bad:
            raise EmitError(f"{where}: refused: {bad}")


def value_problem(setting: "Setting", knobs: Sequence["Knob"],
                  libraries: Optional[Mapping[str, Any]] = None) -> Optional[str]:
    """Why the library cannot read ``setting``'s value, judged by the knob record that declares
    the name (type ``int``/``bytes``/``float`` through the library's value grammar,
    ``advisor.libraries.record.ValueGrammar``; ``bool``; ``enum`` against ``allowed``), or None.
    A list variable's items are left to lint.  Catches a hand-edited profile before a job does
    (MPICH aborts ``MPI_Init`` on a CVAR value it cannot parse: ``advisor.libraries.mpich``)."""
    from packaging.utils import canonicalize_name

    from advisor.formats.entry import scalar_text
    from advisor.libraries import builtin_libraries
    from advisor.libraries.record import ValueGrammar

    if setting.separator:
        return None
    lib = canonicalize_name(setting.library)
    knob = next((k for k in knobs if canonicalize_name(k.library) == lib
                 and setting.name in (k.name, *k.aliases)), None)
    if knob is None:
        return None
    libs = builtin_libraries() if libraries is None else libraries
    grammar = getattr(libs.get(lib), "values", None) or ValueGrammar()
    text = scalar_text(setting.value)
    if knob.type in ("int", "bytes", "float") and grammar.number(text, knob.type) is None:
        return f"value {text!r} is not a number {setting.library} reads ({knob.type})"
    if knob.type == "bool" and not grammar.is_bool(text):
        return f"value {text!r} is not a boolean {setting.library} reads ({grammar.bool_text})"
    if knob.type == "enum" and knob.allowed and text not in {scalar_text(a) for a in knob.allowed}:
        return (f"value {text!r} is not one of {', '.join(scalar_text(a) for a in knob.allowed)}"
                f" ({setting.library})")
    return None


def render(profile: "Profile", fmt: str, emitters: dict[str, "Emitter"],
           options: EmitOptions, *, label: str = "the profile") -> str:
    """Render ``profile`` in format ``fmt``.

    :param emitters: name -> ``advisor.plugins.Emitter`` (``Registry.emitters``).
    :param label: how messages name the profile (the CLI passes its path).
    :return: the complete file text, ending in a newline.
    :raises BadInputError: ``fmt`` is not a known format (the message lists the known ones).
    :raises EmitError: a setting cannot be written safely (bad name, control character, a
        refused or undeclared name: ``check_names``), named in the message; or the format's
        render function raised (a third-party bug), with the format and plugin named.
    """
    emitter = emitters.get(fmt)
    if emitter is None:
        known = ", ".join(sorted(emitters)) or "none"
        raise BadInputError(f"unknown emit format {fmt!r}; known formats: {known}")
    from dataclasses import replace

    from advisor.emit.common import version_drops
    from advisor.emit.veto import veto_drops, without_vetoed

    valid = restrict_to_valid(profile, options)
    check_names(valid, options, label)
    # refuted advice (advisor.emit.veto) is taken out before the format runs, so a third-party
    # format never writes it; the left-out block names it from ``options.left_out``
    vetoed = veto_drops(valid, options)
    valid = without_vetoed(valid, options)
    options = replace(options, left_out=tuple(options.left_out) + tuple(
        version_drops(profile, options)) + tuple(vetoed))
    try:
        text = emitter.render(valid, options)
    except EmitError as exc:  # name the profile, as every other refusal does
        raise EmitError(str(exc) if str(exc).startswith(label) else f"{label}: {exc}") from exc
    except AdvisorError:
        raise
    except Exception as exc:  # a broken third-party format is reported, not a traceback
        raise EmitError(f"emit format {fmt!r} (from {emitter.plugin or 'unknown plugin'}) "
                        f"failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise BadInputError(f"emitter {fmt!r} ({emitter.plugin}) returned "
                            f"{type(text).__name__}, not text")
    if text and not text.endswith("\n"):
        text += "\n"
    return text


def dropped(profile: "Profile", options: Optional[EmitOptions] = None) -> list[str]:
    """One human line per selected setting left out because the library version (or MPI
    flavour) recorded in the profile excludes it; the CLI may show them on stderr."""
    options = options or EmitOptions()
    plugins = set(options.plugins) if options.plugins is not None else None
    out = []
    for res, rec, s in profile.settings(kinds=("env", "config"),
                                        include_defaults=options.include_defaults,
                                        plugins=plugins):
        why = drop_reason(s, profile.facts, options.knobs or (), options.libraries)
        if why:
            out.append(f"{res.probe}/{rec.id}: {why}")  # why starts with the setting's name
    return out


def left_out_notes(profile: "Profile", options: EmitOptions, fmt: str,
                   kinds: Optional[Sequence[str]] = None) -> list[tuple[str, str]]:
    """What a render of ``profile`` as ``fmt`` leaves out, as ``(level, text)`` lines for the
    user (level "warning" or "note"); pure, the CLI prints them.

    :param kinds: the setting kinds the format writes (``Emitter.kinds``); None: all of
        ``advisor.plugins.SETTING_KINDS`` (a format that did not declare them).
    :return: settings the recorded library version excludes (``dropped``); recommendations
        ``advisor verify`` refuted on the profile's class (``advisor.emit.veto``: left out, or
        written by ``--all``); default-confirming
        settings left out without ``include_defaults``; that nothing at all is selected, with
        each selected probe's status; settings of kinds the format cannot carry.
    """
    from advisor.plugins import SETTING_KINDS

    from advisor.emit.veto import vetoes

    out = [("warning", f"left out: {line}") for line in dropped(profile, options)]
    written = tuple(kinds) if kinds is not None else SETTING_KINDS
    sel = options.plugins
    for (probe, rid), veto in vetoes(profile).items():
        res = next(r for r in profile.results if r.probe == probe)
        if sel is not None and probe not in sel and res.plugin not in sel:
            continue
        out.append(("warning", f"written by --all although {veto.why}: {probe}/{rid}"
                    if options.include_defaults else
                    f"left out: {probe}/{rid}: {veto.why}; --all writes it"))
    if not options.include_defaults:
        defaults = sorted({s.name for _, _, s in profile.settings(
            kinds=written, include_defaults=True, plugins=sel) if s.is_default})
        if defaults:
            out.append(("note", f"{len(defaults)} setting(s) measured to be right at the library "
                                f"default are left out ({', '.join(defaults)}); --all writes "
                                "them too"))
    if not any(True for _ in profile.settings(kinds=SETTING_KINDS, include_defaults=True,
                                              plugins=sel)):
        why = "; ".join(f"{r.probe}: {r.status}" + (f" ({r.reason})" if r.reason else "")
                        for r in profile.results
                        if sel is None or r.probe in sel or r.plugin in sel)
        out.append(("note", f"no settings to write: the selected probes made no "
                            f"recommendation ({why})"))
    other = tuple(k for k in SETTING_KINDS if k not in written)
    if other:
        from advisor.formats import writers_of

        chosen = [s for _, _, s in profile.settings(
            kinds=other, include_defaults=options.include_defaults, plugins=sel)]
        names = sorted({s.name for s in chosen})
        writers = sorted({w for s in chosen for w in writers_of(s)} - {fmt})
        if names:
            what = ("they are set in the library's configuration or code, not the environment"
                    if "env" not in other else "they are environment variables")
            out.append(("note", f"{len(names)} setting(s) of kind {'/'.join(other)} have no "
                                f"{fmt} form: {what} ({', '.join(names)}); --format "
                                f"{' / '.join(writers) or 'toml'} writes them"))
    return out
