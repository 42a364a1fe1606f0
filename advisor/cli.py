"""The ``advisor`` command line: thin commands over the library, and the one error boundary.

stdout carries the product (a profile path, an emitted file, a table or JSON the user asked for);
progress, logs, warnings and errors go to stderr.  Heavy modules are imported inside commands so
that ``advisor --help`` and ``advisor emit`` start fast.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from pathlib import Path
from typing import List, Optional

import typer

from advisor.errors import (
    EXIT_BAD_INPUT,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_PARTIAL,
    AdvisorError,
    BadInputError,
)

EXIT_INTERNAL = 4

EPILOG = (
    f"Exit codes: {EXIT_OK} ok; {EXIT_FINDINGS} findings (lint errors, verify regression); "
    f"{EXIT_BAD_INPUT} usage or bad input; {EXIT_PARTIAL} partial or failed probe (the profile "
    f"holds what completed); {EXIT_INTERNAL} internal error (set ADVISOR_DEBUG=1 for a traceback)."
)

app = typer.Typer(
    name="advisor",
    help="Measured runtime settings for HPC machines: probe, emit, show, verify, lint.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


#: C0 and C1 control characters, and the Unicode bidirectional marks/overrides (CVE-2021-42574,
#: "Trojan Source"): shown escaped so a hostile profile, file name or plugin message cannot move
#: the cursor, retitle the terminal, forge extra lines or reorder what the user reads.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with control and bidi characters written as ``\\xNN`` / ``\\uNNNN`` escapes
    (newlines kept when ``keep_newlines``: multi-line table cells)."""

    def esc(m: "re.Match[str]") -> str:
        c = m.group()
        if keep_newlines and c == "\n":
            return c
        return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"

    return _UNPRINTABLE.sub(esc, text)


def _version(value: bool) -> None:
    if value:
        from advisor import __version__

        sys.stdout.write(f"hpc-advisor {__version__}\n")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Measured runtime settings for HPC machines: probe, emit, show, verify, lint."""


def _err(message: str) -> None:
    sys.stderr.write(f"advisor: {_printable(str(message))}\n")


def _warn(message: str) -> None:
    sys.stderr.write(f"advisor: warning: {_printable(str(message))}\n")


def _row(table, *cells) -> None:
    """``table.add_row`` with every cell as plain, printable text (never rich markup: a value
    such as ``[/x]`` in a profile would otherwise raise MarkupError or restyle the output)."""
    from rich.text import Text

    table.add_row(*(Text(_printable(str(c), keep_newlines=True)) for c in cells))


def boundary(fn):
    """The error boundary: AdvisorError -> one line on stderr and its exit code, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except SystemExit as exc:
            if isinstance(exc.__context__, BrokenPipeError):
                # rich's Console turns a closed stdout (`advisor show | head`) into sys.exit(1);
                # the reader went away: end quietly, as for a BrokenPipeError of our own
                raise typer.Exit(EXIT_OK) from None
            # only this module exits; inside a command, SystemExit comes from a plugin or a
            # library calling sys.exit(): never let it end the run silently with its status
            _err(f"internal error: a plugin or library called sys.exit({exc.code!r}) "
                 "(ADVISOR_DEBUG=1 shows the traceback)")
            if os.environ.get("ADVISOR_DEBUG"):
                raise
            raise typer.Exit(EXIT_INTERNAL) from None
        except AdvisorError as exc:
            _err(f"error: {exc}")
            if os.environ.get("ADVISOR_DEBUG"):
                for line in exc.details:
                    _err(f"  {line}")
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            _err("interrupted")
            raise typer.Exit(130) from None
        except BrokenPipeError:
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            raise typer.Exit(EXIT_OK) from None
        except Exception as exc:
            if os.environ.get("ADVISOR_DEBUG"):
                raise
            _err(f"internal error: {type(exc).__name__}: {exc} (ADVISOR_DEBUG=1 shows the traceback)")
            raise typer.Exit(EXIT_INTERNAL) from None

    return wrapper


@contextlib.contextmanager
def _signals_interrupt():
    """While probing, SIGTERM and SIGHUP (a batch system's time limit, a lost session) raise
    ``KeyboardInterrupt`` like SIGINT does, once: the runner then keeps the completed probes,
    kills what the others started, and the profile is still written (exit 3).  Later signals of
    the same kind are ignored while that is done (the batch system's SIGKILL bounds it)."""
    import signal

    def handler(signum, frame):
        signal.signal(signum, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            old[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread (library use)
            pass
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def _console(stderr: bool = False, **kw):
    """A rich Console for tables: the terminal's width, or 160 columns when the output is a file
    or pipe (rich's 80-column default folds every cell of a profile table)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() or os.environ.get("COLUMNS") else 160
    return Console(file=stream, width=width, **kw)


def _table(*headers: str, **kw):
    """A rich Table whose cells fold instead of ending in an ellipsis: setting names, values and
    errors are read in full or not at all."""
    from rich.table import Table

    t = Table(**kw)
    for h in headers:
        t.add_column(h, overflow="fold")
    return t


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _registry(plugin: Optional[List[str]] = None, skip: Optional[List[str]] = None):
    from advisor.plugins import load

    reg = load(skip_probes=skip or (), only_probes=plugin or None)
    known = (set(reg.probes) | set(reg.owners("probe").values()) | set(reg.skipped_probes)
             | set(reg.skipped_probes.values()))
    broken = {i.plugin: i for i in reg.issues}
    for flag, names in (("--plugin", plugin), ("--skip-plugin", skip)):
        unknown = sorted(set(names or ()) - known)
        failed = [n for n in unknown if n in broken]
        if failed and flag == "--plugin":  # it exists but did not load: say why
            i = broken[failed[0]]
            raise BadInputError(f"--plugin: plugin {i.plugin} did not load ({i.stage}): {i.error}")
        unknown = [n for n in unknown if n not in broken]
        if unknown:
            raise BadInputError(f"{flag}: no probe or plugin named {', '.join(unknown)} "
                                f"(see 'advisor plugins')")
    for issue in reg.issues:
        if issue.stage == "import":
            _warn(f"plugin {issue.plugin} skipped (import): {issue.error}")
        else:  # one hook failed: what the plugin registered elsewhere is still used
            _warn(f"plugin {issue.plugin}: {issue.stage} failed, what it registers there is "
                  f"left out: {issue.error}")
    return reg


def _profile_path(profile: Optional[Path]) -> Path:
    from advisor.profile import default_profile_path

    return profile if profile is not None else default_profile_path()


def _load(profile: Optional[Path]):
    from advisor.errors import ProfileError
    from advisor.profile import load_profile

    path = _profile_path(profile)
    if profile is None and not path.exists():
        raise ProfileError(f"{path}: no profile for this host yet (run 'advisor probe', or pass "
                           f"--profile PATH)")
    return load_profile(path)


def _check_profile_plugins(prof, plugin: Optional[List[str]]) -> None:
    """Refuse ``--plugin`` names the profile has no result for (a typo would select nothing)."""
    if not plugin:
        return
    known = {r.probe for r in prof.results} | {r.plugin for r in prof.results}
    unknown = sorted(set(plugin) - known)
    if unknown:
        raise BadInputError(f"--plugin: the profile has no probe or plugin named "
                            f"{', '.join(unknown)} (it has: {', '.join(sorted(known))})")


def _launcher_argv(launcher: Optional[str]) -> Optional[list[str]]:
    """``--launcher`` split like a shell would; None when not given."""
    import shlex

    if launcher is None:
        return None
    argv = shlex.split(launcher)
    if not argv:
        raise BadInputError("--launcher: empty command")
    return argv


def _parse_options(option: Optional[List[str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in option or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise BadInputError(f"--option {item!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


ProfileOpt = typer.Option(None, "--profile", "-p", metavar="PATH", help="Profile to read (default: this host's "
                          "profile in $ADVISOR_HOME/profiles).")
JsonOpt = typer.Option(False, "--json", help="Print JSON on stdout instead of a table.")
VerifyJsonOpt = typer.Option(False, "--json", help="Print the verdicts as JSON on stdout instead "
                             "of the profile's path (the tables still go to stderr).")


# --------------------------------------------------------------------------- probe


@app.command()
@boundary
def probe(
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Run only this probe or "
                                               "plugin (repeatable)."),
    skip_plugin: Optional[List[str]] = typer.Option(None, "--skip-plugin", metavar="NAME", help="Skip this probe "
                                                    "or plugin (repeatable)."),
    quick: bool = typer.Option(False, "--quick", help="Smaller sweeps; default budget 60 s."),
    time_budget: Optional[float] = typer.Option(None, "--time-budget", metavar="SECONDS", min=1.0,
                                                help="Total seconds for all probes (default 300)."),
    launcher: Optional[str] = typer.Option(None, "--launcher", metavar="CMD", help="Command that starts a 2-rank "
                                           "MPI job, e.g. 'srun -n 2' (default: $ADVISOR_LAUNCHER "
                                           "or mpiexec -n 2)."),
    option: Optional[List[str]] = typer.Option(None, "--option", "-O", metavar="KEY=VALUE", help="Probe option "
                                               "KEY=VALUE, e.g. alloc-size=8MiB (repeatable)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="PATH",
                                          help="Where to write the profile."),
    seed: int = typer.Option(12345, "--seed", metavar="N", help="Seed for fills and bootstrap."),
) -> None:
    """Detect facts, run each plugin's probe, and write the profile (its path goes to stdout)."""

    from advisor.facts import detect
    from advisor.save import check_writable, save_or_rescue
    from advisor.runner import partial, run_probes

    options = _parse_options(option)
    launcher_argv = _launcher_argv(launcher)
    reg = _registry(plugin, skip_plugin)
    if not reg.probes:
        raise BadInputError("no probe to run (all plugins skipped or disabled)")
    target = _profile_path(output)
    check_writable(target)  # fail now, not after minutes of measuring
    facts = detect(reg.fact_detectors)
    for w in facts.warnings:
        _warn(w)

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=console, transient=not console.is_terminal,
                  disable=not console.is_terminal) as bar:
        tasks: dict[str, int] = {}

        def on_event(name: str, message: str, fraction: Optional[float]) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=1.0)
            bar.update(tasks[name], description=f"{name}: {message}",
                       completed=fraction if fraction is not None else None)

        with _signals_interrupt():
            prof = run_probes(reg.probes, reg.owners("probe"), facts, time_budget_s=time_budget,
                              quick=quick, launcher=launcher_argv, options=options,
                              on_event=on_event, command=" ".join(["advisor"] + sys.argv[1:]),
                              seed=seed)
    save_or_rescue(prof, target)  # e.g. the disk filled up while probing: keep the measurements
    for res in prof.results:
        line = f"{res.probe}: {res.status}"
        if res.reason:
            line += f" ({res.reason})"
        line += f", {len(res.recommendations)} recommendation(s), {len(res.findings)} finding(s)"
        _err(line)
    _err(f"profile written to {target}")
    _out(f"{target}\n")
    if partial(prof):
        raise typer.Exit(EXIT_PARTIAL)


# --------------------------------------------------------------------------- emit


@app.command()
@boundary
def emit(
    format: str = typer.Option("env", "--format", "-f", metavar="FORMAT", help="Output format (see --list)."),
    profile: Optional[Path] = ProfileOpt,
    list_: bool = typer.Option(False, "--list", help="List the formats and exit."),
    no_comments: bool = typer.Option(False, "--no-comments", help="Drop the rationale comments."),
    all_: bool = typer.Option(False, "--all", help="Also write settings measured to be right "
                              "at the library default."),
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Only this probe/plugin."),
    strict: bool = typer.Option(False, "--strict", help="Refuse a profile from another machine "
                                "or other library versions."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="PATH",
                                          help="Write to this file (atomically) instead of stdout "
                                               "('-': stdout)."),
) -> None:
    """Print the profile's settings in a format sites load (env, csh, fish, lmod, tcl, ...)."""
    if output is not None and str(output) == "-":
        output = None
    from advisor.facts import detect_fingerprint_facts
    from advisor.plugins import collect, make_plugin_manager
    from advisor.steps import start_step

    # This machine's facts for the "profile from another machine" check: started first so
    # that its subprocess (mpichversion) runs while the profile is read.  It never raises.
    here = start_step(detect_fingerprint_facts, name="advisor-detect")
    # The core's formats need no plugin: skip importing every plugin (start-up time) unless the
    # format is not a core one or the list of all formats is asked for.
    reg = collect(make_plugin_manager(entry_points=False))
    if list_ or format not in reg.emitters:
        reg = collect(make_plugin_manager())
    if list_:
        width = max((len(n) for n in reg.emitters), default=4)
        _out("".join(f"{n:<{width}}  {e.description}\n" for n, e in sorted(reg.emitters.items())))
        return
    from advisor.emit import EmitOptions, left_out_notes, render
    from advisor.facts.compare import machine_mismatch

    prof = _load(profile)
    if output is not None:
        try:
            same = output.exists() and os.path.samefile(output, _profile_path(profile))
        except OSError:
            same = False
        if same:
            raise BadInputError(f"{output}: is the profile being read; --output must name "
                                "another file")
    diffs = machine_mismatch(prof, here(None))
    if diffs:
        if strict:
            raise BadInputError(f"{_profile_path(profile)}: profile is for another machine: "
                                + "; ".join(diffs))
        for d in diffs:
            _warn(f"profile from another machine: {d}")
    _check_profile_plugins(prof, plugin)
    opts = EmitOptions(comments=not no_comments, include_defaults=all_,
                       plugins=frozenset(plugin) if plugin else None)
    text = render(prof, format, reg.emitters, opts)
    if output is not None:
        from advisor.profile import atomic_write_text, check_writable

        check_writable(output)  # before the notes: a file that cannot be written is the news
    for level, line in left_out_notes(prof, opts, format, reg.emitters[format].kinds):
        (_warn if level == "warning" else _err)(line if level == "warning" else f"note: {line}")
    if output is not None:
        atomic_write_text(output, text)
        _err(f"{format} written to {output}")
    else:
        _out(text)


# --------------------------------------------------------------------------- show


@app.command()
@boundary
def show(profile: Optional[Path] = ProfileOpt, json_: bool = JsonOpt) -> None:
    """Show a profile: recommendations, verifications, evidence summaries and findings."""
    prof = _load(profile)
    if json_:
        _out(prof.model_dump_json(indent=2, exclude_none=True) + "\n")
        return
    con = _console(soft_wrap=False)
    p = prof.provenance
    con.print(_printable(f"profile of {p.hostname or '?'} (fingerprint {prof.fingerprint}), "
                         f"{p.created}, advisor {p.advisor_version}, {p.duration_s:.0f} s"),
              markup=False, highlight=False)
    t = _table("probe", "status", "reason", "time (s)", title="Probes")
    for r in prof.results:
        _row(t, r.probe, r.status, r.reason or "", f"{r.duration_s:.1f}")
    con.print(t)
    t = _table("probe", "setting", "value", "replaces", "confidence", "why", title="Recommendations")
    for r in prof.results:
        for rec in r.recommendations:
            for s in rec.settings:
                replaces = ("(is the default)" if s.is_default else
                            "" if s.default is None else str(s.default))
                _row(t, r.probe, s.name, str(s.value), replaces, rec.confidence, rec.title)
            if not rec.settings:
                _row(t, r.probe, "", "", "", rec.confidence, rec.title)
    if t.row_count:
        con.print(t)
        # the rationales as lines (they hold the per-size figures and what stability means)
        con.print("Why", style="italic", markup=False, highlight=False)
        for r in prof.results:
            for rec in r.recommendations:
                con.print(_printable(f"{r.probe}: {rec.id}: {rec.rationale}"), markup=False,
                          highlight=False, soft_wrap=True)
    else:
        con.print("Recommendations: none", style="italic", markup=False, highlight=False)
    if prof.verifications:
        t = _table("recommendation", "verdict", "ratio", "95 % CI", "noise floor", "why", "when",
                   title="Verifications (ratio = advised / baseline, > 1 is better)")
        for v in prof.verifications:
            ci = f"[{v.ci_low:.3f}, {v.ci_high:.3f}]" if v.ci_low is not None and v.ci_high is not None else ""
            _row(t, v.recommendation, v.verdict, "" if v.ratio is None else f"{v.ratio:.3f}", ci,
                 "" if v.noise_floor is None else f"{v.noise_floor:.3f}", v.reason or "",
                 v.time or "")
        con.print(t)
    from advisor.report import EVIDENCE_HEADERS, evidence_rows

    t = _table(*EVIDENCE_HEADERS, title="Evidence (artefact points are not bandwidths: left out "
                                       "of the ranges and marked)")
    for row in evidence_rows(prof):
        _row(t, *row)
    if t.row_count:
        con.print(t)
    # findings as lines, not table cells: remedies hold settings to copy, which a table would
    # break in the middle of a value
    if not any(r.findings for r in prof.results):
        return
    con.print("Findings", style="italic", markup=False, highlight=False)
    for r in prof.results:
        for f in r.findings:
            con.print(_printable(f"[{f.severity}] {r.probe}: {f.message}"), markup=False,
                      highlight=False, soft_wrap=True)
            if f.remedy:
                con.print(_printable(f"    remedy: {f.remedy}"), markup=False, highlight=False,
                          soft_wrap=True)


# --------------------------------------------------------------------------- plugins, facts, schema


@app.command()
@boundary
def plugins(json_: bool = JsonOpt) -> None:
    """List plugins, what each contributes, and those that failed to load (with the error)."""
    from advisor.plugins import collect, disabled_from_env, make_plugin_manager

    pm = make_plugin_manager()
    reg = collect(pm)
    rows = []
    errors = {}
    for issue in reg.issues:
        errors.setdefault(issue.plugin, []).append(f"{issue.stage}: {issue.error}")
    for name in sorted(set(reg.plugins) | disabled_from_env()):
        probes = sorted(p for p, pl in reg.probe_plugin.items() if pl == name)
        emitters = sorted(e for e, em in reg.emitters.items() if em.plugin == name)
        knobs = sorted({f"{k.library}:{k.name}" for k, pl in zip(reg.knobs, reg.knob_plugin)
                        if pl == name})
        detectors = sorted(d for d, pl in reg.fact_plugin.items() if pl == name)
        status = ("disabled" if name in disabled_from_env() else
                  "error" if name in errors else "ok")
        origin = reg.plugins.get(name) or pm.origins.get(name, "")
        rows.append({"name": name, "origin": origin, "status": status,
                     "probes": probes, "emitters": emitters, "knobs": knobs,
                     "fact_detectors": detectors, "errors": errors.get(name, [])})
    if json_:
        import json

        _out(json.dumps(rows, indent=2) + "\n")
        return
    t = _table("plugin", "status", "probes", "emitters", "knobs", "fact detectors", "origin",
               "error")
    for r in rows:
        _row(t, r["name"], r["status"], ", ".join(r["probes"]), ", ".join(r["emitters"]),
             str(len(r["knobs"])) if r["knobs"] else "", ", ".join(r["fact_detectors"]),
             r["origin"], "; ".join(r["errors"]))
    _console(soft_wrap=True).print(t)


@app.command()
@boundary
def facts(json_: bool = JsonOpt) -> None:
    """Detect and print the machine facts."""
    from advisor.facts import detect
    from advisor.plugins import collect, make_plugin_manager

    reg = collect(make_plugin_manager())
    f = detect(reg.fact_detectors)
    for w in f.warnings:
        _warn(w)
    if json_:
        _out(f.model_dump_json(indent=2, exclude_none=True) + "\n")
        return
    t = _table("fact", "value", title=f"facts (fingerprint {f.fingerprint()})")

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for i, v in enumerate(value):
                walk(f"{prefix}[{i}]", v)
        else:
            _row(t, prefix, str(value))

    walk("", f.model_dump(mode="json", exclude_none=True, exclude={"warnings"}))
    _console(soft_wrap=True).print(t)


@app.command()
@boundary
def schema() -> None:
    """Print the JSON schema of the profile."""
    from advisor.schema import profile_json_schema

    _out(profile_json_schema())


# --------------------------------------------------------------------------- lint


@app.command()
@boundary
def lint(
    files: Optional[List[Path]] = typer.Argument(None, metavar="FILE", help="Env files ('-': standard input): sh, "
                                                 "csh, fish, Tcl, Lmod, Spack env_vars YAML, EasyBuild "
                                                 "modextravars, JSON, or advisor's TOML outputs and profiles."),
    env: bool = typer.Option(False, "--env", help="Check the live environment (also with FILEs)."),
    format: str = typer.Option("auto", "--format", "-f", metavar="FORMAT", help="Input format: auto, sh, csh, "
                               "fish, tcl, lmod, spack, easybuild, json, toml."),
    json_: bool = JsonOpt,
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Only this probe/plugin's "
                                               "checks (repeatable)."),
) -> None:
    """Check env files or the live environment: unknown, misspelt, renamed, inert, blocked or
    badly typed settings.  Findings go to stdout (file:line: severity: message); exit 1 on errors."""
    from advisor import lint as L
    from advisor.facts import detect

    if not files and not env:
        raise BadInputError("lint: give one or more FILEs, or --env for the live environment")
    reg = _registry(plugin, None)
    facts = detect(reg.fact_detectors, opencl=False)
    entries = []
    refused = []  # one bad file must not hide the findings in the others
    for f in files or []:
        try:
            entries.extend(L.read_env_file(f, format))
        except BadInputError as exc:
            if len(files or []) == 1 and not env:
                raise
            _err(f"error: {exc}")
            refused.append(exc)
    if env:
        entries.extend(L.live_env_entries())
    findings = L.lint_entries(entries, facts=facts, knobs=reg.knobs,
                              catalogues=L.installed_catalogues(facts), probes=reg.probes)
    _out(L.format_json(findings) if json_ else L.format_text(findings))
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    read = {(e.path, e.name) for e in entries if e.problem is None}
    _err(f"lint: {len(read)} variable(s) read, {counts['error']} error(s), "
         f"{counts['warning']} warning(s), {counts['info']} note(s)")
    if refused:
        _err(f"lint: {len(refused)} file(s) could not be read (above)")
        raise typer.Exit(refused[0].exit_code)
    if L.has_errors(findings):
        raise typer.Exit(EXIT_FINDINGS)


# --------------------------------------------------------------------------- verify


@app.command()
@boundary
def verify(
    profile: Optional[Path] = ProfileOpt,
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Verify only this probe or "
                                               "plugin's recommendations (repeatable)."),
    against_env: bool = typer.Option(False, "--against-env", help="Baseline is the current "
                                     "environment instead of the library defaults."),
    alone: bool = typer.Option(False, "--alone", help="Only each recommendation with its own "
                               "settings; skip the joint emitted environment (half the "
                               "measurements, no interaction check)."),
    json_: bool = VerifyJsonOpt,
    quick: bool = typer.Option(False, "--quick", help="Fewer sizes and repeats; default budget "
                               "60 s."),
    time_budget: Optional[float] = typer.Option(None, "--time-budget", metavar="SECONDS", min=1.0,
                                                help="Total seconds for all verifications "
                                                "(default 300)."),
    launcher: Optional[str] = typer.Option(None, "--launcher", metavar="CMD", help="Command that starts a 2-rank "
                                           "MPI job (default: $ADVISOR_LAUNCHER or mpiexec -n 2)."),
    option: Optional[List[str]] = typer.Option(None, "--option", "-O", metavar="KEY=VALUE", help="Probe option "
                                               "KEY=VALUE (repeatable)."),
    seed: int = typer.Option(12345, "--seed", metavar="N", help="Seed for fills and bootstrap."),
) -> None:
    """Re-measure each recommendation here, advised vs library defaults, interleaved: alone, and
    in the joint environment advisor emit writes (every plugin's settings together, one verdict
    per plugin recommendation); store the verdicts in the profile.  Tables on stderr; --json on
    stdout; exit 1 on a regression or a verdict that reverses jointly (finding joint-reversal)."""

    from advisor.facts.compare import machine_mismatch
    from advisor.facts import detect
    from advisor.save import check_writable, save_or_rescue
    from advisor.verify import (has_failure, has_regression, joint_rows, reversal_findings,
                                table_rows, to_json, verify_profile)

    path = _profile_path(profile)
    prof = _load(profile)
    check_writable(path)  # the verdicts are stored in the profile: fail now, not after measuring
    launcher_argv = _launcher_argv(launcher)
    reg = _registry(None, None)
    _check_profile_plugins(prof, plugin)
    facts = detect(reg.fact_detectors, opencl=False)
    for d in machine_mismatch(prof, facts):
        _warn(f"profile from another machine: {d}")
    updated, outcomes = verify_profile(
        prof, reg.probes, facts=facts, knobs=reg.knobs, plugins=set(plugin) if plugin else None,
        time_budget_s=time_budget, quick=quick, against_env=against_env, joint=not alone,
        launcher=launcher_argv, options=_parse_options(option), seed=seed,
        on_event=lambda key, msg, frac: _err(f"{key}: {msg}") if msg != "done" else None)
    save_or_rescue(updated, path, what="the profile with the verdicts")
    con = _console(stderr=True, soft_wrap=True)
    base = "the current environment" if against_env else "library defaults"
    t = _table("probe", "recommendation", "verdict", "ratio", "95 % CI", "A/A noise floor",
               "note", title=f"Verification, each recommendation alone vs {base} (ratio = "
                             "advised / baseline, > 1 is better)")
    for row in table_rows(outcomes):
        _row(t, *row)
    con.print(t)
    rows = joint_rows(outcomes)
    if rows:
        t = _table("probe", "measured", "verdict", "ratio", "95 % CI", "A/A noise floor",
                   "note", title=f"Joint verification: the whole emitted environment vs "
                                 f"{base} (ratio = advised / baseline, > 1 is better)")
        for row in rows:
            _row(t, *row)
        con.print(t)
    _err("A/A noise floor: the spread between repeats of the baseline itself; a verdict "
         "needs the whole 95 % CI of the ratio beyond it")
    for o in outcomes:
        if o.redo:
            _err(f"{o.probe}: {o.recommendation}: re-probe under the other settings: "
                 f"{o.redo}")
    found = reversal_findings(updated, outcomes)
    for f in found:
        _warn(f"{f.id}: {f.message}; {f.remedy}")
    _err(f"verifications stored in {path}")
    _out(to_json(outcomes, found) if json_ else f"{path}\n")
    if has_regression(outcomes):
        raise typer.Exit(EXIT_FINDINGS)
    if has_failure(outcomes):
        raise typer.Exit(EXIT_PARTIAL)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="advisor")


if __name__ == "__main__":
    main()
