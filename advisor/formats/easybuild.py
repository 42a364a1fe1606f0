"""EasyBuild easyconfigs (format ``easybuild``): the ``modextravars`` parameter.

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

``parse`` reads the ``modextravars`` dict (``NAME: value`` or ``NAME: {'value': v, ...}``,
EasyBuild 5) with ``ast.literal_eval``: nothing in the file is run.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from advisor.errors import BadInputError
from advisor.specs.writing import (env_items, header_lines, left_out_comment, one_line,
                                    refuse_unsafe)
from advisor.specs.entry import EnvEntry, literal_dict_entries, unreadable
from advisor.formats.quoting import python_quote

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "easybuild"
DESCRIPTION = "EasyBuild easyconfig modextravars"
EXTENSION = "eb"

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".eb",)
#: ``parse`` refuses what it cannot read: an empty result truly sets nothing.
STRUCTURED = True


def sniff(text: str) -> bool:
    """Whether ``text`` is an easyconfig setting ``modextravars``."""
    return re.search(r"^modextravars\s*=", text, re.M) is not None


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


def render(sel: "Selection") -> str:
    """An easyconfig fragment ``modextravars = {...}`` (see the module docstring).

    :raises EmitError: a value EasyBuild would not carry into its modules unchanged
        (``easybuild_unsafe``), naming the setting and the reason.
    """
    lines = [f"# {line}" for line in header_lines(sel.profile)]
    lines += left_out_comment(sel, ("env",), "#", fmt=NAME)
    items = env_items(sel)
    refuse_unsafe(items, easybuild_unsafe, "use another format (lmod, tcl) for this value")
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


def parse(text: str, path: str) -> list[EnvEntry]:
    """The ``modextravars`` dict of an easyconfig (``NAME: value`` or ``NAME: {'value': v,
    ...}``, EasyBuild 5), read with ``ast.literal_eval``: nothing in the file is run."""
    import ast

    from advisor.nesting import parse_python

    tree = parse_python(text, path, "easyconfig")
    out: list[EnvEntry] = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "modextravars" for t in node.targets)):
            if any(isinstance(n, ast.Name) and n.id == "modextravars" for n in ast.walk(node)):
                # modextravars.update({...}), modextravars['N'] = v, +=: changed, not read
                out.append(unreadable(path, node.lineno, "changes modextravars in a way lint "
                                       "does not read (only 'modextravars = {...}' is read)"))
            continue
        if not isinstance(node.value, ast.Dict):
            out.append(unreadable(path, node.lineno, "modextravars is not a dict literal"))
            continue
        out += literal_dict_entries(node.value, path, "modextravars", unwrap_value=True)
    return out
