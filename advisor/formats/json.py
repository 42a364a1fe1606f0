"""JSON (format ``json``): the selected settings as a document (:mod:`advisor.formats.structured`).

``parse`` also reads a profile written as JSON and a plain object of names to values.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from advisor.specs.entry import EnvEntry
from advisor.formats.structured import document, parse_structured

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "json"
DESCRIPTION = "the selected settings as JSON"
EXTENSION = "json"

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".json",)
#: ``parse`` refuses what it cannot read: an empty result truly sets nothing.
STRUCTURED = True


def sniff(text: str) -> bool:
    """Whether ``text`` is a JSON document (an object or array that parses)."""
    head = text.lstrip()
    if not head.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
#: config settings too (library arguments set in code or a configuration file)
KINDS = ("env", "config")


def render(sel: "Selection") -> str:
    """JSON (RFC 8259), two-space indented, UTF-8 text (non-ASCII kept literal)."""
    return json.dumps(document(sel, NAME), indent=2, ensure_ascii=False) + "\n"


def parse(text: str, path: str) -> list[EnvEntry]:
    """The environment settings of an ``advisor emit -f json`` document, a profile, or an
    object of names to values.

    :raises BadInputError: malformed JSON, or none of those shapes.
    """
    return parse_structured(text, path, "json")
