"""Hook specifications of hpc-advisor: signatures and contracts only.

Every hook is a *registrar*: it receives a ``register`` callable and calls it zero or more times,
so one plugin can contribute any number of items.  Implement them with ``advisor.hookimpl``::

    from advisor import hookimpl

    @hookimpl
    def advisor_register_probes(register):
        register(MyProbe())

Hooks are called once per command, after all plugins are loaded and before any work starts, in
registration order (``advisor.plugins.collect`` walks ``get_hookimpls()`` rather than calling
the hook, so it is not pluggy's last-registered-first): the core's own hook modules
(``advisor.plugins.BUILTIN_HOOK_MODULES``), then entry points sorted by name, then plugins
passed in by the caller.  An exception inside a hook, or a ``register`` call that
breaks the contract below, is recorded against that plugin (``advisor plugins`` shows it) and the
plugin's contributions from that hook are dropped; the other plugins are unaffected.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "advisor"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)


@hookspec
def advisor_register_probes(register):
    """Register probes: objects that check, measure and recommend.

    :param register: ``register(probe)``; ``probe`` must satisfy ``advisor.probe.Probe``: a unique
        ``name`` matching ``[a-z0-9][a-z0-9-]*``, a one-line ``description``, and the methods
        ``check(facts) -> Applicability``, ``measure(ctx) -> list[Evidence]`` and the pure
        ``recommend(evidence, facts) -> Advice``.  A duplicate name or a missing method raises
        ``PluginContractError`` inside ``register``, which is recorded against the plugin.
        Optional methods: ``verify``, ``lint``, ``headline`` (``advisor.probe``,
        ``advisor.specs.headline``; with the optional attribute ``headline_titles``, figure
        name -> human title), the optional attribute ``option_keys`` (each ``--option`` key
        it reads -> one line of help; a key no probe of a run declares is refused:
        ``advisor.probe.option_readers``) and ``figures(evidence, facts) -> list[FigureSpec]``
        (``advisor.probe.FigureMaker``): pure, no I/O and no matplotlib import; an exception or
        a bad return leaves the figure out with a warning in the report, never a crash.
    :return: ignored.
    Called by: ``advisor probe``, ``advisor verify``, ``advisor plugins``, ``advisor report``
    and ``advisor show --plot`` (``figures``).
    """


@hookspec
def advisor_register_emitters(register):
    """Register output formats for ``advisor emit --format NAME``.

    :param register: ``register(name, render, *, description="", extension="", kinds=None,
        parse=None, notes=None)``.  ``name`` matches ``[a-z0-9][a-z0-9-]*`` and is unique;
        ``render(selection) -> str`` is a pure function of an
        ``advisor.specs.selection.Selection`` (the profile, the options and every selected
        setting with what the emit decided about it) that returns the complete file text
        (ending in a newline).  It raises ``advisor.errors.EmitError`` for values the format cannot carry
        safely.  ``kinds`` declares which setting kinds (``Setting.kind``: "env", "config") the
        format writes; ``advisor emit`` then names the selected settings the format leaves out.
        ``parse(text, path) -> list[advisor.lint.read.EnvEntry]`` reads the format back (file
        order, 1-based lines), so ``advisor lint --format NAME`` (and ``auto`` for a file whose
        suffix is ``extension``) checks it; it raises ``advisor.errors.BadInputError`` for text
        it cannot read.  ``notes(selection) -> list[(level, text)]`` (level ``"warning"`` or
        ``"note"``) is what ``advisor emit`` prints on stderr about the render (``spack-modules``:
        a key without a version).  Before ``render`` runs, ``advisor emit`` refuses a profile holding a
        name no registered knob declares or, whatever a knob declares, one a shell, module tool,
        loader, runtime or tool reads as code (``advisor.specs.refused``).
    :return: ignored.
    Called by: ``advisor emit``, ``advisor emit --list`` and ``advisor lint``.
    """


@hookspec
def advisor_register_knobs(register):
    """Register knob records: the settings a library understands, as data.

    :param register: ``register(knob)`` with an ``advisor.knobs.Knob`` (library, flavour, name,
        type, unit, allowed values, defaults per version range, since/renamed/removed versions,
        aliases, source).  ``(library, flavour, name)`` is unique across plugins.
    :return: ignored.
    Called by: ``advisor emit`` (pick names valid for the detected version), ``advisor lint``.
    """


@hookspec
def advisor_register_facts(register):
    """Register extra fact detectors (new hardware, site specifics).

    :param register: ``register(name, detect)``; ``detect() -> dict[str, bool|int|float|str]``
        runs once per ``advisor facts``/``probe``; its result is stored under
        ``Facts.extra[name]``.  It should be fast (well under a second) and lenient: an exception
        (``SystemExit`` included) becomes a warning in ``Facts.warnings`` and the detector's facts
        are left out; one that has not returned within 5 s is abandoned with a warning.
    :return: ignored.
    Called by: ``advisor facts``, ``advisor probe``.
    """


@hookspec
def advisor_register_libraries(register):
    """Register library records: what the core knows about one library (``advisor.libraries``).

    :param register: ``register(library)`` with an ``advisor.libraries.Library``: its ``name``
        (PEP 503 normalised, matching ``[a-z0-9][a-z0-9-]*``; the ``Knob.library`` and
        ``Setting.library`` it answers for), environment-variable ``prefixes`` and
        ``canonical_prefix``, an optional ``list_variable`` (``GLIBC_TUNABLES``),
        ``version(facts) -> str | None``, an optional ``catalogue(facts) -> Catalogue | None``
        (the library's own list of names; must not raise), its value grammar (``values``, an
        ``advisor.libraries.ValueGrammar``), its name history (``history``) and knob records
        it carries.  A record that is not a ``Library``, fails ``Library.validate()`` or whose
        name another plugin registered already raises ``PluginContractError`` inside
        ``register``, which is recorded against the plugin.
    :return: ignored.
    Called by: every command that loads plugins; ``advisor emit`` and ``advisor lint`` ask the
    records for versions (knob version ranges), names and values.
    """
