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


def rejoin_bash_at(environ: dict) -> bool:
    """Undo bash's split of ``@NAME`` when ``NAME`` is being completed.

    ``@`` is in bash's default ``COMP_WORDBREAKS``, so ``advisor emit -p @x86<TAB>`` reaches
    click as the words ``-p``, ``@``, ``x86``: ``@`` becomes the option's value and ``x86``
    completes nothing.  When the word before the current one is a lone ``@``, ``environ``'s
    ``COMP_WORDS`` / ``COMP_CWORD`` are rewritten so that the current word is ``@x86``.  The
    candidates keep their ``@``: readline replaces the text from the ``@`` on (seen in an
    interactive bash 5.2: tests/integration/test_completion_values.py).

    :param environ: the process environment, changed in place.
    :return: True when the words were rejoined.
    """
    if environ.get(COMPLETE_VAR) != "complete_bash":
        return False
    # typer's bash script joins COMP_WORDS with IFS, a newline ("${COMP_WORDS[*]}")
    raw = environ.get("COMP_WORDS", "")
    sep = "\n" if "\n" in raw else " "
    words = raw.split(sep)
    try:
        cword = int(environ.get("COMP_CWORD", ""))
    except ValueError:
        return False
    if not 2 <= cword < len(words) or words[cword - 1] != "@":
        return False
    words[cword - 1:cword + 1] = ["@" + words[cword]]
    environ["COMP_WORDS"], environ["COMP_CWORD"] = sep.join(words), str(cword - 1)
    return True


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
