"""fish (format ``fish``): a file to source (``source advisor.fish``).

Values are quoted with ``advisor.formats.quoting.fish_quote``; a list variable is appended to an
existing non-empty value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.specs.writing import EnvItem, item_file
from advisor.specs.entry import EnvEntry
from advisor.formats.quoting import fish_quote
from advisor.formats.shellread import parse_shell, shell_sniff

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "fish"
DESCRIPTION = "fish to source"
EXTENSION = "fish"

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".fish",)


def sniff(text: str) -> bool:
    """Whether ``text`` is a fish file: a ``#!`` line running fish, or a first command
    ``set -gx`` (or ``-x``, ``--export``) or the ``if test -n`` list merge ``advisor emit``
    writes."""
    return shell_sniff(text, r"fish", r"set\s+(?:-\w*x\w*|--export)\s|if test -n \"\$")


def _item(item: EnvItem) -> list[str]:
    n, v = item.name, fish_quote(item.value)
    if item.separator is None:
        return [f"set -gx {n} {v}"]
    sep = fish_quote(item.separator)
    return [
        f'if test -n "${n}"',
        f'    set -gx {n} "${n}"{sep}{v}',
        "else",
        f"    set -gx {n} {v}",
        "end",
    ]


def render(sel: "Selection") -> str:
    """fish to be sourced."""
    return item_file(sel, _item, fmt=NAME)


def parse(text: str, path: str) -> list[EnvEntry]:
    """The ``set -gx`` lines of a fish file, in file order."""
    return parse_shell(text, path, fish=True)
