"""Plugin manager factory and the registry of what plugins contributed.

``make_plugin_manager`` builds a fresh ``pluggy.PluginManager`` every call (no module global),
loading the ``advisor`` entry points one by one so that a plugin that fails to import is recorded
and skipped.  ``collect`` calls each registrar hook implementation separately and validates what
it registers, so a plugin that breaks a contract loses only its own contributions.

Selection: ``ADVISOR_DISABLE_PLUGINS=a,b`` (entry-point names) and the CLI's ``--plugin`` /
``--skip-plugin`` (entry-point or probe names).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import pluggy

from advisor import hookspecs
from advisor.errors import PluginContractError

ENTRY_POINT_GROUP = "advisor"
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass
class PluginIssue:
    plugin: str
    stage: str  # "import", "register", a hook name
    error: str


#: The values of ``advisor.models.Setting.kind`` (kept here so that loading plugins does not
#: import the models; a unit test checks the two agree).
SETTING_KINDS = ("env", "config")


@dataclass
class Emitter:
    name: str
    render: Callable[..., str]
    description: str = ""
    extension: str = ""
    plugin: str = ""
    #: setting kinds the format writes ("env", "config"); None: not declared
    kinds: Optional[tuple[str, ...]] = None
    #: ``parse(text, path) -> list[advisor.lint.read.EnvEntry]``: reads the format back, so
    #: ``advisor lint --format NAME`` can check it; None: the format is write-only
    parse: Optional[Callable[[str, str], list]] = None
    #: ``notes(selection) -> list[(level, text)]``: what ``advisor emit`` prints on stderr
    #: about this render (level ``"warning"`` or ``"note"``); None: nothing
    notes: Optional[Callable[..., list]] = None


#: The kinds of things a plugin registers, one per registrar hook (``Registered.kind``).
KINDS = ("probe", "emitter", "knob", "fact_detector", "library")


@dataclass(frozen=True)
class Registered:
    """One thing a plugin registered: ``kind`` (one of ``KINDS``), its ``name`` (probe, format,
    ``library:NAME`` of a knob, fact detector or library name), the registered ``item`` (the
    probe object, ``Emitter``, ``advisor.knobs.Knob``, detect callable, ``Library``) and the
    name of the ``plugin`` that registered it."""

    kind: str
    name: str
    item: Any
    plugin: str


@dataclass
class Registry:
    """What the loaded plugins contributed (``entries``, in registration order), with the
    problems met on the way.  The views (``probes``, ``emitters``, ...) are read-only: built
    anew from ``entries`` at each access."""

    entries: list[Registered] = field(default_factory=list)
    issues: list[PluginIssue] = field(default_factory=list)
    plugins: dict[str, str] = field(default_factory=dict)  # name -> module or dist description
    skipped_probes: dict[str, str] = field(default_factory=dict)  # probe -> plugin, deselected
    #: plugin -> probe names its failed ``advisor_register_probes`` tried to register (lost)
    lost_probes: dict[str, list[str]] = field(default_factory=dict)

    def _view(self, kind: str) -> Mapping[str, Any]:
        return MappingProxyType({e.name: e.item for e in self.entries if e.kind == kind})

    @property
    def probes(self) -> Mapping[str, Any]:
        """probe name -> probe object."""
        return self._view("probe")

    @property
    def emitters(self) -> Mapping[str, "Emitter"]:
        """format name -> ``Emitter``."""
        return self._view("emitter")

    @property
    def knobs(self) -> list[Any]:
        """The ``advisor.knobs.Knob`` records, in registration order (a new list)."""
        return [e.item for e in self.entries if e.kind == "knob"]

    @property
    def fact_detectors(self) -> Mapping[str, Callable[[], dict]]:
        """fact detector name -> detect callable (``advisor.facts.detect``'s ``extra``)."""
        return self._view("fact_detector")

    @property
    def libraries(self) -> Mapping[str, Any]:
        """library name -> ``Library`` record (``advisor_register_libraries``)."""
        return self._view("library")

    def plugin_of(self, kind: str, name: str) -> Optional[str]:
        """The plugin that registered the ``kind`` entry ``name``; None when there is none."""
        return next((e.plugin for e in self.entries if e.kind == kind and e.name == name), None)

    def owners(self, kind: str) -> dict[str, str]:
        """name -> plugin of every ``kind`` entry (e.g. ``owners("probe")`` for the runner)."""
        return {e.name: e.plugin for e in self.entries if e.kind == kind}

    def of_plugin(self, plugin: str) -> list[Registered]:
        """Everything ``plugin`` registered, in registration order."""
        return [e for e in self.entries if e.plugin == plugin]

    def add(self, kind: str, name: str, item: Any, plugin: str) -> None:
        """Record an entry (``collect`` calls this after validating it)."""
        if kind not in KINDS:
            raise ValueError(f"unknown registry kind {kind!r}; known: {', '.join(KINDS)}")
        self.entries.append(Registered(kind, name, item, plugin))


class AdvisorPluginManager(pluggy.PluginManager):
    """A ``pluggy.PluginManager`` that remembers import failures."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self.add_hookspecs(hookspecs)
        self.load_issues: list[PluginIssue] = []
        self.origins: dict[str, str] = {}


def disabled_from_env(environ: Optional[dict] = None) -> set[str]:
    env = os.environ if environ is None else environ
    return {p.strip() for p in env.get("ADVISOR_DISABLE_PLUGINS", "").split(",") if p.strip()}


def known_plugin_names() -> tuple[list[str], set[str]]:
    """The names ``ADVISOR_DISABLE_PLUGINS`` / ``[plugins] disable`` can block: (the installed
    ``advisor`` entry-point names, sorted; those plus the core hook modules,
    ``BUILTIN_HOOK_MODULES``).  Reads the entry-point metadata only; imports no plugin."""
    from importlib.metadata import entry_points as _eps

    installed = sorted({ep.name for ep in _eps(group=ENTRY_POINT_GROUP)})
    return installed, set(installed) | set(BUILTIN_HOOK_MODULES)


def make_plugin_manager(
    *,
    disable: Iterable[str] = (),
    only: Optional[Iterable[str]] = None,
    entry_points: bool = True,
    plugins: Iterable[tuple[str, object]] = (),
) -> AdvisorPluginManager:
    """Build a fresh plugin manager.

    :param disable: entry-point names not to load (added to ``ADVISOR_DISABLE_PLUGINS``).
    :param only: when given, load only these entry-point names.
    :param entry_points: load the ``advisor`` entry-point group (tests pass False and give
        ``plugins`` explicitly).
    :param plugins: extra ``(name, module_or_object)`` pairs to register.
    :return: the manager; ``load_issues`` lists plugins that failed to import.
    """
    pm = AdvisorPluginManager()
    blocked = set(disable) | disabled_from_env()
    _register_builtin(pm)
    wanted = set(only) if only else None
    for name in blocked:
        pm.set_blocked(name)
    if entry_points:
        from importlib.metadata import entry_points as _eps

        for ep in sorted(_eps(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            pm.origins.setdefault(ep.name, f"{dist.name} {dist.version}" if dist is not None
                                  else ep.value)
            if ep.name in blocked or (wanted is not None and ep.name not in wanted):
                continue
            if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
                continue
            try:
                pm.register(ep.load(), name=ep.name)
            except Exception as exc:  # a broken third-party plugin never takes the others down
                pm.load_issues.append(PluginIssue(ep.name, "import", f"{type(exc).__name__}: {exc}"))
    for name, obj in plugins:
        if name in blocked:
            continue
        try:
            pm.register(obj, name=name)
            pm.origins[name] = getattr(obj, "__name__", type(obj).__name__)
        except Exception as exc:
            pm.load_issues.append(PluginIssue(name, "register", f"{type(exc).__name__}: {exc}"))
    _report_unknown_hooks(pm)
    return pm


def _report_unknown_hooks(pm: AdvisorPluginManager) -> None:
    """Record each hook implementation that matches no hook specification (a misspelt
    ``advisor_register_probe``, which pluggy would otherwise never call) as an issue of its
    plugin, with the nearest hook name.  ``pluggy.PluginManager.check_pending`` detects them (it
    raises at the first); the walk below names every one, so one plugin's typo is not blamed on
    the others and does not stop the run."""
    import difflib

    try:
        pm.check_pending()
        return
    except pluggy.PluginValidationError:
        pass
    known = sorted(n for n in vars(hookspecs) if n.startswith("advisor_"))
    for hook_name in sorted(vars(pm.hook)):
        caller = getattr(pm.hook, hook_name)
        if hook_name.startswith("_") or caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if impl.optionalhook:
                continue
            near = difflib.get_close_matches(hook_name, known, n=1)
            pm.load_issues.append(PluginIssue(
                impl.plugin_name, hook_name,
                f"unknown hook {hook_name!r}: no such advisor hook, so it is never called"
                + (f" (did you mean {near[0]}?)" if near else "")))


#: Core modules that implement hooks themselves (the built-in output formats and library
#: records, ``advisor.libraries.BUILTIN_MODULES``); each is blockable by this name.
BUILTIN_HOOK_MODULES = ("advisor.emit.builtin", "advisor.libraries.mpich",
                        "advisor.libraries.glibc", "advisor.libraries.openmpi",
                        "advisor.libraries.cupy", "advisor.libraries.dla_future",
                        "advisor.libraries.families")


def _register_builtin(pm: AdvisorPluginManager) -> None:
    import importlib

    for modname in BUILTIN_HOOK_MODULES:
        pm.origins[modname] = "hpc-advisor (core)"
        try:
            pm.register(importlib.import_module(modname), name=modname)
        except Exception as exc:
            pm.load_issues.append(PluginIssue(modname, "import", f"{type(exc).__name__}: {exc}"))


def _each_impl(pm: pluggy.PluginManager, hook_name: str):
    hook = getattr(pm.hook, hook_name)
    for impl in hook.get_hookimpls():  # registration order, stable
        yield impl.plugin_name, impl.function


def collect(pm: AdvisorPluginManager, *, skip_probes: Iterable[str] = (),
            only_probes: Optional[Iterable[str]] = None) -> Registry:
    """Call every registrar hook, validate what is registered, and return the registry.

    :param skip_probes: probe or plugin names whose probes are left out.
    :param only_probes: when given, keep only probes named here (by probe or plugin name).
    """
    from advisor.knobs import Knob
    from advisor.probe import is_probe

    reg = Registry(issues=list(pm.load_issues))
    tried: dict[str, list[str]] = {}  # plugin -> probe names its probe hook tried to register
    for name, plugin in pm.list_name_plugin():
        reg.plugins[name] = pm.origins.get(name, getattr(plugin, "__name__", "?"))
    for issue in pm.load_issues:
        reg.plugins.setdefault(issue.plugin, pm.origins.get(issue.plugin, "?"))
    skip = set(skip_probes)
    only = set(only_probes) if only_probes is not None else None

    def run(hook_name: str, make_register: Callable[[str, list], Callable]) -> None:
        for plugin_name, func in _each_impl(pm, hook_name):
            staged: list = []
            try:
                func(register=make_register(plugin_name, staged))
            except Exception as exc:
                reg.issues.append(PluginIssue(plugin_name, hook_name, f"{type(exc).__name__}: {exc}"))
                if hook_name == "advisor_register_probes" and tried.get(plugin_name):
                    reg.lost_probes[plugin_name] = tried[plugin_name]
                continue
            for commit in staged:
                commit()

    def probe_register(plugin_name: str, staged: list):
        def register(probe: Any) -> None:
            if isinstance(getattr(probe, "name", None), str):
                tried.setdefault(plugin_name, []).append(probe.name)
            if not is_probe(probe):
                raise PluginContractError(
                    f"{probe!r} is not a probe (needs name, check, measure, recommend)")
            if not _NAME.match(probe.name):
                raise PluginContractError(f"probe name {probe.name!r} must match {_NAME.pattern}")
            if probe.name in reg.probes:
                raise PluginContractError(f"probe {probe.name!r} already registered by "
                                          f"{reg.plugin_of('probe', probe.name)}")
            if (probe.name in skip or plugin_name in skip
                    or (only is not None and probe.name not in only and plugin_name not in only)):
                staged.append(lambda: reg.skipped_probes.__setitem__(probe.name, plugin_name))
                return

            staged.append(lambda: reg.add("probe", probe.name, probe, plugin_name))
        return register

    def emitter_register(plugin_name: str, staged: list):
        def register(name: str, render: Callable[..., str], *, description: str = "",
                     extension: str = "", kinds: Optional[Sequence[str]] = None,
                     parse: Optional[Callable[[str, str], list]] = None,
                     notes: Optional[Callable[..., list]] = None) -> None:
            if not isinstance(name, str) or not _NAME.match(name):
                raise PluginContractError(f"emitter name {name!r} must match {_NAME.pattern}")
            if not callable(render):
                raise PluginContractError(f"emitter {name!r}: render is not callable")
            if parse is not None and not callable(parse):
                raise PluginContractError(f"emitter {name!r}: parse is not callable")
            if notes is not None and not callable(notes):
                raise PluginContractError(f"emitter {name!r}: notes is not callable")
            if kinds is not None and (isinstance(kinds, str) or
                                      not set(kinds) <= set(SETTING_KINDS)):
                raise PluginContractError(f"emitter {name!r}: kinds {kinds!r} must be a subset "
                                          f"of {SETTING_KINDS}")
            if name in reg.emitters:
                raise PluginContractError(f"emitter {name!r} already registered by "
                                          f"{reg.emitters[name].plugin}")
            staged.append(lambda: reg.add("emitter", name, Emitter(
                name, render, description, extension, plugin_name,
                tuple(kinds) if kinds is not None else None, parse, notes), plugin_name))
        return register

    def knob_register(plugin_name: str, staged: list):
        def register(knob: Any) -> None:
            if not isinstance(knob, Knob):
                raise PluginContractError(f"{knob!r} is not an advisor.knobs.Knob")
            staged.append(lambda: reg.add("knob", f"{knob.library}:{knob.name}", knob, plugin_name))
        return register

    def facts_register(plugin_name: str, staged: list):
        def register(name: str, detect: Callable[[], dict]) -> None:
            if not isinstance(name, str) or not _NAME.match(name) or not callable(detect):
                raise PluginContractError(f"fact detector {name!r}: bad name or not callable")
            if name in reg.fact_detectors:
                raise PluginContractError(f"fact detector {name!r} already registered")
            staged.append(lambda: reg.add("fact_detector", name, detect, plugin_name))
        return register

    def library_register(plugin_name: str, staged: list):
        from advisor.libraries import Library

        def register(library: Any) -> None:
            if not isinstance(library, Library):
                raise PluginContractError(f"{library!r} is not an advisor.libraries.Library")
            try:
                library.validate()
            except ValueError as exc:
                raise PluginContractError(str(exc)) from None
            if library.name in reg.libraries or any(
                    library.name == lib.name for lib in _staged_libraries(staged)):
                by = reg.plugin_of("library", library.name) or plugin_name
                raise PluginContractError(f"library {library.name!r} already registered by {by}")

            def commit() -> None:
                reg.add("library", library.name, library, plugin_name)
            commit.library = library  # type: ignore[attr-defined]
            staged.append(commit)
        return register

    run("advisor_register_probes", probe_register)
    run("advisor_register_emitters", emitter_register)
    run("advisor_register_knobs", knob_register)
    run("advisor_register_facts", facts_register)
    run("advisor_register_libraries", library_register)
    return reg


def _staged_libraries(staged: list) -> list:
    return [c.library for c in staged if hasattr(c, "library")]


def load(*, disable: Iterable[str] = (), only_plugins: Optional[Iterable[str]] = None,
         skip_probes: Iterable[str] = (), only_probes: Optional[Iterable[str]] = None) -> Registry:
    """Convenience: ``collect(make_plugin_manager(...))`` with the CLI's selection rules."""
    pm = make_plugin_manager(disable=disable, only=only_plugins)
    return collect(pm, skip_probes=skip_probes, only_probes=only_probes)
