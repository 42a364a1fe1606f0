"""EasyBuild hooks file (format ``easybuild-hooks``): a ``parse_hook`` that adds the settings to
``modextravars`` of the easyconfigs of the software that reads them.

EasyBuild runs ``parse_hook(ec)`` on every easyconfig it parses when started with
``--hooks=FILE`` (EasyBuild documentation, "Hooks"; ``easybuild.tools.hooks.load_hooks``
imports the file and keeps the functions whose names end in ``_hook``, refusing unknown hook
names, so this file defines that one function only).  Sites such as EESSI deploy site policy
this way, without editing easyconfigs.  The hook matches by software name
(``ec.name``: the easyconfig name the library's record gives, ``Library.package("easybuild")``,
e.g. ``MPICH`` and ``OpenMPI``), for every version and toolchain, and merges with ``ec.update('modextravars',
{...})`` (a dict parameter is updated key by key: the easyconfig's own other variables stay).

Settings of a library no easyconfig builds (``glibc``: the system C library) cannot be
attached to a module this way; they are left out with a comment saying so (``-f lmod`` or
``-f env`` writes them).  List variables are written as their full value (``modextravars``
cannot append to an existing value; as in the ``easybuild`` format).

The profile's data enters the file only as Python literals (``repr`` of ``str``) inside one
dict, :data:`SETTINGS`; the hook's code is fixed text.  Values EasyBuild would not carry into
its modules unchanged are refused as in the ``easybuild`` format
(:func:`advisor.formats.easybuild.easybuild_unsafe`).

``parse`` reads the ``SETTINGS`` dict back with ``ast.literal_eval``: nothing in the file runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from advisor.specs.writing import (EnvItem, env_items, header_lines, left_out_comment, one_line,
                                    refuse_unsafe)
from advisor.formats.easybuild import easybuild_unsafe
from advisor.specs.entry import EnvEntry, literal_dict_entries, python_assignments, unreadable
from advisor.formats import has_line
from advisor.formats.quoting import python_quote
from advisor.libraries import builtin_libraries

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "easybuild-hooks"
DESCRIPTION = "EasyBuild hooks file: parse_hook adds modextravars to matching easyconfigs"
EXTENSION = "py"
#: Its shape decides (a ``.py`` file is no format by its suffix).
SUFFIXES: tuple[str, ...] = ()
#: Its shape decides over the suffix it shares with other Python files.
SNIFF_OVER_SUFFIX = True


def sniff(text: str) -> bool:
    """Whether ``text`` is the hooks file this format writes (``parse_hook`` and
    ``SETTINGS``)."""
    return has_line(text, "def parse_hook(") and has_line(text, "SETTINGS = {")



def easybuild_names(libraries: Mapping[str, Any]) -> dict[str, str]:
    """``Setting.library`` -> easyconfig software name, from the library records
    (``Library.package("easybuild")``; ``libraries``: ``Registry.libraries``, as
    ``Selection.libraries``).  A library without one is not written by this format."""
    return {n: lib.package("easybuild") for n, lib in libraries.items()
            if lib.package("easybuild")}


#: The built-in libraries whose settings are written (``advisor.formats.writers_of``); a
#: plugin's record with an EasyBuild name is written too (``Selection.libraries``).
LIBRARIES = tuple(sorted(easybuild_names(builtin_libraries())))

#: The fixed code of the hook (no profile text in it).
HOOK = '''

def parse_hook(ec, *args, **kwargs):
    """Add the advised settings of this software (SETTINGS) to its module's modextravars."""
    extra = SETTINGS.get(ec.name)
    if extra:
        ec.update("modextravars", dict(extra))
'''


def render(sel: "Selection") -> str:
    """A hooks file (module docstring).

    :raises EmitError: a value EasyBuild would not carry unchanged (``easybuild_unsafe``).
    """
    lines = [f"# {line}" for line in header_lines(sel.profile)]
    names = easybuild_names(sel.libraries)
    lines += left_out_comment(sel, ("env",), fmt=NAME, libraries=tuple(names))
    items = [i for i in env_items(sel)
             if any(src.setting.library in names for src in i.sources)]
    refuse_unsafe(items, easybuild_unsafe, "use another format (lmod, tcl) for this value")
    by_name: dict[str, list[EnvItem]] = {}
    for item in items:
        for sw in sorted({names[s.setting.library] for s in item.sources
                          if s.setting.library in names}):
            by_name.setdefault(sw, []).append(item)
    lines.append("SETTINGS = {")
    for sw in sorted(by_name):
        lines.append(f"    {python_quote(sw)}: {{")
        for item in by_name[sw]:
            if item.comment:
                lines.append(f"        # {item.comment}")
            if item.separator is not None:
                lines.append(f"        # {item.name} is a list ({one_line(repr(item.separator))}"
                             "-separated); modextravars cannot append, this overwrites it")
            lines.append(f"        {python_quote(item.name)}: {python_quote(item.value)},")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + HOOK


def parse(text: str, path: str) -> list[EnvEntry]:
    """The ``SETTINGS`` dict of a hooks file (software name -> {NAME: value}), read with
    ``ast.literal_eval``.

    :raises BadInputError: not Python syntax (line named).
    """
    import ast

    out: list[EnvEntry] = []
    for node in python_assignments(text, path, "SETTINGS", "EasyBuild hooks"):
        if not isinstance(node.value, ast.Dict):
            out.append(unreadable(path, node.lineno, "SETTINGS is not a dict literal"))
            continue
        for sw in node.value.values:
            if not isinstance(sw, ast.Dict):
                out.append(unreadable(path, sw.lineno, "SETTINGS entry is not a dict literal"))
                continue
            out += literal_dict_entries(sw, path, "SETTINGS")
    return out
