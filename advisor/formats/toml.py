"""TOML (format ``toml``): the selected settings as a document (:mod:`advisor.formats.structured`).

``parse`` also reads a profile (which is TOML).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.specs.writing import header_lines
from advisor.specs.entry import EnvEntry
from advisor.formats.structured import document, parse_structured

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "toml"
DESCRIPTION = "the selected settings as TOML"
EXTENSION = "toml"

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".toml",)


def sniff(text: str) -> bool:
    """Whether ``text`` reads as TOML (a table header line, or a profile's
    ``schema_version``)."""
    return (re.search(r"^\s*\[\[?[A-Za-z_.]+\]\]?\s*$", text, re.M) is not None
            or re.search(r"^\s*schema_version\s*=", text, re.M) is not None)
#: config settings too (library arguments set in code or a configuration file)
KINDS = ("env", "config")


def render(sel: "Selection") -> str:
    """TOML 1.0 written by ``tomli_w``, after a provenance comment header."""
    import tomli_w

    head = "".join(f"# {line}\n" for line in header_lines(sel.profile))
    return head + tomli_w.dumps(document(sel, NAME))


def parse(text: str, path: str) -> list[EnvEntry]:
    """The environment settings of an ``advisor emit -f toml`` document or a profile.

    :raises BadInputError: malformed TOML, or neither shape.
    """
    return parse_structured(text, path, "toml")
