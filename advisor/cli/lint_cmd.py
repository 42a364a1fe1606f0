"""``advisor lint``: check env files or the live environment against the plugins' knobs."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import common, complete
from advisor.cli.boundary import boundary, err, exit_with, out
from advisor.errors import BadInputError, ExitCode


@boundary
def lint(
    files: Optional[List[Path]] = typer.Argument(None, metavar="FILE", help="Env files ('-': "
                                                 "standard input): sh, csh, fish, Tcl, Lmod, "
                                                 "Spack env_vars YAML, EasyBuild modextravars, "
                                                 "JSON, or advisor's TOML outputs and profiles."),
    env: bool = typer.Option(False, "--env", help="Check the live environment (also with FILEs)."),
    format: str = typer.Option("auto", "--format", "-f", metavar="FORMAT", help="Input format: "
                               "auto, sh, csh, fish, tcl, lmod, spack, easybuild, json, toml, or a "
                               "plugin's format (see 'advisor emit --list').",
                               autocompletion=complete.lint_formats),
    json_: bool = common.JsonOpt,
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Only this "
                                               "probe/plugin's checks (repeatable).",
                                               autocompletion=complete.plugins),
    library: Optional[List[str]] = typer.Option(None, "--library", metavar="NAME@VERSION",
                                                help="Check NAME's settings against its "
                                                "recorded catalogue of VERSION where the "
                                                "installed library is not that version "
                                                "(repeatable; e.g. openmpi@5.0)."),
    profile: Optional[Path] = typer.Option(None, "--profile", "-p", metavar="PATH|@NAME",
                                           help="Judge for the machine of this profile: its "
                                           "facts, and the recorded catalogues of the library "
                                           "versions it records.",
                                           autocompletion=complete.profiles),
    strict: bool = typer.Option(False, "--strict", help="A family whose names no list "
                                "checked (unchecked-family) is an error, not a warning."),
) -> None:
    """Check env files or the live environment: unknown, misspelt, renamed, inert, blocked or
    badly typed settings.  Findings go to stdout (file:line: severity: message); exit 1 on
    errors or an empty input; exit 2 on a file no format claims (use --format)."""
    from advisor.lint import (format_json, format_text, has_errors, live_env_entries,
                              read_env_source)
    from advisor.lint.catalogue import choose_catalogues, parse_library_args
    from advisor.lint.check import lint_run
    from advisor.facts import detect
    from advisor.formats.wrappers import wrapped_launches

    if not files and not env:
        raise BadInputError("lint: give one or more FILEs, or --env for the live environment")
    reg = common.load_registry(plugin, None)
    if format != "auto" and format not in reg.emitters:  # a typo, before any file is read
        from advisor.emit import unknown_format

        raise BadInputError(unknown_format(f"--format {format!r}", format, ["auto", *(
            n for n, e in reg.emitters.items() if e.parse is not None)]))
    asked = parse_library_args(library, reg.libraries)
    prof_facts = common.load(profile).facts if profile is not None else None
    facts = detect(reg.fact_detectors, opencl=False)
    cats, why_none = choose_catalogues(facts, libraries=reg.libraries, asked=asked,
                                       profile_facts=prof_facts)
    entries = []
    launches = []  # launch lines whose ranks start in a wrapper
    refused = []  # one bad file must not hide the findings in the others
    for f in files or []:
        try:
            shown, text, read = read_env_source(f, format, reg.emitters)
            entries.extend(read)
            launches.extend(wrapped_launches(text, shown))
        except BadInputError as exc:
            if len(files or []) == 1 and not env:
                raise
            err(f"error: {exc}")
            refused.append(exc)
    if env:
        entries.extend(live_env_entries())
    findings, cov = lint_run(entries, facts=prof_facts or facts, knobs=reg.knobs,
                             catalogues=cats, probes=reg.probes, libraries=reg.libraries,
                             issues=[i for i in reg.issues if not plugin or i.plugin in plugin],
                             strict=strict, why_none=why_none, launches=launches)
    out(format_json(findings) if json_ else format_text(findings))
    for line in cov.used.values():
        err(f"lint: {line}")
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    read = {(e.path, e.name) for e in entries if e.problem is None}
    err(f"lint: {len(read)} variable(s) read ({cov.checked} checked against a list, "
        f"{cov.unchecked} in {cov.families} unchecked family(ies)), {counts['error']} error(s), "
        f"{counts['warning']} warning(s), {counts['info']} note(s)")
    if refused:
        err(f"lint: {len(refused)} file(s) could not be read (above)")
        exit_with(refused[0].exit_code)
    if has_errors(findings) or any(f.finding.id == "nothing-read" for f in findings):
        exit_with(ExitCode.FINDINGS)  # an empty input is never a pass
