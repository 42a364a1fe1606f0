"""File and line of each key of a TOML text, for ``advisor explain`` and error messages.

``tomllib`` gives no positions.  This locator uses ``tomlkit`` (which keeps the text byte for
byte, comments and layout included): for each key path of the parsed document, it parses the
text with tomlkit, replaces the value at that path by a unique sentinel string, renders the
document again and counts the newlines before the sentinel.  Everything before the value is
unchanged by the replacement, so the count is the line where the value (for a key: its
``key = value`` line; for an array item: the item's own line) starts.  A table is placed
at its first key (an empty one where tomlkit renders the sentinel: the key's own line for
``key = {}``).  No TOML is parsed by hand.  Cost: one tomlkit parse per key, fine for configuration files (a few dozen keys; scope
files are refused above ``advisor.config.scopes.MAX_CONFIG_BYTES``).
"""

from __future__ import annotations

from typing import Any, Iterator

__all__ = ["key_paths", "key_lines"]

#: Stands in for a value while the locator renders the document; a string no configuration
#: file holds (the text is searched for it first).
_SENTINEL = "\ue000advisor-locate\ue000"


def key_paths(data: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every key path of a parsed TOML mapping, tables before their keys, list items as
    integer indexes (``("recommendations", "accept", 0)``)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield prefix + (key,)
            yield from key_paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield prefix + (i,)
            yield from key_paths(value, prefix + (i,))


def _line_of(text: str, path: tuple) -> int | None:
    import tomlkit

    doc = tomlkit.parse(text)
    node: Any = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = _SENTINEL
    rendered = doc.as_string()
    at = rendered.find(_SENTINEL)
    return rendered.count("\n", 0, at) + 1 if at >= 0 else None


def key_lines(text: str, data: dict) -> dict[tuple, int]:
    """Key path -> 1-based line in ``text`` for every path of ``data`` (``text`` parsed by
    tomllib).  Paths tomlkit cannot address (or a text tomlkit refuses) are left out: callers
    then name the file without a line."""
    if _SENTINEL in text:
        return {}
    out: dict[tuple, int] = {}
    tables = []
    for path in key_paths(data):
        if isinstance(_get(data, path), dict):
            tables.append(path)  # rendered as a whole: placed by its first key below
            continue
        try:
            line = _line_of(text, path)
        except Exception:  # tomlkit's own errors: the position is unknown, nothing more
            line = None
        if line is not None:
            out[path] = line
    for path in tables:
        inner = [n for p, n in out.items() if p[:len(path)] == path]
        if inner:
            out[path] = min(inner)
            continue
        try:  # an empty table: ``key = {}`` renders in place; an empty [header] is approximate
            line = _line_of(text, path)
        except Exception:
            line = None
        if line is not None:
            out[path] = line
    return out


def _get(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data
