"""The libraries' own lists of names (catalogues): ``mpivars`` for MPICH, ``ld.so --list-tunables`` for glibc."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from advisor.glibc import find_ld_so, parse_list_tunables
from advisor.models import Facts

#: Seconds allowed for ``mpivars`` / ``ld.so --list-tunables`` (each ~0.03 s here).
TOOL_TIMEOUT_S = 10.0



@dataclass(frozen=True)
class CatalogueEntry:
    """One name of a library's own list.  ``type``: the library's type word (``MPI_INT``,
    ``MPI_CHAR``, ``number``, ``string``); ``choices``: enum values listed with it."""

    name: str
    type: Optional[str] = None
    default: Optional[str] = None
    choices: tuple[str, ...] = ()
    minimum: Optional[int] = None
    maximum: Optional[int] = None


@dataclass
class Catalogue:
    """The names a library installed here says it reads, from its own tool (``source``)."""

    library: str
    source: str
    entries: dict[str, CatalogueEntry] = field(default_factory=dict)


_MPIVARS_VAR = re.compile(r"^\s+(MPIR_CVAR_[A-Z0-9_]+)\s*=([^\t]*)\t[^\t]*\t[^\t]*\t(MPI_[A-Z_]+)")
_MPIVARS_CHOICE = re.compile(r"^([A-Za-z0-9_]+)\s+-\s")


def parse_mpivars(text: str, source: str = "mpivars") -> Catalogue:
    """``mpivars`` output -> catalogue of CVARs with default, MPI type and enum choices (the
    ``choice - description`` lines that follow a variable)."""
    cat = Catalogue("mpich", source)
    current: Optional[str] = None
    choices: list[str] = []

    def flush() -> None:
        if current is not None and choices:
            e = cat.entries[current]
            cat.entries[current] = CatalogueEntry(e.name, e.type, e.default, tuple(choices))

    for line in text.splitlines():
        m = _MPIVARS_VAR.match(line)
        if m:
            flush()
            name = m.group(1)
            choices = []
            if name in cat.entries:  # the trailing summary repeats names
                current = None
                continue
            cat.entries[name] = CatalogueEntry(name, m.group(3), m.group(2).strip())
            current = name
            continue
        if line.startswith(("\t", " ")):
            flush()
            current, choices = None, []
            continue
        c = _MPIVARS_CHOICE.match(line)
        if c and current is not None:
            choices.append(c.group(1))
    flush()
    return cat


def parse_glibc_tunables(text: str, source: str = "ld.so --list-tunables") -> Catalogue:
    """``ld.so --list-tunables`` output (glibc >= 2.33) -> catalogue with min/max
    (``advisor.glibc.parse_list_tunables``)."""
    cat = Catalogue("glibc", source)
    for name, t in parse_list_tunables(text).items():
        numeric = t.min is not None
        cat.entries[name] = CatalogueEntry(name, "number" if numeric else "string",
                                           t.text, (), t.min, t.max)
    return cat


def find_mpivars(python: Optional[str] = None) -> Optional[str]:
    """``mpivars`` next to the interpreter (a venv with the ``mpich`` wheel), else on PATH."""
    cand = Path(python or sys.executable).parent / "mpivars"
    if cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    return shutil.which("mpivars")


@functools.lru_cache(maxsize=None)
def _run_tool(argv: tuple[str, ...]) -> Optional[str]:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.stdout.strip() else None


def installed_catalogues(facts: Optional[Facts] = None) -> dict[str, Catalogue]:
    """The catalogues of the libraries installed here (cached per process): ``mpich`` from
    ``mpivars`` when the detected MPI is MPICH (or unknown), ``glibc`` from ``ld.so
    --list-tunables``.  A tool that is missing or fails leaves its library out."""
    out: dict[str, Catalogue] = {}
    impl = facts.mpi.implementation if facts is not None else None
    mv = find_mpivars()
    if mv and impl in (None, "mpich"):
        text = _run_tool((mv,))
        if text:
            cat = parse_mpivars(text, source=mv)
            if cat.entries:
                out["mpich"] = cat
    ld = find_ld_so()
    if ld:
        text = _run_tool((ld, "--list-tunables"))
        if text:
            cat = parse_glibc_tunables(text, source=f"{ld} --list-tunables")
            if cat.entries:
                out["glibc"] = cat
    return out

