"""The checks of ``advisor lint``, driven by the ``Library`` records (``advisor.libraries``).

:class:`Checker` looks up, per assignment, the library whose naming family or list variable
holds the name and the knob record that declares it; the name checks (``advisor.lint.names``)
and the value checks (``advisor.lint.values``) are functions of the run's ``LintContext``
(``advisor.lint.context``) that ask the record for canonical names, catalogue, name history and
value grammar.  No check branches on a library's name.  A probe's own ``lint`` runs through
``advisor.steps.StepRunner.call``, like every call into plugin code.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from advisor.knobs import Knob
from advisor.libraries import Catalogue, Library, library_of_env
from advisor.lint.context import LintContext
from advisor.lint.coverage import Coverage, coverage_of, unchecked_families
from advisor.lint.names import history_fate, name_ok, near_knob, renamed_prefix, unknown
from advisor.lint.read import ENV_PATH, resolve_env
from advisor.specs.entry import NOTHING_READ, EnvEntry
from advisor.lint.report import LintFinding
from advisor.lint.values import check_value
from advisor.models import Facts, Finding
from advisor.steps import StepRunner

#: Plugin load stages after which the plugin's knobs or library records are missing.
_OWNER_STAGES = ("import", "register", "advisor_register_knobs", "advisor_register_libraries")


class Checker:
    """Checks each assignment against the libraries and knob records of ``ctx``, adding its
    findings to ``ctx.out``."""

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx

    def entry(self, e: EnvEntry) -> None:
        """Check one assignment (or an unreadable line)."""
        ctx = self.ctx
        if e.problem == NOTHING_READ:
            ctx.add(e, "nothing-read", "warning", e.problem, "lint the file that sets the "
                     "environment: an empty input is never a clean result", name=None)
            return
        if e.problem is not None:
            ctx.add(e, "unreadable-line", "error", f"cannot read this line as a setting: "
                     f"{e.problem}; nothing on it is checked",
                     "rewrite the line in a form lint reads, or remove it", name=None)
            return
        if e.from_advisor:
            self.emit_rules(e)
        fam = library_of_env(e.name, ctx.libraries)
        knob = ctx.knob_for(e.name)
        if e.value is None and e.path != ENV_PATH and (fam is not None or knob is not None):
            ctx.add(e, "value-unknown", "info",
                     f"{e.name}: the value comes from an expansion or substitution lint cannot "
                     "follow, so it is not checked", "write the value literally to have it "
                     "checked")
        if fam is not None and fam.list_variable == e.name:
            self.list_variable(e, fam)
            return
        if fam is None and knob is None:
            near_knob(ctx, e)
            return
        lib = ctx.library(knob.library) if knob is not None else fam
        self.setting(e, lib, knob, e.name, e.value, item=False)  # type: ignore[arg-type]

    def emit_rules(self, e: EnvEntry) -> None:
        """A profile or emit document holds what emit would refuse: a name never emitted, or
        one no loaded plugin declares (``advisor.specs.names``)."""
        ctx = self.ctx
        from advisor.specs.names import refused_reason, undeclared_in

        why = refused_reason(e.name)
        if why:
            ctx.add(e, "refused-name", "error", f"{e.name}: advisor emit never writes this "
                     f"name: {why}", "remove the setting; a profile is advisor's measured "
                     "advice, not a place for other variables")
        elif ctx.declared is not None:
            missing = undeclared_in(e.name, e.value, e.separator, ctx.declared)
            if missing:
                ctx.add(e, "undeclared-name", "error", f"{', '.join(missing)}: no loaded "
                         "plugin declares this name, so advisor emit refuses it",
                         "see 'advisor plugins'; was the name edited by hand?")

    def setting(self, e: EnvEntry, lib: Library, knob: Optional[Knob], name: str,
                value: Optional[str], *, item: bool) -> None:
        """One name (an assignment, or an item of a list variable) of library ``lib``."""
        ctx = self.ctx
        canon = lib.canonical(name)
        if knob is None and canon != name:
            knob = ctx.knob_for(canon, lib.name)
        cat = ctx.catalogues.get(lib.name)
        centry = cat.entries.get(canon) if cat is not None else None
        ctx.covered(e, lib, name, knob)
        if knob is not None and not name_ok(ctx, e, knob, lib, name):
            return
        if centry is None:
            if ctx.complete_for(lib, knob) and history_fate(ctx, e, lib, name):
                return
            if knob is None:
                if not item and renamed_prefix(ctx, e, lib):
                    return
                if item and cat is None and not name.startswith(lib.item_prefix or "\0"):
                    return
                weak = bool(lib.weak_prefixes) and name.startswith(lib.weak_prefixes)
                unknown(ctx, e, lib, listed=cat is not None, name=name,
                             severity="warning" if weak and cat is not None else None)
                return
            if cat is not None and ctx.complete_for(lib, knob):
                ctx.add(e, "unknown-name", "error",
                         f"{name}: not listed by {ctx.listed_by(lib)}, although a knob "
                         "record names it; the library ignores it",
                         "check the library version, or remove it", name=name)
                return
        if value is not None:
            check_value(ctx, e, lib, name, value, centry, knob)

    def list_variable(self, e: EnvEntry, lib: Library) -> None:
        """A variable of ``name=value`` items (``GLIBC_TUNABLES``); the last item wins."""
        ctx = self.ctx
        var = e.name
        if e.prepend:
            ctx.add(e, "list-order", "warning",
                     f"{var} is prepended to: an item already in the variable comes "
                     f"later and wins ({lib.name} reads the items in order; the last one counts)",
                     "append instead (append_path / append-path)")
        if e.value is None:
            return
        seen: dict[str, str] = {}
        for item in e.value.split(lib.item_separator):
            if not item.strip():
                continue
            tname, eq, tval = item.partition("=")
            if not eq:
                ctx.add(e, "invalid-value", "error",
                         f"{var}: item {item!r} has no '=value'; {lib.name} ignores it",
                         f"write name=value items separated by '{lib.item_separator}'", name=var)
                continue
            if tname in seen:
                ctx.add(e, "duplicate", "warning",
                         f"{var}: {tname} is given twice ({seen[tname]!r}, {tval!r})",
                         "give each item once", name=tname)
            seen[tname] = tval
            self.setting(e, lib, ctx.knob_for(tname, lib.name), tname, tval, item=True)


def _owner_not_loaded(ctx: LintContext, issues: Sequence[Any]) -> None:
    """One error per file whose names nothing loaded checks, when a plugin that may own them
    failed to load.  An error, not a warning: lint exits 1 on a bad value it knows of, and it
    cannot know whether these values are bad; disabling the broken plugin on purpose
    (``ADVISOR_DISABLE_PLUGINS``) removes the finding.  The live environment is left out (it
    always holds variables no plugin owns: PATH, HOME, ...)."""
    broken = [i for i in issues if getattr(i, "stage", None) in _OWNER_STAGES]
    if not broken:
        return
    seen: set[str] = set()
    plugins = "; ".join(f"plugin {i.plugin} failed to load ({i.stage}: {i.error})"
                        for i in broken)
    for e in ctx.unclaimed:
        if e.path == ENV_PATH or e.path in seen:
            continue
        seen.add(e.path)
        held = sorted({x.name for x in ctx.unclaimed if x.path == e.path})
        shown = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
        which = "this name" if len(held) == 1 else "these names"
        ctx.add(e, "owner-not-loaded", "error",
                    f"{shown}: no loaded plugin or library checks {which}, "
                    f"and {plugins}; if it owns them, their values were not checked",
                    "fix the plugin (advisor plugins shows the error), or disable it "
                    "(ADVISOR_DISABLE_PLUGINS=name) to lint without it")


def _environments(entries: Sequence[EnvEntry]) -> list[tuple[str, list[EnvEntry]]]:
    """The environments a source gives its commands, for the probes' combination checks: per
    file, the file-level settings alone, and for each launch line (``EnvEntry.launch``) the
    file-level settings up to that line plus that line's own.  Settings of two launch lines
    never meet: each reaches only its own command."""
    out: list[tuple[str, list[EnvEntry]]] = []
    by_path: dict[str, list[EnvEntry]] = {}
    for e in entries:
        by_path.setdefault(e.path, []).append(e)
    for path, es in by_path.items():
        base = [e for e in es if not e.launch]
        launches: dict[Optional[int], list[EnvEntry]] = {}
        for e in es:
            if e.launch:
                launches.setdefault(e.line, []).append(e)
        if base or not launches:
            out.append((path, base))
        for line, own in launches.items():
            upto = [e for e in base if e.line is None or line is None or e.line <= line]
            out.append((path, upto + own))
    return out


def _duplicates(entries: Sequence[EnvEntry], ctx: LintContext) -> None:
    """The same setting assigned twice (or via two aliases) in one source: the later wins."""
    by_path: dict[str, dict[str, EnvEntry]] = {}
    for e in entries:
        if e.append or e.value is None:
            continue
        key = ctx.canonical(e.name)
        # a launch line's settings reach its command only: compared within that line
        seen = by_path.setdefault(f"{e.path}\0{e.line}" if e.launch else e.path, {})
        prev = seen.get(key)
        if prev is not None and prev.name == e.name and prev.value == e.value:
            pass  # the same value again (e.g. both branches of a csh if/else): nothing changes
        elif prev is not None and ctx.claims(e.name):
            where = f" (line {prev.line})" if prev.line is not None else ""
            if prev.name == e.name:
                msg = (f"{e.name} is set again (first{where} to {prev.value!r}); the later "
                       f"value {e.value!r} wins")
            else:
                msg = (f"{e.name} and {prev.name}{where} are two names of one setting; which "
                       "one the library takes is easy to get wrong")
            ctx.add(e, "duplicate", "warning", msg, "set it once")
        seen[key] = e


def _not_exported(entries: Sequence[EnvEntry], ctx: LintContext) -> None:
    """sh files that mix ``export`` with bare ``NAME=value`` lines: the bare ones do not reach
    programs started from the sourcing shell (POSIX: only exported variables go to the
    environment of commands)."""
    by_path: dict[str, list[EnvEntry]] = {}
    for e in entries:
        by_path.setdefault(e.path, []).append(e)
    for es in by_path.values():
        for e in es:
            if not e.exported and ctx.claims(e.name):
                ctx.add(e, "not-exported", "warning",
                            f"{e.name} is assigned without export while the file exports other "
                            "names: a sourced file passes it to programs only if it is already "
                            "exported", f"export {e.name}")


def _locate(f: Finding, entries: Sequence[EnvEntry]) -> tuple[Optional[str], Optional[int],
                                                               Optional[str]]:
    """File and line of the first env name a plugin finding mentions (its last assignment)."""
    last: dict[str, EnvEntry] = {}
    for e in entries:
        last[e.name] = e
    best: Optional[tuple[int, EnvEntry]] = None
    for name, e in last.items():
        m = re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", f.message)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), e)
    if best is None:
        return None, None, None
    e = best[1]
    return e.path, e.line, e.name


def lint_entries(entries: Sequence[EnvEntry], **kw: Any) -> list[LintFinding]:
    """The findings of :func:`lint_run` (same arguments)."""
    return lint_run(entries, **kw)[0]


def lint_run(entries: Sequence[EnvEntry], *, facts: Optional[Facts] = None,
             knobs: Sequence[Knob] = (), catalogues: Optional[Mapping[str, Catalogue]] = None,
             probes: Optional[Mapping[str, Any]] = None,
             libraries: Mapping[str, Library],
             issues: Sequence[Any] = (), strict: bool = False,
             why_none: Optional[Mapping[str, str]] = None,
             launches: Sequence[Any] = ()) -> tuple[list[LintFinding], Coverage]:
    """All findings for ``entries``: generic checks, then each probe's ``lint(env, facts)``,
    with what was checked (``advisor.lint.coverage.Coverage``).

    :param facts: machine facts (library versions, flavour, security); None: unknown.
    :param knobs: knob records (``Registry.knobs``); the libraries' own knob records
        (``Library.knobs``, e.g. Open MPI's) are added.
    :param catalogues: the libraries' own lists (``installed_catalogues``); None: none.
    :param libraries: library records (``Registry.libraries``, plugin-registered ones
        included).
    :param issues: plugin load problems (``Registry.issues``, ``PluginIssue`` objects); a
        plugin that failed to import or to register its knobs or libraries may own names of a
        file that nothing loaded checks: then each such file gets one ``owner-not-loaded``
        error naming the plugin and its error (lint cannot call such a file clean).
    :param probes: registered probes; those with a callable ``lint`` are called once per source
        (each file, or the environment) with the environment that source produces, through
        ``advisor.steps.StepRunner.call``.  A probe whose ``lint`` raises, exits, returns
        anything but ``Finding`` objects or overruns ``advisor.steps.GRACE_S`` gives a
        ``plugin-lint-failed`` warning instead (``probe P: lint: <the step's error text>``).
    :param strict: an ``unchecked-family`` finding (names of a family no list checked) is an
        error instead of a warning.
    :param why_none: library -> why no catalogue was chosen for it (``choose_catalogues``).
    :param launches: the launch lines whose ranks start in a wrapper
        (``advisor.formats.wrappers.wrapped_launches`` of each file's text): the settings in
        effect there are checked against what the wrapper takes away
        (``advisor.lint.wrappers``).
    :return: findings in source order, then plugin findings; the coverage.
    """
    own = {(k.library, k.name) for k in knobs}
    extra = [k for lib in libraries.values() for k in lib.knobs if (k.library, k.name) not in own]
    ctx = LintContext(facts, list(knobs) + extra, catalogues or {}, libraries)
    if knobs:
        from advisor.specs.names import declared_names

        ctx.declared = declared_names(knobs)
    checker = Checker(ctx)
    for e in entries:
        checker.entry(e)
    _owner_not_loaded(ctx, issues)
    unchecked_families(ctx, strict=strict, why_none=why_none)
    _duplicates(entries, ctx)
    _not_exported(entries, ctx)
    if launches:
        from advisor.lint.wrappers import check_wrapped

        check_wrapped(ctx, entries, launches)
    _advisories(ctx, entries)
    if probes:
        _plugin_lint(ctx, entries, probes)
    order = {id(f): i for i, f in enumerate(ctx.out)}
    return sorted(ctx.out, key=lambda f: (f.path or "", f.line if f.line is not None else 1 << 30,
                                          order[id(f)])), coverage_of(ctx)


def _advisories(ctx: LintContext, entries: Sequence[EnvEntry]) -> None:
    """Known bad combinations (``advisor.libraries.advisories``) among the settings each
    environment of a source gives its commands, for the versions and facts of ``ctx.facts``
    (this machine, or a profile's): one finding per record, setting and line."""
    from advisor.libraries.advisories import finding, matches, setting_value

    seen: set[tuple[str, Optional[int], str]] = set()
    for path, es in _environments(entries):
        env = resolve_env(es)
        for adv, version, name in matches(ctx.facts, ctx.libraries, env, written_only=True):
            lib = ctx.libraries.get(adv.library)
            holder = name if name in env else (lib.list_variable if lib else None)
            where = [e for e in es if e.name == holder]
            e = where[-1] if where else None
            key = (path, e.line if e else None, adv.id)
            if e is None or key in seen:
                continue
            seen.add(key)
            f = finding(adv, version, name, setting_value(adv, lib, env) if lib else None)
            ctx.out.append(LintFinding(f, e.path, e.line, name))


def _plugin_lint(ctx: LintContext, entries: Sequence[EnvEntry],
                 probes: Mapping[str, Any]) -> None:
    """Each probe's ``lint(env, facts)`` once per environment a source gives its commands
    (:func:`_environments`), through ``StepRunner.call``: a call that raises, exits, returns
    anything but ``Finding`` objects or overruns ``advisor.steps.GRACE_S`` gives one
    ``plugin-lint-failed`` warning for that source (``probe P: lint: <error text>``); the
    other probes and sources are still linted."""
    facts = ctx.facts if ctx.facts is not None else Facts()
    with StepRunner() as runner:
        for path, es in _environments(entries):
            env = resolve_env(es)
            for pname, probe in probes.items():
                fn = getattr(probe, "lint", None)
                if not callable(fn):
                    continue
                done = runner.call(lambda: fn(dict(env), facts), step="lint", owner=pname,
                                   each=Finding)
                if not done.ok:
                    ctx.out.append(LintFinding(Finding(
                        id="plugin-lint-failed", severity="warning",
                        message=f"probe {pname}: {done.error}"), path, None, None))
                    continue
                for f in done.value:
                    p, line, name = _locate(f, es)
                    lf = LintFinding(f, p or path, line, name)
                    if lf not in ctx.out:  # one finding of the file-level settings, once
                        _supersede(ctx, lf)
                        ctx.out.append(lf)


def _supersede(ctx: LintContext, lf: LintFinding) -> None:
    """A probe's error about a setting's value replaces the core's warning about the same
    value read from a recorded list (``invalid-value``, a warning because another build may
    differ: a component the recorded build lacks), when the probe knows this build."""
    if lf.severity != "error" or lf.line is None:
        return
    ctx.out[:] = [x for x in ctx.out if not (
        x.finding.id == "invalid-value" and x.severity == "warning" and x.path == lf.path
        and x.line == lf.line and x.name == lf.name and ctx.recorded_value(x))]
