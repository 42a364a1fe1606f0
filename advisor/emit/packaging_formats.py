"""Formats for software-deployment tools: Spack environments (``spack``) and EasyBuild
easyconfigs (``easybuild``).

Spack
    An ``env_vars.yaml`` include file for a Spack environment, as documented in
    https://spack.readthedocs.io/en/latest/env_vars_yaml.html ("Environment Variable Settings
    (env_vars.yaml)"): a top-level ``env_vars:`` mapping with the sections ``set``, ``unset``,
    ``prepend_path``, ``append_path`` and ``remove_path``; each of ``set`` / ``*_path`` maps a
    variable name to a string or number (schema: ``lib/spack/spack/schema/environment.py``,
    ``env_modifications``).  Use it from ``spack.yaml`` with ``include: [advisor-env.yaml]``, or
    paste the ``env_vars`` mapping under ``spack:``.  Spack applies the changes on
    ``spack env activate``.

    List variables go to ``append_path``, which appends to an existing value with ``:`` and sets
    the variable when it is empty.  The YAML schema has no separator field (``:``,
    ``os.pathsep``, is always used) and Spack passes each appended value through
    ``os.path.normpath`` (``spack.util.environment.AppendPath``), so a list whose separator is
    not ``:`` or whose items ``normpath`` would change is written under ``set`` (overwriting,
    with a comment saying so).

EasyBuild
    The ``modextravars`` easyconfig parameter: a Python dict literal ``{NAME: value}`` that
    EasyBuild turns into ``setenv`` lines of the generated module (EasyBuild documentation,
    "Available easyconfig parameters": ``modextravars``, "Extra environment variables to be
    added to module file").  EasyBuild cannot append a non-path value to an existing variable:
    ``modextrapaths`` (prepend) and ``modextrapaths_append`` take paths relative to the
    installation directory.  List variables are therefore written as the full value (the
    existing value is overwritten when the module loads), with a comment saying so.

    EasyBuild does not carry every string into the module it generates.  Checked with
    easybuild-framework 5.4.1 (``set_environment`` of ``ModuleGeneratorLua`` and
    ``ModuleGeneratorTcl``, ``quote_str`` in ``easybuild/tools/utilities.py``) and by loading
    the generated modules in Lmod and Environment Modules (tests/emit/test_emit_easybuild.py):

    * ``%(name)s`` is an easyconfig template (``resolve_template``);
    * ``$NAME`` and ``${NAME}`` become the loading user's environment (``resolve_env_vars`` is
      on by default), ``$$`` becomes ``$``, and ``$name``, ``$1`` or ``$(`` are Tcl variable
      substitution (a ``$`` before any other character is left alone);
    * ``[`` starts Tcl command substitution inside the double quotes EasyBuild writes: the
      module would run it when loaded;
    * a backslash is written unescaped, so Lua and Tcl read it as an escape;
    * a value with both quote characters is written between tripled double quotes, which
      neither language reads as one string;
    * the Lua generator strips leading and trailing spaces and dots (``str.strip(" .. ")``).

    Such a value is refused (``EmitError`` naming the setting) rather than written into a file
    that would load something else, or run it.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import TYPE_CHECKING

from advisor.emit.common import EnvItem, env_items, header_lines, one_line
from advisor.errors import EmitError

if TYPE_CHECKING:  # pragma: no cover
    from advisor.emit import EmitOptions
    from advisor.models import Profile

#: The only list separator Spack's env_vars ``append_path`` uses (``os.pathsep`` on POSIX).
SPACK_PATH_SEPARATOR = ":"

#: Characters a YAML 1.1/1.2 reader accepts literally besides printable ASCII (PyYAML
#: ``Reader.NON_PRINTABLE``, YAML 1.2 section 5.1 c-printable) minus those YAML treats as line
#: breaks (U+0085, U+2028, U+2029) or a byte-order mark (U+FEFF): those are escaped.
_YAML_ESCAPE_ALWAYS = {0x85, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF}


def yaml_quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar: ``\\`` and ``"`` escaped, non-printable and
    line-breaking code points as ``\\uXXXX`` / ``\\UXXXXXXXX`` (YAML 1.2, section 5.7)."""
    out = ['"']
    for ch in text:
        cp = ord(ch)
        if ch in '\\"':
            out.append("\\" + ch)
        elif 0x20 <= cp < 0x7F:
            out.append(ch)
        elif cp < 0xA0 or cp in _YAML_ESCAPE_ALWAYS or unicodedata.category(ch) in ("Cs", "Co", "Cn"):
            out.append(f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _spack_appendable(item: EnvItem) -> bool:
    if item.separator != SPACK_PATH_SEPARATOR:
        return False
    return all(os.path.normpath(part) == part for part in item.value.split(item.separator))


def render_spack(profile: "Profile", options: "EmitOptions") -> str:
    """A Spack ``env_vars.yaml`` include file (see the module docstring)."""
    lines = [f"# {line}" for line in header_lines(profile)]
    items = env_items(profile, options)
    sets = [i for i in items if i.separator is None or not _spack_appendable(i)]
    appends = [i for i in items if i.separator is not None and _spack_appendable(i)]
    lines.append("env_vars:")
    if not items:
        lines[-1] = "env_vars: {}"
    for section, group in (("set", sets), ("append_path", appends)):
        if not group:
            continue
        lines.append(f"  {section}:")
        for item in group:
            if item.comment:
                lines.append(f"    # {item.comment}")
            if item.separator is not None and section == "set":
                lines.append(f"    # {item.name} is a list ({item.separator!r}-separated) that "
                             "Spack's append_path cannot merge; this overwrites it")
            lines.append(f"    {item.name}: {yaml_quote(item.value)}")
    return "\n".join(lines) + "\n"


def python_quote(text: str) -> str:
    """``text`` as a Python string literal that ``ast.literal_eval`` reads back unchanged."""
    return repr(text)


#: A ``$`` that EasyBuild (``$NAME``, ``${NAME}``, ``$$``) or Tcl (``$name``, ``${name}``,
#: ``$name(index)``, ``$::ns``, ``$1``) would read as a reference; a ``$`` before anything else
#: is literal in both Tcl and Lua.
_DOLLAR_REFERENCE = re.compile(r"\$[A-Za-z0-9_{(:$]")


def easybuild_unsafe(value: str) -> str | None:
    """Why EasyBuild would not write ``value`` into its Lua and Tcl modules unchanged (see the
    module docstring), or None when it would."""
    if "%(" in value:
        return "holds '%(', which EasyBuild would resolve as an easyconfig template"
    m = _DOLLAR_REFERENCE.search(value)
    if m:
        return (f"holds {m.group()!r}, which EasyBuild resolves as an environment variable or "
                "Tcl substitutes")
    if "[" in value:
        return "holds '[', which the Tcl module EasyBuild writes would run as a command"
    if "\\" in value:
        return "holds a backslash, which EasyBuild writes unescaped into Lua and Tcl strings"
    if "'" in value and '"' in value:
        return "holds both quote characters, which EasyBuild cannot quote for Lua or Tcl"
    if value != value.strip(" ."):
        return "starts or ends with a space or a dot, which EasyBuild's Lua module drops"
    return None


def render_easybuild(profile: "Profile", options: "EmitOptions") -> str:
    """An easyconfig fragment ``modextravars = {...}`` (see the module docstring).

    :raises EmitError: a value EasyBuild would not carry into its modules unchanged
        (``easybuild_unsafe``), naming the setting and the reason.
    """
    lines = [f"# {line}" for line in header_lines(profile)]
    items = env_items(profile, options)
    for item in items:
        why = easybuild_unsafe(item.value)
        if why:
            src = item.sources[0] if item.sources else None
            where = f"{src.probe}/{src.recommendation}: " if src else ""
            raise EmitError(f"setting {where}{item.name}: value {why}; use another format "
                            "(lmod, tcl) for this value")
    if not items:
        lines.append("modextravars = {}")
        return "\n".join(lines) + "\n"
    lines.append("modextravars = {")
    for item in items:
        if item.comment:
            lines.append(f"    # {item.comment}")
        if item.separator is not None:
            lines.append(f"    # {item.name} is a list ({one_line(repr(item.separator))}-"
                         "separated); EasyBuild cannot append to an existing value, this "
                         "overwrites it")
        lines.append(f"    {python_quote(item.name)}: {python_quote(item.value)},")
    lines.append("}")
    return "\n".join(lines) + "\n"
