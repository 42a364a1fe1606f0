"""Libraries as a seam: one ``Library`` record per library the advisor knows.

Records are registered through ``advisor_register_libraries`` (``advisor.hookspecs``).  The
built-in ones are core modules listed in ``advisor.plugins.BUILTIN_HOOK_MODULES``
(``BUILTIN_MODULES`` here), so a user can block one by name like any plugin:

* ``advisor.libraries.mpich`` - CVARs, ``mpivars``, MPL values, CVAR history 4.0-5.0;
* ``advisor.libraries.glibc`` - ``GLIBC_TUNABLES``, ``ld.so --list-tunables``, strtoul numbers;
* ``advisor.libraries.openmpi`` - ``OMPI_MCA_`` parameters, the vader -> sm rename;
* ``advisor.libraries.cupy`` and ``advisor.libraries.dla_future`` - name families and versions;
* ``advisor.libraries.families`` - families with no list of names (PRRTE, PMIx, libfabric,
  Umpire), so lint can say it did not check them;
* ``advisor.libraries.recorded`` - catalogues recorded per release from the wheels.

The MPI libraries' modules also say how each MPI names itself (its ``MPI_Get_library_version``
banners, read by ``advisor.facts.mpi``) and how its launcher is recognised and started locally
(read by ``advisor.measure.launch``); ``intelmpi`` and ``mvapich`` do only that (no record yet),
and ``ompi_info`` is Open MPI's one ``ompi_info`` reader.

``version_of`` is the one answer to "which version of library X is here".
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Mapping, Optional

from packaging.utils import canonicalize_name

from advisor.libraries.record import (Catalogue, CatalogueEntry, Library, Problem,
                                      ValueGrammar, python_package_version)

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Facts

__all__ = ["Library", "Catalogue", "CatalogueEntry", "Problem", "ValueGrammar",
           "python_package_version", "BUILTIN_MODULES", "builtin_libraries", "version_of",
           "library_of_env", "catalogues_of"]

#: The core modules that register the built-in library records.
BUILTIN_MODULES = ("advisor.libraries.mpich", "advisor.libraries.glibc",
                   "advisor.libraries.openmpi", "advisor.libraries.cupy",
                   "advisor.libraries.dla_future", "advisor.libraries.families")


def builtin_libraries() -> dict[str, Library]:
    """The built-in records by name (each module's ``record()``, the same the plugin manager
    registers), for what describes the built-in formats themselves (``advisor.formats``) and
    for tests.  Never a stand-in for a missing registry: every caller that judges settings
    takes ``Registry.libraries``, so plugin-registered records are seen."""
    out: dict[str, Library] = {}
    for modname in BUILTIN_MODULES:
        mod = importlib.import_module(modname)
        for rec in (mod.records() if hasattr(mod, "records") else (mod.record(),)):
            out[rec.name] = rec
    return out


def version_of(facts: Optional["Facts"], name: str,
               libraries: Mapping[str, Library]) -> Optional[str]:
    """The version of library ``name`` recorded in ``facts``, or None when unknown.

    The library's record in ``libraries`` answers (``Library.version``; ``Registry.libraries``,
    plugin-registered records included).  A library without a record is looked up in
    ``facts.python_packages`` by PEP 503 normalised name (``DLA_Future`` and ``dla-future`` are one library).  A record whose
    ``version`` raises answers None (a plugin's bug must not stop emit or lint).
    """
    if facts is None:
        return None
    key = canonicalize_name(name)
    lib = libraries.get(key)
    if lib is not None:
        try:
            v = lib.version(facts)
        except Exception:  # a third-party record's bug: the version is unknown
            return None
        return str(v) if v else None
    for pkg, version in facts.python_packages.items():
        if canonicalize_name(pkg) == key:
            return version
    return None


def library_of_env(env_name: str, libraries: Mapping[str, Library]) -> Optional[Library]:
    """The library whose naming family holds ``env_name`` (longest prefix wins), or whose list
    variable it is; None when no record claims it."""
    best: Optional[tuple[int, Library]] = None
    for lib in libraries.values():
        if lib.list_variable == env_name:
            return lib
        p = lib.prefix_of(env_name)
        if p and (best is None or len(p) > best[0]):
            best = (len(p), lib)
    return best[1] if best else None


def catalogues_of(libraries: Mapping[str, Library],
                  facts: Optional["Facts"] = None) -> dict[str, Catalogue]:
    """Each library's own list of names (``Library.catalogue``), for those that can be asked
    here; a reader that returns None or raises leaves its library out."""
    out: dict[str, Catalogue] = {}
    for name, lib in libraries.items():
        if lib.catalogue is None:
            continue
        try:
            cat = lib.catalogue(facts)
        except Exception:  # a third-party reader's bug: no list for that library
            cat = None
        if cat is not None and cat.entries:
            out[name] = cat
    return out
