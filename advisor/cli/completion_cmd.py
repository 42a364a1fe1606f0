"""``advisor completion SHELL``: the shell completion script for bash, zsh or fish on stdout.

The script is typer's (``typer.completion.get_completion_script``; click's completion protocol:
the shell calls ``advisor`` with ``_ADVISOR_COMPLETE=complete_<shell>`` and the words typed so
far).  ``advisor --install-completion``
(typer) installs it for the current shell; this command names the shell, for packagers and site
installs, e.g. ``advisor completion bash > /etc/bash_completion.d/advisor``.
"""

from __future__ import annotations

from enum import Enum

import typer

from advisor.cli.boundary import boundary, out

#: The environment variable that switches ``advisor`` into completion mode: click's rule,
#: ``_<PROG_NAME>_COMPLETE`` (click.core.BaseCommand.main).
COMPLETE_VAR = "_ADVISOR_COMPLETE"


class Shell(str, Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


@boundary
def completion(ctx: typer.Context,
               shell: Shell = typer.Argument(..., help="bash, zsh or fish.")) -> None:
    """Print the shell completion script for SHELL (bash, zsh, fish) on stdout."""
    from typer.completion import get_completion_script  # typer >= 0.12 (pyproject)

    root = ctx.find_root()
    script = get_completion_script(prog_name=root.info_name or "advisor",
                                   complete_var=COMPLETE_VAR, shell=shell.value)
    out(script if script.endswith("\n") else script + "\n")  # appendable to an rc file
