"""Shell formats: POSIX sh (``env``), csh/tcsh (``csh``) and fish (``fish``).

Each file only assigns variables: every value is a literal quoted so the shell performs no
expansion, command substitution or word splitting on it (tested by sourcing the files in bash,
dash, zsh, tcsh and fish with values holding quotes, ``$(...)``, backticks, ``;``, spaces,
backslashes and non-ASCII text).  List variables are appended to an existing non-empty value
with their separator and set when unset or empty (``advisor.emit.common.MERGE_POLICY``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from advisor.emit.common import EnvItem, env_items, header_lines

if TYPE_CHECKING:  # pragma: no cover
    from advisor.emit import EmitOptions
    from advisor.models import Profile


def _header(profile: "Profile", marker: str = "#") -> list[str]:
    return [f"{marker} {line}" for line in header_lines(profile)]


# --------------------------------------------------------------------------- POSIX sh


def sh_quote(text: str) -> str:
    """``text`` as one POSIX shell word: single quotes, each ``'`` written as ``'\\''``
    (POSIX.1-2017 XCU 2.2.2: inside single quotes no character is special)."""
    return "'" + text.replace("'", "'\\''") + "'"


def _sh_item(item: EnvItem) -> list[str]:
    n, v = item.name, sh_quote(item.value)
    if item.separator is None:
        return [f"{n}={v}; export {n}"]
    sep = sh_quote(item.separator)
    # ${N-} keeps `set -u` job scripts working when N is unset.
    return [f'if [ -n "${{{n}-}}" ]; then {n}="${{{n}}}"{sep}{v}; else {n}={v}; fi; export {n}']


def _render(profile: "Profile", options: "EmitOptions",
            item_lines: Callable[[EnvItem], list[str]]) -> str:
    """The header, then per setting a blank line, its ``#`` comment and ``item_lines(item)``:
    the layout every shell format shares (all three take ``#`` comments)."""
    lines = _header(profile)
    for item in env_items(profile, options):
        lines.append("")
        if item.comment:
            lines.append(f"# {item.comment}")
        lines.extend(item_lines(item))
    return "\n".join(lines) + "\n"


def render_sh(profile: "Profile", options: "EmitOptions") -> str:
    """POSIX sh to be sourced (``. ./advisor.sh``) by sh, dash, bash, ksh or zsh."""
    return _render(profile, options, _sh_item)


# --------------------------------------------------------------------------- csh / tcsh


def csh_quote(text: str) -> str:
    """``text`` as one csh word: runs of ordinary characters in single quotes; ``'`` and ``!``
    (history substitution happens even inside single quotes) written outside the quotes as
    ``\\'`` and ``\\!``.  Inside csh single quotes ``$``, backticks, ``"`` and backslashes are
    literal (csh(1), "Lexical structure")."""
    if not text:
        return "''"
    parts = re.split(r"(['!])", text)
    return "".join("\\" + p if p in ("'", "!") else f"'{p}'" for p in parts if p)


def _csh_item(item: EnvItem) -> list[str]:
    n, v = item.name, csh_quote(item.value)
    if item.separator is None:
        return [f"setenv {n} {v}"]
    sep = csh_quote(item.separator)
    # $?N is 1 when N is set; "$N:q" expands the existing value as one quoted word.
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


def render_csh(profile: "Profile", options: "EmitOptions") -> str:
    """csh / tcsh to be sourced (``source advisor.csh``)."""
    return _render(profile, options, _csh_item)


# --------------------------------------------------------------------------- fish


def fish_quote(text: str) -> str:
    """``text`` as one fish word: single quotes, where only ``\\'`` and ``\\\\`` are escapes
    (fish documentation, "Quotes")."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_item(item: EnvItem) -> list[str]:
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


def render_fish(profile: "Profile", options: "EmitOptions") -> str:
    """fish to be sourced (``source advisor.fish``)."""
    return _render(profile, options, _fish_item)
