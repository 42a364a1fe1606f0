"""Environment Modules modulefiles (format ``tcl``, first line ``#%Module``).

``proc ModulesHelp`` (``module help``), ``module-whatis`` lines and the family ``hpc_advisor``
(:mod:`advisor.formats.modhelp`); ``family`` exists in Environment Modules >= 5.1 only, so it is
called when the interpreter has it.  The administrators' comment block and the dependency on
the measured MPI module: :mod:`advisor.formats.moddeps`.  Nothing to set is an ``EmitError``,
as for ``lmod``.

``setenv NAME "value"``; list variables ``append-path -d SEP NAME "item"`` (modulefile(5):
``append-path [-d C|--delim C] ...``, Modules >= 4.0).  ``module unload`` undoes both.  Values
Environment Modules would mangle for some shell (``advisor.formats.quoting.MODULE_MANGLED``)
are refused.  ``parse`` splits words with Tcl's own parser (:mod:`advisor.formats.shellread`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.specs.writing import EnvItem, item_file
from advisor.specs.entry import EnvEntry
from advisor.formats.lmod import module_items
from advisor.formats.quoting import tcl_quote
from advisor.formats.shellread import parse_shell

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "tcl"
DESCRIPTION = "Environment Modules modulefile (Tcl)"
EXTENSION = ""

#: The file suffixes ``advisor lint --format auto`` reads as this format.
SUFFIXES = (".tcl",)
#: The ``#%Module`` cookie decides over the suffix: the module tools read no file without it
#: (modulefile(5): a file without the cookie is not a modulefile).
SNIFF_OVER_SUFFIX = True


def sniff(text: str) -> bool:
    """Whether ``text`` is an Environment Modules modulefile (starts with ``#%Module``)."""
    return text.lstrip().startswith("#%Module")


def _item(item: EnvItem) -> list[str]:
    if item.separator is None:
        return [f"setenv {item.name} {tcl_quote(item.value)}"]
    return [f"append-path -d {tcl_quote(item.separator)} {item.name} {tcl_quote(item.value)}"]


def render(sel: "Selection") -> str:
    """An Environment Modules modulefile with the administrators' comment, help, whatis,
    family and the dependency on the measured MPI module (:mod:`advisor.formats.moddeps`).

    :raises EmitError: a value the module command would mangle for some shell; nothing to
        set; an MPI module name that is not a plain name.
    """
    from advisor.formats.moddeps import admin_lines, dependency_lines, mpi_modules
    from advisor.formats.modhelp import FAMILY, help_lines, whatis_lines

    items = module_items(sel, NAME)
    mpis = mpi_modules(sel, items)
    pre = [""] + [f"# {line}" for line in admin_lines(sel, mpis, NAME)]
    pre += ["", "proc ModulesHelp {} {"]
    pre += [f"    puts stderr {tcl_quote(line)}" for line in help_lines(sel, items, mpis)]
    pre += ["}", ""]
    pre += [f"module-whatis {tcl_quote(line)}" for line in whatis_lines(sel.profile, items)]
    pre.append(f"if {{[info commands family] ne {{}}}} {{ family {FAMILY} }}")
    pre += dependency_lines(sel, mpis, "tcl")
    return item_file(sel, _item, head=["#%Module1.0"], preamble=pre, fmt=NAME,
                     items=items)


def parse(text: str, path: str) -> list[EnvEntry]:
    """The settings of a Tcl modulefile, in file order."""
    return parse_shell(text, path, tcl=True)
