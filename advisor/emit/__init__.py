"""``advisor emit``: a profile's settings in the formats HPC sites load them with.

The pipeline the CLI runs is load, :func:`plan`, :func:`write`, then the file is written:

- :func:`plan` - the domain pipeline: the "profile from another machine" check, the
  configuration scopes (``advisor.config.apply``; ``[modules]``: :func:`module_deps`), then
  the selection
  (``advisor.emit.decide``: every selected setting with the one decision about it);
- :func:`write` - the format's ``render(selection) -> str`` (``Registry.emitters``), its
  failures named;
- :func:`render` - :func:`advisor.emit.decide.select` and :func:`write` in one call, without
  configuration scopes or machine check (``advisor.joint`` reads the selection directly);
- :func:`left_out_notes`, :func:`dropped` - what the selection leaves out, for stderr.

Formats are registered through the ``advisor_register_emitters`` hook; the built-in ones
(:mod:`advisor.emit.builtin`) use the same hook a third party does.  A format receives an
``advisor.specs.selection.Selection`` and never imports this package.

Environment formats (env, csh, fish, lmod, tcl, spack, easybuild) write only ``kind="env"``
settings.  ``toml`` and ``json`` write the selected *settings* (``env`` and ``config`` kinds,
with library, rationale and provenance), not the whole profile: the profile itself already is
TOML.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from advisor.emit.decide import select
from advisor.emit.veto import vetoes
from advisor.errors import AdvisorError, BadInputError, EmitError, did_you_mean

if TYPE_CHECKING:  # pragma: no cover
    from advisor.config.scopes import Config
    from advisor.models import Facts, Profile
    from advisor.plugins import Emitter, Registry
    from advisor.specs.selection import EmitOptions, ModuleDeps, Selection

__all__ = ["Plan", "plan", "module_deps", "write", "render", "emitter_of", "dropped",
           "left_out_notes", "FORMAT_ALIASES", "unknown_format"]


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` decided for one emit.

    :ivar selection: the selection the format renders.
    :ivar emitter: the format (``advisor.plugins.Emitter``).
    """

    selection: "Selection"
    emitter: "Emitter"


def emitter_of(registry: "Registry", fmt: str) -> "Emitter":
    """The registered format ``fmt``.

    :raises BadInputError: ``fmt`` is not a known format (the message lists the known ones).
    """
    emitter = registry.emitters.get(fmt)
    if emitter is None:
        raise BadInputError(unknown_format(f"unknown emit format {fmt!r}", fmt,
                                           registry.emitters))
    return emitter


#: Words sites use for a format whose name here differs (the tool's or language's name): the
#: first guess of the "did you mean" of an unknown ``--format`` (``advisor.errors.did_you_mean``).
#: Built-in formats only (the core names no plugin); a plugin's format is found by spelling.
FORMAT_ALIASES = {
    "lua": "lmod", "modulefile": "lmod",
    "environment-modules": "tcl", "envmodules": "tcl", "modules": "tcl", "module": "tcl",
    "bash": "env", "zsh": "env", "ksh": "env", "dash": "env", "posix": "env",
    "tcsh": "csh",
    "eb": "easybuild", "easyconfig": "easybuild", "hooks": "easybuild-hooks",
    "modules.yaml": "spack-modules", "env_vars.yaml": "spack",
    "c++": "cxx-header", "cpp": "cxx-header", "hpp": "cxx-header",
}


def unknown_format(head: str, fmt: str, known) -> str:
    """One line refusing format ``fmt``: ``head``, the nearest known name (``FORMAT_ALIASES``,
    then spelling), and the known names.

    :param known: the format names there are (iterable of str).
    """
    names = sorted(known)
    near = did_you_mean(fmt, names, FORMAT_ALIASES)
    return (head + (f": did you mean {near}?" if near else "")
            + f" (known formats: {', '.join(names) or 'none'})")


def plan(profile: "Profile", registry: "Registry", config: "Config", facts: Optional["Facts"],
         *, fmt: str, options: "EmitOptions", label: str = "the profile", strict: bool = False,
         say: Optional[Callable[[str, str], None]] = None,
         source: Optional[str] = None) -> Plan:
    """The domain pipeline of one emit of ``profile`` as ``fmt``.

    :param registry: the plugin registry, whole: formats, knobs and library records.
    :param config: the loaded configuration scopes (pins, exclusions, accepted advice).
    :param facts: this machine's facts, for the "profile from another machine" check; None
        skips it.
    :param strict: a profile from another machine is refused rather than warned about.
    :param say: ``say(level, text)`` receives each warning (``"warning"``: another machine)
        and note (``"note"``: from the configuration) as soon as it is known; None drops them.
    :param source: the profile file's path (``Selection.source``).
    :raises BadInputError: unknown ``fmt``; with ``strict``, a profile from another machine;
        a bad pin (``advisor.config.apply``).
    :raises EmitError: a setting no format may write (``advisor.emit.decide.select``).
    """
    from advisor.config.apply import apply_config, knob_entries
    from advisor.facts.compare import error_line, machine_mismatch, warning_lines

    emitter = emitter_of(registry, fmt)
    tell = say or (lambda _level, _text: None)
    diffs = machine_mismatch(profile, facts, registry.libraries) if facts is not None else []
    if diffs and strict:
        raise BadInputError(f"{label}: {error_line(diffs)}; without --strict emit writes it "
                            "with the list as a warning")
    for line in warning_lines(diffs):
        tell("warning", line)
    applied = apply_config(profile, config, knob_entries(registry), registry.libraries)
    for note in applied.notes:  # docs/config.md
        tell("note", note)
    options = replace(options, left_out=tuple(options.left_out) + tuple(applied.left_out),
                      modules=module_deps(config))
    return Plan(select(applied.profile, registry, options, fmt, label=label, source=source),
                emitter)


def module_deps(config: "Config") -> "ModuleDeps":
    """The ``[modules]`` section of the merged configuration as the emit option the lmod/tcl
    formats read (``advisor.specs.selection.ModuleDeps``; its defaults where unset)."""
    from advisor.specs.selection import ModuleDeps

    sec, default = config.model.modules, ModuleDeps()
    return ModuleDeps(dependency=sec.dependency or default.dependency,
                      mpi=tuple(sorted(sec.mpi.items())), family=sec.family or default.family)


def write(emitter: "Emitter", selection: "Selection", *, label: str = "the profile") -> str:
    """``emitter.render(selection)``: the complete file text, ending in a newline.

    :raises EmitError: a setting the format cannot write safely (named in the message, with
        the profile's ``label``), or the format's render function raised (a third-party bug),
        with the format and plugin named.
    :raises BadInputError: the format returned something other than text.
    """
    fmt = emitter.name
    try:
        text = emitter.render(selection)
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


def render(profile: "Profile", fmt: str, registry: "Registry", options: "EmitOptions", *,
           label: str = "the profile") -> str:
    """Render ``profile`` as ``fmt`` without configuration scopes or machine check: the
    selection (:func:`advisor.emit.decide.select`), then :func:`write`.

    :raises BadInputError: ``fmt`` is not a known format.
    :raises EmitError: as :func:`advisor.emit.decide.select` and :func:`write`.
    """
    emitter = emitter_of(registry, fmt)
    return write(emitter, select(profile, registry, options, fmt, label=label), label=label)


def dropped(selection: "Selection") -> list[str]:
    """One human line per written-kind setting (``env``, ``config``; defaults only with
    ``--all``) left out because the library version (or MPI flavour) recorded in the profile
    excludes it: ``probe/rec: NAME: why``."""
    return [f"{lo.probe}/{lo.recommendation}: {lo.setting.name}: {lo.why}"
            for lo in selection.dropped() if lo.cause == "version"
            and lo.setting.kind in ("env", "config")
            and (selection.include_defaults or not lo.setting.is_default)]


def left_out_notes(selection: "Selection",
                   kinds: Optional[Sequence[str]] = None) -> list[tuple[str, str]]:
    """What the render of ``selection`` leaves out, as ``(level, text)`` lines for the user
    (level "warning" or "note"); pure, the CLI prints them.

    :param kinds: the setting kinds the format writes (``Emitter.kinds``); None: all of
        ``advisor.plugins.SETTING_KINDS`` (a format that did not declare them).
    :return: settings the recorded library version excludes (:func:`dropped`); recommendations
        ``advisor verify`` refuted on the profile's class (``advisor.emit.veto``: left out, or
        written by ``--all``); default-confirming settings left out without
        ``include_defaults``; that nothing at all is selected, with each selected probe's
        status; settings of kinds the format cannot carry.  Nothing for a format that writes
        no setting (``kinds`` empty: ``nhc``, ``slurm-healthcheck``, ``reframe-test``).
    """
    from advisor.plugins import SETTING_KINDS

    if kinds is not None and not tuple(kinds):
        return []  # a format that writes no setting (nhc, reframe-test): none is left out of it
    profile, options, fmt = selection.profile, selection.options, selection.fmt
    out = [("warning", f"left out: {line}") for line in dropped(selection)]
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
        defaults = sorted({c.setting.name for c in selection.chosen
                           if c.setting.is_default and c.setting.kind in written})
        if defaults:
            out.append(("note", f"{len(defaults)} setting(s) measured to be right at the library "
                                f"default are left out ({', '.join(defaults)}); --all writes "
                                "them too"))
    if not selection.chosen:
        out.append(("note", f"no settings to write: the selected probes made no "
                            f"recommendation ({selection.selected_status()})"))
    other = tuple(k for k in SETTING_KINDS if k not in written)
    if other:
        chosen = [c for c in selection.chosen if c.setting.kind in other and (
            options.include_defaults or not c.setting.is_default)]
        names = sorted({c.setting.name for c in chosen})
        writers = sorted({w for c in chosen for w in c.writers} - {fmt})
        if names:
            what = ("they are set in the library's configuration or code, not the environment"
                    if "env" not in other else "they are environment variables")
            out.append(("note", f"{len(names)} setting(s) of kind {'/'.join(other)} have no "
                                f"{fmt} form: {what} ({', '.join(names)}); --format "
                                f"{' / '.join(writers) or 'toml'} writes them"))
    return out
