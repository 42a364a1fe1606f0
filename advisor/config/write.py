"""Changing a scope file: ``advisor config set`` and the check behind ``advisor config edit``.

Edits go through ``tomlkit``, which keeps the file's comments, order and layout: only the value
of the key set changes (or the key is added, under its table).  The new text is validated as a
scope (``advisor.config.scopes.scope_from_text``) before anything is written; the file is then
replaced atomically (``advisor.save.atomic_write_text``), so a refused or failed change leaves
it as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from advisor.errors import BadInputError

__all__ = ["key_path", "parse_value", "set_text", "set_key", "pin_with_reason", "EDIT_TEMPLATE"]

#: The text ``advisor config edit`` starts a new scope file with.
EDIT_TEMPLATE = """\
# hpc-advisor configuration ({scope} scope): see docs/config.md and docs/config.schema.json.
# [settings.pin]      NAME = value, or NAME = {{ value = ..., reason = "..." }}
# [settings.exclude]  NAME = "reason"
# [recommendations]   accept = ["probe:recommendation-id"]
# [launcher]          command = "srun -n {{nprocs}}"
# [plugins]           enable = [...], disable = [...]
# [fleet]             k = 6.0, expected = "node[001-128]"
# [store]             profiles = "/path/to/profiles"
# [modules]           mpi = {{ mpich = "mpich/4.3.2" }}, dependency = "prereq", family = "MPI"
"""


def key_path(key: str) -> tuple[str, ...]:
    """``a.b.c`` as a path; under ``settings.pin`` / ``settings.exclude`` the rest is one setting
    name, dots included (``settings.pin.host.QuickPool.alignment``).

    :raises BadInputError: an empty part.
    """
    parts = key.split(".")
    if parts[0] == "settings" and len(parts) > 3:
        parts = parts[:2] + [".".join(parts[2:])]
    if not all(parts):
        raise BadInputError(f"{key!r}: not a key (write section.key, e.g. launcher.command)")
    return tuple(parts)


def parse_value(text: str) -> Any:
    """``text`` as a TOML value (``16384``, ``true``, ``["a:b"]``, ``"x"``); text that is not
    TOML is taken as a string (``srun -n {nprocs}``)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(f"v = {text}\n")["v"]
    except (TOMLKitError, ValueError):
        return text


def set_text(text: str, path: tuple[str, ...], value: Any) -> str:
    """``text`` (a scope file) with ``path`` set to ``value``, comments and layout kept."""
    import tomlkit

    doc = tomlkit.parse(text)
    node: Any = doc
    for i, part in enumerate(path[:-1]):
        if part not in node:
            # a table holding only tables is written as [a.b] headers, no empty [a]
            node[part] = tomlkit.table(is_super_table=i + 2 < len(path))
        node = node[part]
        if not isinstance(node, dict):
            raise BadInputError(f"key '{'.'.join(path[:i + 1])}' is a value, not a table")
    node[path[-1]] = value
    return tomlkit.dumps(doc)


def pin_with_reason(text: str, path: tuple[str, ...], value: Any, reason: str) -> Any:
    """The pin table ``{value = ..., reason = "..."}`` (``advisor.config.schema.Pin``) that
    ``config set settings.pin.NAME VALUE --reason TEXT`` writes; the ``library`` of a pin
    already set as a table in ``text`` is kept.

    :raises BadInputError: ``path`` is not ``settings.pin.NAME``.
    """
    import tomlkit

    if len(path) != 3 or path[:2] != ("settings", "pin"):
        raise BadInputError(f"--reason: {'.'.join(path)} is not a pin (--reason goes with "
                            f"settings.pin.NAME)")
    table = tomlkit.inline_table()
    table["value"] = value
    old = tomlkit.parse(text).get("settings", {}).get("pin", {}).get(path[2])
    if isinstance(old, dict) and "library" in old:
        table["library"] = old["library"]
    table["reason"] = reason
    return table


def set_key(scope: str, file: Path, key: str, value_text: str,
            check: Optional[Callable[[Any], None]] = None, reason: Optional[str] = None) -> str:
    """Set ``key`` to ``value_text`` in scope file ``file`` (created when missing).
    ``check(scope)`` runs on the would-be scope before anything is written (``advisor config``
    passes :func:`advisor.config.apply.check_scope_pins`).

    :param reason: with a ``settings.pin.NAME`` key, why the site pins it: the pin is written as
        a table holding it (:func:`pin_with_reason`).
    :return: the new text (as written).
    :raises BadInputError: the file cannot be read, it or the value nests deeper than
        ``advisor.nesting.MAX_DEPTH``, the result would not be a valid scope (message:
        ``FILE:LINE: key '...': ...``), or ``reason`` with a key that is not a pin; the file
        is then unchanged.
    """
    from advisor.config.scopes import MAX_CONFIG_BYTES, scope_from_text
    from advisor.nesting import check_depth
    from advisor.save import atomic_write_text
    from advisor.textfile import read_text_file

    old = (read_text_file(file, kind="configuration file", max_bytes=MAX_CONFIG_BYTES)
           if file.exists() else EDIT_TEMPLATE.format(scope=scope))
    check_depth(old, str(file), "toml")  # tomlkit recurses per level too
    check_depth(value_text, f"value of {key}", "toml")
    path, value = key_path(key), parse_value(value_text)
    if reason is not None:
        value = pin_with_reason(old, path, value, reason)
    new = set_text(old, path, value)
    parsed = scope_from_text(scope, file, new)
    if check is not None:
        check(parsed)
    atomic_write_text(file, new)
    return new
