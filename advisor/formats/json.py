"""JSON (format ``json``): the selected settings as a document (:mod:`advisor.formats.structured`).

``parse`` also reads a profile written as JSON and a plain object of names to values.
"""

from __future__ import annotations

import json
import re
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


#: How a JSON document starts: an object's first key or end, an array's first value or end
#: (RFC 8259, section 2); ``[section]`` (a TOML header) does not.
_JSON_START = re.compile(r'\s*(?:\{\s*["}]|\[\s*(?:[\[\]{"\-0-9]|(?:true|false|null)\b))')


def sniff(text: str) -> bool:
    """Whether ``text`` is a JSON document (an object or array that parses); one nested deeper
    than ``advisor.nesting.MAX_DEPTH`` is claimed unparsed, so that ``parse`` refuses it."""
    from advisor.nesting import MAX_DEPTH, nesting_depth

    if not _JSON_START.match(text):
        return False
    if nesting_depth(text, "json") > MAX_DEPTH:
        return True
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
