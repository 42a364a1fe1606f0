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
#: ``parse`` refuses what it cannot read: an empty result truly sets nothing.
STRUCTURED = True


def sniff(text: str) -> bool:
    """Whether ``text`` is a TOML document (it parses) with a table header line or a profile's
    ``schema_version``: a Markdown file with a ``[name]`` line is not.  One nested deeper than
    ``advisor.nesting.MAX_DEPTH`` is claimed unparsed, so reading it refuses it by its depth."""
    if (re.search(r"^\s*\[\[?[A-Za-z_.]+\]\]?\s*$", text, re.M) is None
            and re.search(r"^\s*schema_version\s*=", text, re.M) is None):
        return False
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    from advisor.nesting import MAX_DEPTH, nesting_depth

    if nesting_depth(text, "toml") > MAX_DEPTH:
        return True  # TOML-shaped and too deep to parse: parse refuses it, naming the limit
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return False
    return True


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
