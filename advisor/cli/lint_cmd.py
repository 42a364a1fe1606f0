"""``advisor lint``: check env files or the live environment against the plugins' knobs."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import common
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
                               "plugin's format (see 'advisor emit --list')."),
    json_: bool = common.JsonOpt,
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME", help="Only this "
                                               "probe/plugin's checks (repeatable)."),
) -> None:
    """Check env files or the live environment: unknown, misspelt, renamed, inert, blocked or
    badly typed settings.  Findings go to stdout (file:line: severity: message); exit 1 on
    errors or an empty input; exit 2 on a file no format claims (use --format)."""
    from advisor.lint import (
        format_json,
        format_text,
        has_errors,
        installed_catalogues,
        lint_entries,
        live_env_entries,
        read_env_file,
    )
    from advisor.facts import detect

    if not files and not env:
        raise BadInputError("lint: give one or more FILEs, or --env for the live environment")
    reg = common.load_registry(plugin, None)
    facts = detect(reg.fact_detectors, opencl=False)
    entries = []
    refused = []  # one bad file must not hide the findings in the others
    for f in files or []:
        try:
            entries.extend(read_env_file(f, format, reg.emitters))
        except BadInputError as exc:
            if len(files or []) == 1 and not env:
                raise
            err(f"error: {exc}")
            refused.append(exc)
    if env:
        entries.extend(live_env_entries())
    findings = lint_entries(entries, facts=facts, knobs=reg.knobs,
                            catalogues=installed_catalogues(facts,
                                                            libraries=reg.libraries),
                            probes=reg.probes, libraries=reg.libraries,
                            issues=[i for i in reg.issues if not plugin or i.plugin in plugin])
    out(format_json(findings) if json_ else format_text(findings))
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    read = {(e.path, e.name) for e in entries if e.problem is None}
    err(f"lint: {len(read)} variable(s) read, {counts['error']} error(s), "
        f"{counts['warning']} warning(s), {counts['info']} note(s)")
    if refused:
        err(f"lint: {len(refused)} file(s) could not be read (above)")
        exit_with(refused[0].exit_code)
    if has_errors(findings) or any(f.finding.id == "nothing-read" for f in findings):
        exit_with(ExitCode.FINDINGS)  # an empty input is never a pass
