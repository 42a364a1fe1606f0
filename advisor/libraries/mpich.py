"""MPICH as a library record: CVAR names, the ``mpivars`` reader, MPL's value grammar, history.

Everything the core knows about MPICH by name lives here (the project's one ``"mpich"``):

* MPICH reads every control variable under three prefixes, ``MPIR_CVAR_``, ``MPIR_PARAM_`` and
  ``MPICH_`` (MPICH's generated ``src/util/mpir_cvars.c``; background.md section 3);
* ``mpivars`` (shipped with every MPICH build and the ``mpich`` wheel) lists the CVARs of the
  installed build with default, MPI type, description, enum choices and MPI_T category;
  ``parse_mpivars`` is the one reader of its output (lint, the mpich-cma plugin and
  ``scripts/mpich-cvar-history.py`` use it);
* MPL reads values with ``MPL_env2bool`` / ``MPL_env2int`` (``src/mpl/src/str/mpl_env.c``);
* the CVAR names of the releases 4.0 to 5.0 (``data/mpich-*.json``) with renames.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from advisor import hookimpl
from advisor.libraries.history import NameHistory
from advisor.libraries.recorded import from_history
from advisor.libraries.record import (Catalogue, CatalogueEntry, Library, Problem, ValueGrammar,
                                      size_bytes)

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.models import Facts

#: The library's name: ``Knob.library``, ``MpiFacts.implementation`` and the Python
#: distribution of the MPICH wheel.
NAME = "mpich"
#: Facts name for MPICH's two flavours (``MpiFacts.flavour``).
UPSTREAM, CRAY = "upstream", "cray"
PREFIXES = ("MPIR_CVAR_", "MPIR_PARAM_", "MPICH_")
CANONICAL_PREFIX = "MPIR_CVAR_"
#: Banners of ``MPI_Get_library_version`` that name MPICH, with the flavour they mean (the
#: library's own text; first match wins, Cray before upstream since Cray's text holds both).
BANNERS = ((re.compile(r"CRAY MPICH version\s+([0-9][\w.]*)", re.I), CRAY),
           (re.compile(r"MPICH Version\s*:\s*([0-9][\w.]*)"), UPSTREAM))

#: MPICH's process manager, the launcher family of its ``mpiexec`` (and of Intel MPI's, which
#: is derived from it: ``advisor.libraries.intelmpi``).
HYDRA = "hydra"
#: Options that make a Hydra ``mpiexec`` start its ranks on this node by itself (inside a
#: scheduler job; ``advisor.measure.launch.local_launch_args``): ``-launcher fork`` (MPICH's
#: ``mpiexec -h``: "-launcher  launcher to use (ssh rsh fork slurm ...)"; MPICH wiki "Using the
#: Hydra Process Manager", Launchers: fork starts the proxies as local processes).  Checked under
#: Slurm 22.05: without it ``mpiexec -n 2`` in a step hangs; with it the ranks start at once.
LOCAL_LAUNCH = {HYDRA: ["-launcher", "fork"]}


def launcher_family_of_path(exe: str) -> Optional[str]:
    """``HYDRA`` when ``exe`` is named ``*.hydra`` or has an ``mpiexec.hydra`` beside it (MPICH
    and Intel MPI install one), without running anything; else None."""
    if Path(exe).name.endswith(".hydra") or (Path(exe).parent / "mpiexec.hydra").exists():
        return HYDRA
    return None


def launcher_family(version_text: str) -> Optional[str]:
    """``HYDRA`` when ``mpiexec --version`` printed Hydra's "HYDRA build details", else None."""
    return HYDRA if "HYDRA" in version_text else None

#: Seconds allowed for ``mpivars`` (measured here: ~0.03 s; generous margin for loaded nodes).
MPIVARS_TIMEOUT_S = 10.0

DATA = Path(__file__).with_name("data")

_VAR = re.compile(r"^\t(MPIR_CVAR_[A-Z0-9_]+)\s*=([^\t]*)\t[^\t]*\t[^\t]*\t(MPI_[A-Z_]+)"
                  r"(?:\t[^\t]*\t?(.*))?$")
_CATEGORY = re.compile(r"^Category (\S+) has ")
_CAT_MEMBER = re.compile(r"^\t(MPIR_CVAR_[A-Z0-9_]+)\s*:")
_CHOICE = re.compile(r"^([A-Za-z0-9_]+)\s+-\s")


def parse_mpivars(text: str, source: str = "mpivars") -> Catalogue:
    """``mpivars`` output -> catalogue of CVARs: default (as printed), MPI type, description
    (with its continuation lines), enum choices (the ``choice - description`` lines after a
    variable) and MPI_T category (the trailing ``Category X has ...`` lists).  Lines it does not
    know are skipped; it never raises."""
    cat = Catalogue(NAME, source)
    fields: dict[str, dict] = {}
    current: Optional[str] = None
    category: Optional[str] = None
    for line in text.splitlines():
        m = _VAR.match(line)
        if m:
            current, category = m.group(1), None
            fields.setdefault(current, {"type": m.group(3), "default": m.group(2).strip(),
                                        "choices": [], "desc": [(m.group(4) or "").strip()],
                                        "category": None})
            continue
        c = _CATEGORY.match(line)
        if c:
            current, category = None, c.group(1)
            continue
        cm = _CAT_MEMBER.match(line)
        if cm:
            current = None
            if category is not None and cm.group(1) in fields:
                fields[cm.group(1)]["category"] = category
            continue
        if line.startswith(("\t", " ")) or not line.strip():
            current = None
            continue
        if current is not None:
            f = fields[current]
            f["desc"].append(line.strip())
            ch = _CHOICE.match(line)
            if ch:
                f["choices"].append(ch.group(1))
    for name, f in fields.items():
        cat.entries[name] = CatalogueEntry(name, f["type"], f["default"], tuple(f["choices"]),
                                           category=f["category"],
                                           description=" ".join(x for x in f["desc"] if x))
    return cat


def find_mpivars(python: Optional[str] = None) -> Optional[str]:
    """``mpivars`` next to the interpreter (a venv with the ``mpich`` wheel), else on PATH."""
    cand = Path(python or sys.executable).parent / "mpivars"
    if cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    return shutil.which("mpivars")


def run_mpivars(path: str) -> str:
    """stdout of ``mpivars`` (its exit status is not used: the listing is what counts).

    :raises OSError: it cannot be run.
    :raises subprocess.SubprocessError: it ran past ``MPIVARS_TIMEOUT_S`` seconds or printed
        nothing."""
    done = subprocess.run([path], capture_output=True, text=True, timeout=MPIVARS_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)
    if not done.stdout.strip():
        raise subprocess.SubprocessError(f"{path} printed nothing (exit {done.returncode})")
    return done.stdout


@functools.lru_cache(maxsize=None)
def _installed(path: str) -> Optional[Catalogue]:
    try:
        text = run_mpivars(path)
    except (OSError, subprocess.SubprocessError):
        return None
    cat = parse_mpivars(text, source=path)
    return cat if cat.entries else None


def catalogue(facts: Optional["Facts"]) -> Optional[Catalogue]:
    """The installed MPICH's CVARs from ``mpivars`` (cached per path), when the detected MPI is
    MPICH or unknown; None when ``mpivars`` is absent or fails."""
    if facts is not None and facts.mpi.implementation not in (None, NAME):
        return None
    path = find_mpivars()
    return _installed(path) if path else None


def version(facts: "Facts") -> Optional[str]:
    """``facts.mpi.version`` when the recorded implementation is MPICH (any flavour) or
    unrecorded; None for another MPI, so an Open MPI version never decides about CVARs."""
    impl = (facts.mpi.implementation or "").lower()
    if impl and impl != NAME:
        return None
    return facts.mpi.version


def flavour(facts: "Facts") -> Optional[str]:
    return facts.mpi.flavour if (facts.mpi.implementation or NAME) == NAME else None


#: Words MPL_env2bool accepts for a boolean CVAR, compared case-sensitively (MPICH
#: src/mpl/src/str/mpl_env.c).  Measured on MPICH 5.0.2: ``MPIR_CVAR_CH4_CMA_ENABLE=yes`` and
#: ``=true`` pass MPI_Init, ``=Yes``, ``=maybe``, ``=2`` and ``= 1`` abort it, and an integer CVAR
#: (``MPIR_CVAR_ENABLE_GPU=yes``) aborts with "Invalid character y".
MPL_BOOL_WORDS = ("YES", "yes", "TRUE", "true", "ON", "on", "1",
                  "NO", "no", "FALSE", "false", "OFF", "off", "0")
MPL_BOOL_TEXT = "1/0, yes/no, true/false or on/off, all lower or all upper case, no blanks"

#: MPL_env2int: optional blanks, optional sign, decimal digits, nothing after (mpl_env.c);
#: measured: ``16k`` and ``0x10`` abort MPI_Init ("Invalid character").
MPL_INT = re.compile(r"^[ \t\n\v\f\r]*[-+]?[0-9]*$")


class MplValues(ValueGrammar):
    """MPL's parsers: exact boolean words, decimal integers without unit suffix."""

    bool_words = MPL_BOOL_WORDS
    bool_case_sensitive = True
    bool_text = MPL_BOOL_TEXT

    def bool_problem(self, name: str, value: str) -> Optional[Problem]:
        if value in MPL_BOOL_WORDS:
            return None
        return Problem("error", f"{value!r} is not a boolean MPICH reads ({MPL_BOOL_TEXT}); "
                       "MPI_Init aborts", f"write {name}=1 or {name}=0")

    def check_listed(self, name: str, value: str, entry: CatalogueEntry, source: str,
                     knob: Optional["Knob"]) -> tuple[Optional[Problem], bool]:
        from advisor.libraries.names import suggest

        if knob is not None and knob.type == "bool" and not entry.choices:
            return self.bool_problem(name, value), True
        if entry.choices:
            if value in entry.choices:
                return None, True
            near = suggest(value, entry.choices) or [x for x in entry.choices
                                                     if x.lower() == value.lower()]
            return Problem("error", f"{value!r} is not one of the values the installed MPICH "
                           f"accepts ({', '.join(entry.choices)}); MPI_Init aborts",
                           f"write {name}={near[0]}" if near
                           else f"use one of {', '.join(entry.choices)}"), True
        if entry.type != "MPI_INT":
            return None, False
        if value == "":
            return Problem("warning", "empty value, read as 0",
                           "remove the line or give a value"), True
        if MPL_INT.match(value):
            return None, False
        if value in MPL_BOOL_WORDS:
            if knob is not None and knob.type == "bool":
                return None, True
            return Problem("warning", f"{value!r} is accepted only if this control variable is a "
                           f"boolean (MPICH's MPL_env2bool); the installed MPICH lists it as "
                           f"MPI_INT, and an integer variable aborts MPI_Init on it",
                           f"write {name}={1 if value.lower() in ('yes', 'true', 'on') else 0}, "
                           "which both parsers accept"), True
        size = size_bytes(value)
        if size is not None:
            return Problem("error", f"{value!r}: the value must be a plain integer number of "
                           "bytes; MPICH reads no unit suffix and MPI_Init aborts "
                           "(\"Invalid character\")", f"write {name}={size}"), True
        return Problem("error", f"{value!r} is not an integer the installed MPICH accepts "
                       "(decimal digits only); MPI_Init aborts",
                       f"give a decimal integer (default {entry.default or '?'}; {source})"), True

    def same(self, value: str, default: Optional[str]) -> bool:
        if default is None:
            return False
        if value == default:
            return True
        if MPL_INT.match(value) and MPL_INT.match(default) and value.strip() and default.strip():
            return int(value) == int(default)
        return False


@functools.lru_cache(maxsize=1)
def history() -> NameHistory:
    """The committed CVAR names of MPICH 4.0-5.0 (``data/mpich-*.json``)."""
    return NameHistory.load(NAME, DATA, "mpich-[0-9]*.json")


def record() -> Library:
    return Library(
        name=NAME, prefixes=PREFIXES, canonical_prefix=CANONICAL_PREFIX,
        weak_prefixes=("MPICH_",), version=version, flavour=flavour, version_field="mpi.version",
        catalogue_flavours=(UPSTREAM,), catalogue=catalogue, values=MplValues(),
        history=history(), recorded=from_history(history()), list_tool="mpivars",
        description="MPICH control variables (CVARs)",
        packages=(("spack", "mpich"), ("easybuild", "MPICH")),
        source="MPICH src/util/mpir_cvars.c, src/mpl/src/str/mpl_env.c; mpivars")


@hookimpl
def advisor_register_libraries(register):
    register(record())
