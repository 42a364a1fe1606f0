"""The libraries' own lists of names (catalogues), as lint asks for them.

The readers live with their library records: ``advisor.libraries.mpich.parse_mpivars`` (the one
``mpivars`` reader) and ``advisor.libraries.glibc.parse_glibc_tunables``; each record's
``catalogue(facts)`` runs its tool.  This module asks the installed ones for theirs.
"""

from __future__ import annotations

from typing import Mapping, Optional

from advisor.libraries import Catalogue, Library, catalogues_of
from advisor.models import Facts

__all__ = ["installed_catalogues"]


def installed_catalogues(facts: Optional[Facts] = None, *,
                         libraries: Mapping[str, Library]) -> dict[str, Catalogue]:
    """The catalogues of the libraries installed here, by library name (each record's reader
    caches per tool path): ``mpivars`` when the detected MPI is MPICH (or unknown), ``ld.so
    --list-tunables`` for glibc, and whatever registered records can list.  A tool that is
    missing or fails leaves its library out.

    :param libraries: ``Registry.libraries`` (plugin-registered records included).
    """
    return catalogues_of(libraries, facts)
