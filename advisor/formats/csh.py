"""csh / tcsh (format ``csh``): a file to source (``source advisor.csh``).

Values are quoted with ``advisor.formats.quoting.csh_quote``; a list variable is appended to an
existing non-empty value (``$?N`` tests whether it is set, ``"$N:q"`` expands it as one word).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.specs.writing import EnvItem, item_file
from advisor.specs.entry import EnvEntry
from advisor.formats.quoting import csh_quote
from advisor.formats.shellread import parse_shell, shell_sniff

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "csh"
DESCRIPTION = "csh / tcsh to source"
EXTENSION = "csh"

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".csh", ".tcsh")


def sniff(text: str) -> bool:
    """Whether ``text`` is a csh file: a ``#!`` line running csh or tcsh, or a first command
    ``setenv NAME`` or the ``if ( $?NAME )`` list merge ``advisor emit`` writes."""
    return shell_sniff(text, r"csh|tcsh", r"setenv\s+[A-Za-z_]|if \( \$\?")


def _item(item: EnvItem) -> list[str]:
    n, v = item.name, csh_quote(item.value)
    if item.separator is None:
        return [f"setenv {n} {v}"]
    sep = csh_quote(item.separator)
    return [
        f"if ( $?{n} ) then",
        f'    if ( "${n}:q" != "" ) then',
        f'        setenv {n} "${n}:q"{sep}{v}',
        "    else",
        f"        setenv {n} {v}",
        "    endif",
        "else",
        f"    setenv {n} {v}",
        "endif",
    ]


def render(sel: "Selection") -> str:
    """csh / tcsh to be sourced."""
    return item_file(sel, _item, fmt=NAME)


def parse(text: str, path: str) -> list[EnvEntry]:
    """The ``setenv`` lines (and sh-style launch lines) of a csh file, in file order."""
    return parse_shell(text, path)
