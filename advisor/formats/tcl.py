"""Environment Modules modulefiles (format ``tcl``, first line ``#%Module``).

``setenv NAME "value"``; list variables ``append-path -d SEP NAME "item"`` (modulefile(5):
``append-path [-d C|--delim C] ...``, Modules >= 4.0).  ``module unload`` undoes both.  Values
Environment Modules would mangle for some shell (``advisor.formats.quoting.MODULE_MANGLED``)
are refused.  ``parse`` splits words with Tcl's own parser (:mod:`advisor.formats.shellread`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.formats.common import EnvItem, env_items, item_file, refuse_unsafe
from advisor.formats.entry import EnvEntry
from advisor.formats.lmod import MODULE_ADVICE
from advisor.formats.quoting import module_unsafe, tcl_quote
from advisor.formats.shellread import parse_shell

if TYPE_CHECKING:  # pragma: no cover
    from advisor.emit import EmitOptions
    from advisor.models import Profile

NAME = "tcl"
DESCRIPTION = "Environment Modules modulefile (Tcl)"
EXTENSION = ""


def _item(item: EnvItem) -> list[str]:
    if item.separator is None:
        return [f"setenv {item.name} {tcl_quote(item.value)}"]
    return [f"append-path -d {tcl_quote(item.separator)} {item.name} {tcl_quote(item.value)}"]


def render(profile: "Profile", options: "EmitOptions") -> str:
    """An Environment Modules modulefile.

    :raises EmitError: a value the module command would mangle for some shell.
    """
    refuse_unsafe(env_items(profile, options), module_unsafe, MODULE_ADVICE)
    whatis = tcl_quote("Runtime settings measured by hpc-advisor for " + profile.fingerprint)
    return item_file(profile, options, _item, head=["#%Module1.0"],
                     preamble=["", f"module-whatis {whatis}"])


def parse(text: str, path: str) -> list[EnvEntry]:
    """The settings of a Tcl modulefile, in file order."""
    return parse_shell(text, path, tcl=True)
