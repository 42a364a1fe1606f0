"""Module-system formats: Lmod Lua modulefiles (``lmod``) and Environment Modules Tcl
modulefiles (``tcl``).

- Lmod: ``setenv("NAME", "value")``; list variables ``append_path("NAME", "item", "sep")``
  (Lmod documentation, "Lua Modulefile Functions": ``append_path(NAME, value, delim)``).
- Environment Modules: ``setenv NAME "value"``; list variables
  ``append-path -d SEP NAME "item"`` (modulefile(5): ``append-path [-d C|--delim C] ...``,
  Modules >= 4.0).

Both systems undo the settings on ``module unload``: a set variable is unset and an appended
item removed, so the existing value comes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.emit.common import env_items, header_lines

if TYPE_CHECKING:  # pragma: no cover
    from advisor.emit import EmitOptions
    from advisor.models import Profile


def lua_quote(text: str) -> str:
    """``text`` as a Lua double-quoted string literal: ``\\`` and ``"`` escaped; every other
    character is written as its UTF-8 bytes (Lua strings are byte strings; Lua 5.1 reference
    manual, section 2.1).  Control characters never get here (refused upstream)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_lmod(profile: "Profile", options: "EmitOptions") -> str:
    """An Lmod modulefile (``NAME.lua`` in a directory on ``MODULEPATH``)."""
    lines = [f"-- {line}" for line in header_lines(profile)]
    lines.append("")
    lines.append(f"whatis({lua_quote('Runtime settings measured by hpc-advisor for ' + profile.fingerprint)})")
    for item in env_items(profile, options):
        lines.append("")
        if item.comment:
            lines.append(f"-- {item.comment}")
        if item.separator is None:
            lines.append(f"setenv({lua_quote(item.name)}, {lua_quote(item.value)})")
        else:
            lines.append(f"append_path({lua_quote(item.name)}, {lua_quote(item.value)}, "
                         f"{lua_quote(item.separator)})")
    return "\n".join(lines) + "\n"


def tcl_quote(text: str) -> str:
    """``text`` as one Tcl word in double quotes with ``\\ " $ [ ]`` backslash-escaped
    (Tcl(n) rules 4, 6-8: inside double quotes only command, variable and backslash
    substitution happen; braces and ``;`` are literal)."""
    out = []
    for ch in text:
        if ch in '\\"$[]':
            out.append("\\" + ch)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def render_tcl(profile: "Profile", options: "EmitOptions") -> str:
    """An Environment Modules modulefile (Tcl, first line ``#%Module``)."""
    lines = ["#%Module1.0"]
    lines.extend(f"# {line}" for line in header_lines(profile))
    lines.append("")
    lines.append("module-whatis " + tcl_quote("Runtime settings measured by hpc-advisor for "
                                              + profile.fingerprint))
    for item in env_items(profile, options):
        lines.append("")
        if item.comment:
            lines.append(f"# {item.comment}")
        if item.separator is None:
            lines.append(f"setenv {item.name} {tcl_quote(item.value)}")
        else:
            lines.append(f"append-path -d {tcl_quote(item.separator)} {item.name} "
                         f"{tcl_quote(item.value)}")
    return "\n".join(lines) + "\n"
