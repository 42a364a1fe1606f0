"""The MPI module an ``lmod``/``tcl`` module depends on: which one, and how each tool says so.

Which MPI: every MPI library whose settings the module writes (a library whose record reads
its version from ``mpi.version``: MPICH, Open MPI), the one the profile was measured with
(``facts.mpi.implementation``) first.  A module that writes no MPI setting (only glibc's or a
pool's) depends on no MPI module: nothing it sets is read by MPI, so it loads beside any.  Its module name is the site's
(``[modules] mpi.LIBRARY``, ``emit --mpi-module LIBRARY=NAME``), else ``LIBRARY/VERSION`` from
the recorded version (``mpich/5.0.2``; ``LIBRARY`` alone when no version is recorded).

How (``ModuleDeps.dependency``), per tool, each checked by loading the module in the real tool
(tests/emit/test_module_deps.py):

- ``prereq``: Lmod ``prereq(NAME)`` (Lmod documentation, "Lua Modulefile Functions": loading
  fails until NAME is loaded); Tcl ``prereq NAME`` (modulefile(4), ``prereq``; the man page
  of the Debian package of Environment Modules 5.2.0).  Environment Modules 5 with
  ``auto_handling`` on (its default since 5.0, NEWS) loads NAME itself when it can;
- ``depends_on``: Lmod ``depends_on(NAME)`` (loads NAME, unloads it with the module when
  Lmod loaded it).  Tcl: under Lmod (``$ModuleTool`` is ``Lmod``, set by ``tcl2lua.tcl``;
  ``Modules`` in Environment Modules >= 4.7, modulefile(4) "Modules variables")
  ``depends-on NAME``, which Lmod reads as ``depends_on``; under Environment Modules
  ``module load NAME``: a pre-requirement that is loaded whether ``auto_handling`` is on or
  off, where ``depends-on`` (5.1+) must be loaded by hand with it off (modulefile(4) of
  Environment Modules 5.2, "Dependencies between modulefiles"); it is unloaded with the module
  only when it was loaded for it (seen with 5.2.0);
- ``family``: the module loaded as the member of the site's MPI family (``family("MPI")`` in
  the MPI module; both tools export its name as ``LMOD_FAMILY_<FAMILY>``: Lmod ``MT.lua``,
  Environment Modules ``proc family``) must be NAME without its last ``/VERSION`` part, any
  version: checked on load only, with ``LmodError``/``reportError``;
- ``none``: nothing.

Settings of two MPI libraries (MPICH's CVARs and Open MPI's MCA variables are inert in the
other) need either MPI, not both: ``prereq_any(A, B)`` (Lmod), ``prereq A B`` (Tcl: an OR in
Environment Modules, ``prereq_any`` in Lmod's ``tcl2lua.tcl``).  ``depends_on`` cannot choose
one to load (Lmod 8.6 has no ``depends_on_any``, Tcl ``depends-on`` is an AND), so it is written
as that ``prereq`` too, and the administrators' comment says so.

Names are data, never code: ``advisor.config.schema.MODULE_NAME`` admits letters, digits,
``_ . -`` and ``/`` between parts that start with a letter, digit or ``_`` (no ``..``, no
option, nothing Lua or Tcl would read, none of the ``+ ~ =`` Environment Modules reads as a
variant: modulefile(4), "Advanced module version specifiers"), and the family
``FAMILY_NAME`` (Environment Modules 5.2 ``proc family``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from packaging.utils import canonicalize_name

from advisor.config.schema import FAMILY_NAME, MODULE_NAME
from advisor.errors import EmitError
from advisor.formats.quoting import lua_quote, tcl_quote
from advisor.specs.writing import one_line

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection
    from advisor.specs.writing import EnvItem

#: The ``Facts`` field an MPI library's record reads its version from (``Library.version_field``).
MPI_VERSION_FIELD = "mpi.version"


def mpi_modules(sel: "Selection", items: Sequence["EnvItem"]) -> list[tuple[str, str]]:
    """``(library, module name)`` of each MPI the module depends on (module docstring): the
    MPI libraries whose settings ``items`` write, the measured one first, then by name.

    :raises EmitError: a ``[modules] mpi`` key that names no MPI library of the loaded
        plugins (a misspelt ``mpichh``); a name that is not a ``MODULE_NAME`` (a recorded
        version such as ``5.0 beta``), with the setting that fixes it; not with dependency
        ``none``, which writes the names only in a comment (``one_line``).
    """
    from advisor.libraries import version_of

    deps = sel.options.modules
    facts, libs = sel.profile.facts, sel.libraries
    measured = canonicalize_name(facts.mpi.implementation or "")
    written = {canonicalize_name(src.setting.library) for item in items
               for src in item.sources}
    chosen = [lib for lib in ([measured] if measured in written else []) + sorted(
        written - {measured}) if getattr(libs.get(lib), "version_field", None) == MPI_VERSION_FIELD]
    names = dict(deps.mpi)
    known = sorted(n for n, lib in libs.items()
                   if getattr(lib, "version_field", None) == MPI_VERSION_FIELD)
    unknown = sorted(set(names) - set(known))
    if unknown:  # a misspelt library would leave the default name in silently
        raise EmitError(f"[modules] mpi / --mpi-module names {', '.join(unknown)}: not an MPI "
                        f"library of the loaded plugins (known: {', '.join(known)})")
    out = []
    for lib in chosen:
        version = version_of(facts, lib, libs) if lib in libs else facts.mpi.version
        name = names.get(lib) or (f"{lib}/{version}" if version else lib)
        if deps.dependency != "none" and not re.fullmatch(MODULE_NAME, name):
            raise EmitError(f"MPI module name {name!r} (from the recorded {lib} version) is "
                            "not a plain module name; set it in the site config "
                            f"([modules] mpi.{lib}) or with --mpi-module {lib}=NAME, or "
                            "write no dependency (--module-dependency none)")
        out.append((lib, name))
    return out


def _form(sel: "Selection", mpis: Sequence[tuple[str, str]]) -> str:
    """The dependency form written: ``none`` without an MPI; ``prereq`` for ``depends_on``
    with two MPIs (module docstring)."""
    form = sel.options.modules.dependency if mpis else "none"
    return "prereq" if form == "depends_on" and len(mpis) > 1 else form


def _family_test(sel: "Selection", mpis: Sequence[tuple[str, str]]) -> tuple[str, list[str], str]:
    family = sel.options.modules.family
    if not re.fullmatch(FAMILY_NAME, family):
        raise EmitError(f"MPI family name {family!r} is not a family name "
                        f"({FAMILY_NAME}); set [modules] family in the site config")
    wanted = [name.rsplit("/", 1)[0] if "/" in name else name for _, name in mpis]
    why = (f"this module needs {' or '.join(wanted)} loaded as the {family} family's module "
           f"(module load {mpis[0][1]})")
    return f"LMOD_FAMILY_{family.upper()}", wanted, why


#: The lines of each form per language (``str.format`` fields: ``names``, the quoted module
#: names; for ``family``: ``var``, the quoted family variable, ``wanted``, the quoted names
#: it may hold, ``test``, Lua's test of them, and ``why``, the quoted refusal).
_LINES = {
    "lua": {"prereq": ["prereq({names})"], "prereq_any": ["prereq_any({names})"],
            "depends_on": ["depends_on({names})"],
            "family": ['local got = os.getenv({var}) or ""',
                       'if mode() == "load" and {test} then', "    LmodError({why})", "end"]},
    "tcl": {"prereq": ["prereq {names}"], "prereq_any": ["prereq {names}"],
            "depends_on": ["if {{[info exists ModuleTool] && $ModuleTool eq {{Lmod}}}} {{",
                           "    depends-on {names}", "}} else {{", "    module load {names}",
                           "}}"],
            "family": ["if {{[module-info mode load]}} {{", "    set got {{}}",
                       "    if {{[info exists ::env({var})]}} {{ set got $::env({var}) }}",
                       "    if {{$got ni [list {wanted}]}} {{", "        reportError {why}",
                       "        break", "    }}", "}}"]},
}


def dependency_lines(sel: "Selection", mpis: Sequence[tuple[str, str]],
                     lang: str) -> list[str]:
    """The lines that declare the dependency in ``lang`` (``lua``: Lmod, ``tcl``: Environment
    Modules), none for ``none`` (module docstring)."""
    form = _form(sel, mpis)
    if form == "none":
        return []
    if form == "prereq" and len(mpis) > 1:
        form = "prereq_any"
    quote, sep = (lua_quote, ", ") if lang == "lua" else (tcl_quote, " ")
    fields = {"names": sep.join(quote(name) for _, name in mpis)}
    if form == "family":
        var, wanted, why = _family_test(sel, mpis)
        fields.update(var=var if lang == "tcl" else quote(var), why=quote(why),
                      wanted=" ".join(quote(w) for w in wanted),
                      test=" and ".join(f"got ~= {quote(w)}" for w in wanted))
    return [line.format(**fields) for line in _LINES[lang][form]]


def user_line(sel: "Selection", mpis: Sequence[tuple[str, str]]) -> str:
    """What a user must know of the dependency, one line ("" without one)."""
    form = _form(sel, mpis)
    names = " or ".join(name for _, name in mpis)
    if form == "prereq":
        return f"Load the MPI module {names} first: this module was measured with it."
    if form == "depends_on":
        return f"Loading this module also loads the MPI module {names}, measured with it."
    if form == "family":
        return f"Needs the MPI module {names} (or another version of it) loaded first."
    return ""


def profile_word(source: str) -> str:
    """``@NAME`` for a shipped profile (found wherever hpc-advisor is installed), else the
    absolute path of the file emit read: a module's help is read from any directory (a new
    user's finding: ``-p out/profile.toml`` from ``emit -p out/profile.toml``)."""
    import os

    from advisor.shipped import shipped_names, shipped_path

    for name in shipped_names():
        try:
            if Path(source).resolve() == shipped_path(name).resolve():
                return f"@{name}"
        except OSError:
            continue
    return os.path.abspath(source)


def _profile_option(sel: "Selection") -> str:
    """`` -p WORD`` naming the profile the module was made from (``profile_word``),
    or ``""`` when emit read no file."""
    import shlex

    source = getattr(sel, "source", None)
    return f" -p {shlex.quote(profile_word(source))}" if source else ""


def admin_lines(sel: "Selection", mpis: Sequence[tuple[str, str]], fmt: str) -> list[str]:
    """The administrators' comment block (no comment marker): the dependency and where it
    comes from, and how to re-probe, regenerate and deploy."""
    from advisor.machine_class import class_id

    form, asked = _form(sel, mpis), sel.options.modules.dependency
    names = ", ".join(f"{name} ({lib})" for lib, name in mpis) or "none"
    dep = f"MPI module: {names}; dependency: {form}"
    if form != asked:
        dep += (f" (asked: {asked}; two MPIs: a user loads either, which depends_on cannot "
                "choose)" if mpis else f" (asked: {asked}; this module writes no MPI setting, "
                "so it loads beside any MPI)")
    where = "MODULEPATH directory as NAME.lua" if fmt == "lmod" else "MODULEPATH directory " \
            "as NAME (the #%Module file)"
    return ["For site administrators (module help shows users only what the module sets):",
            "  " + one_line(dep) + ".",
            "  The MPI module's name and the form come from the site config ([modules] mpi,",
            "  dependency, family) or emit --mpi-module LIBRARY=NAME / --module-dependency.",
            "  Re-probe after a change of the nodes, kernel or MPI: advisor probe on a node of",
            f"  class {class_id(sel.profile.facts)}, then advisor verify.",
            f"  Regenerate: advisor emit -f {fmt}{_profile_option(sel)} -o FILE; deploy FILE "
            f"in a {where}",
            "  (docs/deploy.md)."]
