"""Lmod modulefiles (format ``lmod``, Lua).

The module has a ``help`` text for users, ``whatis`` lines and the family ``hpc_advisor``
(:mod:`advisor.formats.modhelp`: what each says and why a family), a comment block for
administrators and a ``prereq``/``depends_on``/family check of the MPI module it was measured
with (:mod:`advisor.formats.moddeps`); a selection with nothing to set is an ``EmitError``,
not an empty module.

``setenv("NAME", "value")``; list variables ``append_path("NAME", "item", "sep")`` (Lmod
documentation, "Lua Modulefile Functions": ``append_path(NAME, value, delim)``).  ``module
unload`` unsets a set variable and removes an appended item, so the existing value comes back.

Lmod prints shell code for the user's shell when it loads the module; for some characters that
code is wrong (``advisor.formats.quoting.MODULE_MANGLED``), so values holding them are refused.
``parse`` reads ``setenv``/``pushenv``/``append_path``/``prepend_path`` calls, arguments split
with ``shlex`` (a call may span ``LMOD_CALL_MAX_LINES`` lines).
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Iterable, Optional

from advisor.errors import EmitError
from advisor.specs.writing import EnvItem, env_items, item_file, refuse_unsafe
from advisor.specs.entry import NAME_RE, EnvEntry, unreadable
from advisor.formats.quoting import lua_quote, module_unsafe

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "lmod"
DESCRIPTION = "Lmod modulefile (Lua)"
EXTENSION = "lua"

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".lua",)


def sniff(text: str) -> bool:
    """Whether ``text`` reads as an Lmod modulefile (a ``setenv(``, ``pushenv(``,
    ``append_path(`` or ``prepend_path(`` call)."""
    return re.search(r"^\s*(setenv|pushenv|append_path|prepend_path)\s*\(", text, re.M) is not None

#: what the module tools cannot carry: the advice given with the refusal
MODULE_ADVICE = "a module tool cannot pass it to every shell unchanged; use the env, csh or " \
                "fish format for this value"


def _item(item: EnvItem) -> list[str]:
    if item.separator is None:
        return [f"setenv({lua_quote(item.name)}, {lua_quote(item.value)})"]
    return [f"append_path({lua_quote(item.name)}, {lua_quote(item.value)}, "
            f"{lua_quote(item.separator)})"]


def module_items(sel: "Selection", fmt: str) -> list[EnvItem]:
    """``env_items`` for a modulefile: refused when a module tool would mangle a value, and
    when there is none (an empty module loads and does nothing: an error, not a success).

    :raises EmitError: a mangled value (``module_unsafe``), or nothing to write, with why
        (``Selection.nothing_to_write``).
    """
    items = env_items(sel)
    refuse_unsafe(items, module_unsafe, MODULE_ADVICE)
    if not items:
        raise EmitError(sel.nothing_to_write(("env",), fmt))
    return items


def long_bracket(lines: list[str]) -> str:
    """``lines`` as a Lua long string ``[==[ ... ]==]`` whose level (number of ``=``) closes
    nowhere inside the text (Lua 5.1 reference manual, section 2.1: long brackets)."""
    text = "\n".join(lines)
    level = 0
    while f"]{'=' * level}]" in text:
        level += 1
    eq = "=" * level
    return f"[{eq}[\n{text}\n]{eq}]"


def render(sel: "Selection") -> str:
    """An Lmod modulefile (``NAME.lua`` in a directory on ``MODULEPATH``): the administrators'
    comment, ``help``, ``whatis``, ``family`` (:mod:`advisor.formats.modhelp`) and the
    dependency on the measured MPI module (:mod:`advisor.formats.moddeps`).

    :raises EmitError: a value Lmod would mangle for some shell (``module_unsafe``); nothing
        to set (the message says why: e.g. every selected setting only confirms a default); an
        MPI module name that is not a plain name.
    """
    from advisor.formats.moddeps import admin_lines, dependency_lines, mpi_modules
    from advisor.formats.modhelp import FAMILY, help_lines, whatis_lines

    items = module_items(sel, NAME)
    mpis = mpi_modules(sel, items)
    pre = [""] + [f"-- {line}" for line in admin_lines(sel, mpis, NAME)]
    pre += ["", f"help({long_bracket(help_lines(sel, items, mpis))})", ""]
    pre += [f"whatis({lua_quote(line)})" for line in whatis_lines(sel.profile, items)]
    pre.append(f"family({lua_quote(FAMILY)})")
    pre += dependency_lines(sel, mpis, "lua")
    return item_file(sel, _item, marker="--", preamble=pre, fmt=NAME, items=items)


_LMOD = re.compile(r"^\s*(setenv|pushenv|append_path|prepend_path)\s*\((.*)\)\s*;?\s*(?:--.*)?$",
                   re.S)
_LMOD_START = re.compile(r"^\s*(setenv|pushenv|append_path|prepend_path)\s*\(")
#: Lines one Lmod call may span (its arguments one per line, with room for comments).
LMOD_CALL_MAX_LINES = 20


def _calls(text: str) -> Iterable[tuple[int, str, Optional[re.Match]]]:
    """``(line, text, match)`` of each Lmod call, joining the lines of a call whose arguments
    continue on the next lines (match None: not closed within ``LMOD_CALL_MAX_LINES``)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not _LMOD_START.match(lines[i]):
            i += 1
            continue
        for j in range(i, min(len(lines), i + LMOD_CALL_MAX_LINES)):
            joined = "\n".join(lines[i:j + 1])
            m = _LMOD.match(joined)
            if m:
                yield i + 1, joined, m
                i = j + 1
                break
        else:
            yield i + 1, lines[i], None
            i += 1


def parse(text: str, path: str) -> list[EnvEntry]:
    """The settings of an Lmod modulefile, in file order."""
    entries: list[EnvEntry] = []
    for no, _call, m in _calls(text):
        if m is None:
            entries.append(unreadable(path, no, "an Lmod call whose parentheses are not closed"))
            continue
        lex = shlex.shlex(m.group(2), posix=True)
        lex.whitespace += ","  # argument separators; a quoted "," stays a value
        lex.whitespace_split = True
        try:
            args = list(lex)
        except ValueError:
            continue
        if len(args) < 2 or not NAME_RE.match(args[0]):
            continue
        fn = m.group(1)
        if fn in ("append_path", "prepend_path"):
            entries.append(EnvEntry(args[0], args[1], path, no, True, append=True,
                                    separator=args[2] if len(args) > 2 else ":",
                                    prepend=fn == "prepend_path"))
        else:
            entries.append(EnvEntry(args[0], args[1], path, no, True))
    return entries
