"""The ``advisor`` command line: thin commands over the library, and the one error boundary.

Each command parses its options, calls the domain and renders what it returns; it builds no
domain data itself.  stdout carries the product (a profile path, an emitted file, a table or JSON
the user asked for); progress, logs, warnings and errors go to stderr.  Heavy modules are
imported inside commands so that ``advisor --help`` and ``advisor emit`` start fast.

Modules: ``boundary`` (error boundary, exit codes, stdout/stderr lines), ``render`` (rich
tables of ``advisor.report.tables`` rows), ``common`` (plugin selection, profile lookup, option
parsing), and one module per command group: ``probe_cmd``, ``emit_cmd``, ``inspect_cmd`` (show,
plugins, facts, schema), ``lint_cmd``, ``verify_cmd``, ``report_cmd``, ``config_cmd`` (config,
explain), ``profiles_cmd`` (shipped profiles), ``check_cmd`` (node health), ``completion_cmd`` (shell completion scripts), and
``progress`` (probe progress: a bar on a terminal, lines in a log).
"""

from __future__ import annotations

import sys

import typer

from advisor.cli import (check_cmd, completion_cmd, config_cmd, emit_cmd, fleet_cmd, inspect_cmd,
                         lint_cmd, probe_cmd, profiles_cmd, report_cmd, verify_cmd)
from advisor.cli import fleet_probe_cmd  # noqa: F401  (registers 'advisor fleet probe')
from advisor.errors import ExitCode

__all__ = ["app", "main", "EPILOG"]

EPILOG = (
    f"Exit codes: {ExitCode.OK:d} ok; {ExitCode.FINDINGS:d} findings (lint errors, verify "
    f"regression or joint reversal); {ExitCode.BAD_INPUT:d} usage or bad input; "
    f"{ExitCode.PARTIAL:d} partial or failed probe (the profile holds what completed); "
    f"{ExitCode.INTERNAL:d} internal error (set ADVISOR_DEBUG=1 for a traceback)."
)

app = typer.Typer(
    name="advisor",
    help="Measured runtime settings for HPC machines: probe, emit, show, verify, lint.",
    epilog=EPILOG,
    add_completion=True,  # --install-completion / --show-completion SHELL (bash, zsh, fish)
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from advisor import __version__

        sys.stdout.write(f"hpc-advisor {__version__}\n")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _main(ctx: typer.Context,
          version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Measured runtime settings for HPC machines: probe, emit, show, verify, lint."""
    if ctx.invoked_subcommand is None and not ctx.resilient_parsing:
        # `advisor` alone: the help on stdout, exit 0 (click's no_args_is_help exits 2)
        sys.stdout.write(ctx.get_help() + "\n")
        raise typer.Exit(ExitCode.OK)


for _command in (probe_cmd.probe, emit_cmd.emit, inspect_cmd.show, inspect_cmd.plugins,
                 inspect_cmd.facts, inspect_cmd.schema, lint_cmd.lint, verify_cmd.verify,
                 report_cmd.report, config_cmd.explain, check_cmd.check, completion_cmd.completion):
    app.command()(_command)
app.add_typer(fleet_cmd.fleet_app, name="fleet")
app.add_typer(config_cmd.config_app, name="config")
app.add_typer(profiles_cmd.profiles_app, name="profiles")


def main() -> None:
    """Console-script entry point (``[project.scripts] advisor``) and ``python -m advisor``."""
    import os

    completion_cmd.rejoin_bash_at(os.environ)  # bash completing "@NAME": one word, not two
    app(prog_name="advisor")
