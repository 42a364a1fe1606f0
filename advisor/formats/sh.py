"""POSIX sh (format ``env``, alias ``sh``): a file to source in sh, dash, bash, ksh or zsh.

Each line only assigns and exports: every value is one single-quoted word, so the shell performs
no expansion, command substitution or word splitting on it (tested by sourcing the files in bash,
dash and zsh with hostile values).  A list variable is appended to an existing non-empty value
with its separator and set when unset or empty (``advisor.specs.writing.MERGE_POLICY``).

``parse`` reads POSIX sh and Docker/systemd env files (:mod:`advisor.formats.shellread`),
launch lines of job scripts included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.specs.writing import EnvItem, item_file
from advisor.specs.entry import EnvEntry
from advisor.formats.quoting import sh_quote
from advisor.formats.shellread import parse_shell, shell_sniff

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "env"
ALIASES = ("sh",)
DESCRIPTION = "POSIX sh to source (sh, dash, bash, ksh, zsh)"
EXTENSION = "sh"

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".env")
#: The name the detection gives it: the shell it is.
DETECTED_AS = "sh"


def sniff(text: str) -> bool:
    """Whether ``text`` is a sh file: a ``#!`` line running a Bourne-family shell, or a first
    command that assigns (``NAME=``, ``export``/``readonly NAME``, ``declare -x``) or is the
    ``if [`` list merge ``advisor emit`` writes."""
    return shell_sniff(text, r"sh|bash|dash|ksh|mksh|zsh|ash",
                       r"(?:(?:export|readonly)\s+|(?:declare|typeset)\s+-\w*x\w*\s+)?"
                       r"[A-Za-z_][A-Za-z0-9_]*=|export\s+[A-Za-z_]|if \[ ")


def _item(item: EnvItem) -> list[str]:
    n, v = item.name, sh_quote(item.value)
    if item.separator is None:
        return [f"{n}={v}; export {n}"]
    sep = sh_quote(item.separator)
    # ${N-} keeps `set -u` job scripts working when N is unset.
    return [f'if [ -n "${{{n}-}}" ]; then {n}="${{{n}}}"{sep}{v}; else {n}={v}; fi; export {n}']


def render(sel: "Selection") -> str:
    """POSIX sh to be sourced (``. ./advisor.sh``)."""
    return item_file(sel, _item, fmt=NAME)


def parse(text: str, path: str) -> list[EnvEntry]:
    """The assignments of a sh file or job script, in file order."""
    return parse_shell(text, path)
