"""The checks of ``advisor lint``: names, values, versions, duplicates, and the probes' own ``lint``."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from advisor.glibc import parse_number
from advisor.knobs import Knob, version_in
from advisor.models import Facts, Finding
from advisor.lint.read import ENV_PATH, EnvEntry, _scalar_text, resolve_env
from advisor.lint.catalogue import Catalogue, CatalogueEntry
from advisor.lint.report import LintFinding

#: ``difflib.SequenceMatcher.ratio`` of the name's suffix (family prefix removed) above which a
#: listed name is offered as "did you mean".  Measured on the cvar-typos case against the 465
#: CVARs of MPICH 5.0.2: the intended names score 0.89 (OFI_ENABLE_TAGGED -> CH4_OFI_ENABLE_TAGGED)
#: to 0.98 (TRESHOLD -> THRESHOLD); unrelated names such as FOO_BAR score below 0.6.
SUGGEST_CUTOFF = 0.8

#: Similarity from which a name outside every family is reported as a slip of a registered
#: knob's name (``difflib`` ratio, same first ``_`` word).  Measured against the knob records
#: of the built-in plugins: slips score 0.96-0.99 (GLIBC_TUNABLE, CUPY_GPU_MEMORY_LIMITS,
#: VENDOR_COPY_MOD for a plugin's VENDOR_COPY_MODE); this machine's environment and common HPC
#: variables (SLURM_*, OMP_*, CUDA_*, CUPY_CACHE_DIR, UCX_TLS, ...) score 0.46 at most.
NEAR_KNOB_CUTOFF = 0.9
MAX_SUGGESTIONS = 3

#: MPICH reads every control variable under three prefixes (MPICH's generated mpir_cvars.c;
#: background.md section 3).
MPICH_PREFIXES = ("MPIR_CVAR_", "MPIR_PARAM_", "MPICH_")

#: Words MPL_env2bool accepts for a boolean CVAR, compared case-sensitively (MPICH
#: src/mpl/src/str/mpl_env.c).  Measured on MPICH 5.0.2: ``MPIR_CVAR_CH4_CMA_ENABLE=yes`` and
#: ``=true`` pass MPI_Init, ``=Yes``, ``=maybe``, ``=2`` and ``= 1`` abort it, and an integer CVAR
#: (``MPIR_CVAR_ENABLE_GPU=yes``) aborts with "Invalid character y".
MPL_BOOL_WORDS = ("YES", "yes", "TRUE", "true", "ON", "on", "1",
                  "NO", "no", "FALSE", "false", "OFF", "off", "0")
_MPL_BOOL_TEXT = "1/0, yes/no, true/false or on/off, all lower or all upper case, no blanks"

#: MPL_env2int: optional blanks, optional sign, decimal digits, nothing after (mpl_env.c);
#: measured: ``16k`` and ``0x10`` abort MPI_Init ("Invalid character").
_MPL_INT = re.compile(r"^[ \t\n\v\f\r]*[-+]?[0-9]*$")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KkMmGgTt])(i?[Bb])?\s*$")
_SIZE_FACTOR = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


@dataclass(frozen=True)
class Family:
    """A naming family: variables with these prefixes belong to ``library``."""

    library: str
    prefixes: tuple[str, ...]
    #: True when the installed library's own list (a catalogue) is complete for the family, so a
    #: name outside it is certainly ignored.
    listed_by: Optional[str] = None


#: Families lint knows.  MPICH: mpivars; glibc: tunables inside GLIBC_TUNABLES (glibc manual,
#: "Tunables"); DLA-Future reads ``DLAF_<NAME>`` (eth-cscs/DLA-Future src/init.cpp); CuPy reads
#: ``CUPY_*`` (docs.cupy.dev, "Environment variables"); Open MPI reads MCA parameters as
#: ``OMPI_MCA_<name>`` (Open MPI docs, "Setting MCA parameter values").
FAMILIES: tuple[Family, ...] = (
    Family("mpich", MPICH_PREFIXES, listed_by="mpivars"),
    Family("dla-future", ("DLAF_",)),
    Family("cupy", ("CUPY_",)),
    Family("openmpi", ("OMPI_MCA_",)),
)
GLIBC_TUNABLES = "GLIBC_TUNABLES"


#: Open MPI knob records lint carries itself (no built-in plugin covers Open MPI yet).  Source:
#: docs.open-mpi.org v5.0.x "Shared Memory" (the vader BTL was renamed sm in 5.0.0; vader_
#: parameters are only aliases in 5.0.x, "will likely disappear"; single copy moved to the smsc
#: framework: xpmem, cma, knem) and background.md section 3.
_OMPI_SM_DOC = ("docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/shared-memory.html; "
                "Open MPI v5.0.0 release notes")
OPENMPI_KNOBS: tuple[Knob, ...] = (
    Knob(library="openmpi", name="OMPI_MCA_btl_vader_single_copy_mechanism", type="enum",
         allowed=["cma", "xpmem", "knem", "none"], versions="<5", renamed_to="OMPI_MCA_smsc",
         description="Open MPI <= 4.1 single-copy mechanism of the vader BTL; 5.x selects it "
                     "with the smsc framework (OMPI_MCA_smsc=cma|xpmem|knem)",
         source=_OMPI_SM_DOC),
    Knob(library="openmpi", name="OMPI_MCA_smsc", type="str", versions=">=5",
         description="Open MPI 5 single-copy framework selection (cma, xpmem, knem; ^name "
                     "excludes)", source=_OMPI_SM_DOC),
)
#: Open MPI 5.0 renamed every ``btl_vader_*`` parameter to ``btl_sm_*`` (same source).
OPENMPI_RENAMED_PREFIXES = (("OMPI_MCA_btl_vader_", "OMPI_MCA_btl_sm_", "5"),)



# --------------------------------------------------------------------------- checks


def library_version(facts: Optional[Facts], library: str) -> Optional[str]:
    """The detected version of ``library`` (mpich/openmpi from the MPI facts, glibc from the
    kernel facts, others from ``Facts.python_packages``), or None when unknown."""
    if facts is None:
        return None
    if library in ("mpich", "openmpi", "intelmpi"):
        return facts.mpi.version if facts.mpi.implementation == library else None
    if library == "glibc":
        return facts.kernel.glibc_version
    return facts.python_packages.get(library)


def _family(name: str) -> Optional[Family]:
    for fam in FAMILIES:
        if name.startswith(fam.prefixes):
            return fam
    return None


def _mpich_canonical(name: str) -> str:
    for p in MPICH_PREFIXES:
        if name.startswith(p):
            return "MPIR_CVAR_" + name[len(p):]
    return name


def _suggest(name: str, candidates: Iterable[str], prefix: str = "") -> list[str]:
    """Near misses of ``name`` among ``candidates`` compared without the shared ``prefix``."""
    strip = len(prefix) if prefix and name.startswith(prefix) else 0
    key = name[strip:]
    pool = {}
    for c in candidates:
        if c == name:
            continue
        pool[c[len(prefix):] if prefix and c.startswith(prefix) else c] = c
    got = difflib.get_close_matches(key, list(pool), n=MAX_SUGGESTIONS, cutoff=SUGGEST_CUTOFF)
    return [pool[g] for g in got]


def _size_bytes(text: str) -> Optional[int]:
    m = _SIZE.match(text)
    if not m:
        return None
    return int(float(m.group(1)) * _SIZE_FACTOR[m.group(2).lower()])


def _short(value: str, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters with the full length said (a 200 kB value
    must not become a 200 kB finding)."""
    r = repr(value)
    return r if len(r) <= limit else f"{r[:limit - 3]}...' ({len(value)} characters)"


def _as_number(text: str, typ: str, library: str = "") -> Optional[float]:
    """The number ``text`` means to ``library``: glibc reads tunables with ``strtoul(..., 0)``
    (decimal, 0x hex, 0 octal; glibc manual "Tunables"), others plain decimal integers."""
    t = text.strip()
    try:
        if typ in ("int", "bytes"):
            if library == "glibc":
                return float(int(t, 0)) if not t.startswith(("0o", "0b")) else None
            return float(int(t, 10))
        return float(t)
    except ValueError:
        return None


class _Checker:
    def __init__(self, facts: Optional[Facts], knobs: Sequence[Knob],
                 catalogues: Mapping[str, Catalogue]) -> None:
        self.facts = facts
        self.catalogues = catalogues
        self.by_name: dict[str, list[Knob]] = {}
        for k in knobs:
            if k.kind != "env" and k.separator is None:
                continue
            for n in [k.name, *k.aliases]:
                self.by_name.setdefault(n, []).append(k)
        self.out: list[LintFinding] = []

    # ---- helpers
    def add(self, e: EnvEntry, fid: str, severity: str, message: str,
            remedy: Optional[str] = None, name: Optional[str] = None) -> None:
        self.out.append(LintFinding(Finding(id=fid, severity=severity, message=message,
                                            remedy=remedy), e.path, e.line, name or e.name))

    def knob_for(self, name: str, library: Optional[str] = None) -> Optional[Knob]:
        cands = self.by_name.get(name, [])
        if library:
            cands = [k for k in cands if k.library == library] or cands
        flav = self.facts.mpi.flavour if self.facts is not None else None
        for k in cands:
            if k.flavour is None or flav is None or k.flavour == flav:
                return k
        return cands[0] if cands else None

    def near_knob(self, e: EnvEntry) -> None:
        """A name outside every known family that is one slip away from a registered knob
        (a plugin's own ``VENDOR_`` knobs have no family): a warning with the suggestion.
        Strict, since any variable may stand here: same first ``_`` word, and a similarity of
        at least ``NEAR_KNOB_CUTOFF``."""
        head = e.name.split("_", 1)[0]
        pool = [n for n, ks in self.by_name.items()
                if n.split("_", 1)[0] == head and n != e.name and any(k.kind == "env" for k in ks)]
        near = difflib.get_close_matches(e.name, pool, n=1, cutoff=NEAR_KNOB_CUTOFF)
        if near:
            k = self.by_name[near[0]][0]
            self.add(e, "unknown-name", "warning",
                     f"{e.name}: no library reads this name; did you mean {near[0]} "
                     f"({k.library})?", f"rename to {near[0]}")

    def names_of(self, library: str) -> set[str]:
        out = {n for n, ks in self.by_name.items() if any(k.library == library for k in ks)}
        cat = self.catalogues.get(library)
        if cat is not None:
            out |= set(cat.entries)
        return out

    # ---- per entry
    def entry(self, e: EnvEntry) -> None:
        if e.problem is not None:
            self.add(e, "unreadable-line", "error", f"cannot read this line as a setting: "
                     f"{e.problem}; nothing on it is checked",
                     "rewrite the line in a form lint reads, or remove it", name=None)
            return
        fam = _family(e.name)
        knob = self.knob_for(e.name)
        if e.value is None and e.path != ENV_PATH and (
                e.name == GLIBC_TUNABLES or fam is not None or knob is not None):
            self.add(e, "value-unknown", "info",
                     f"{e.name}: the value comes from an expansion or substitution lint cannot "
                     "follow, so it is not checked", "write the value literally to have it "
                     "checked")
        if e.name == GLIBC_TUNABLES:
            self.glibc(e)
            return
        if fam is None and knob is None:
            self.near_knob(e)
            return
        library = knob.library if knob is not None else fam.library  # type: ignore[union-attr]
        if library == "openmpi" and knob is None and self.openmpi_prefix(e):
            return
        if library == "mpich":
            self.mpich(e, knob)
            return
        if knob is None:
            self.unknown(e, library, listed=False)
            return
        if self.name_ok(e, knob, library) and e.value is not None:
            self.value_by_knob(e, e.value, knob)

    def unknown(self, e: EnvEntry, library: str, *, listed: bool, prefix: str = "",
                name: Optional[str] = None, severity: Optional[str] = None) -> None:
        name = name or e.name
        cands = self.names_of(library)
        fam = _family(name)
        if library == "mpich":
            # compare canonical MPIR_CVAR_ forms, answer in the prefix the file used
            used = next((p for p in MPICH_PREFIXES if name.startswith(p)), "MPIR_CVAR_")
            canon = {_mpich_canonical(c) for c in cands}
            sugg = [used + s[len("MPIR_CVAR_"):]
                    for s in _suggest(_mpich_canonical(name), canon, "MPIR_CVAR_")]
        else:
            if not prefix and fam is not None:
                prefix = next(p for p in fam.prefixes if name.startswith(p))
            sugg = _suggest(name, cands, prefix)
        cat = self.catalogues.get(library)
        version = library_version(self.facts, library)
        where = (f"the installed {library}{' ' + version if version else ''} "
                 f"({cat.source})" if listed and cat is not None else
                 "the knob records of the loaded plugins")
        if not sugg and not listed:
            return  # not in our partial records and no near miss: nothing to say
        shown = name if name.strip() == name and name.isprintable() else repr(name)
        msg = f"{shown}: unknown name, not listed by {where}"
        if name.strip() != name:
            msg += " (mind the blank: the library compares names exactly)"
        if listed:
            msg += " (outdated or misspelt: the library ignores it)"
        if sugg:
            msg += f"; did you mean {' or '.join(sugg)}?"
            rem = f"rename to {sugg[0]}"
        else:
            rem = f"remove it, or find the current name in the library's list ({cat.source})"  # type: ignore[union-attr]
        sev = severity or ("error" if listed else "warning")
        self.add(e, "unknown-name", sev, msg, rem, name=name)

    def openmpi_prefix(self, e: EnvEntry) -> bool:
        version = library_version(self.facts, "openmpi")
        for old, new, since in OPENMPI_RENAMED_PREFIXES:
            if e.name.startswith(old):
                newname = new + e.name[len(old):]
                if version is not None and version_in(version, f"<{since}"):
                    return True
                self.add(e, "outdated-name", "warning",
                         f"{e.name}: Open MPI {since}.0 renamed the vader BTL to sm; this name is "
                         f"only an alias in 5.0.x"
                         + (f" (installed: {version})" if version else " (version not detected)"),
                         f"rename to {newname} (source: {_OMPI_SM_DOC})")
                return True
        return False

    def name_ok(self, e: EnvEntry, knob: Knob, library: str, name: Optional[str] = None) -> bool:
        """Version, rename and flavour checks of a name with a knob record; False if the value
        should not be checked further."""
        name = name or e.name
        version = library_version(self.facts, library)
        flav = self.facts.mpi.flavour if (self.facts is not None and library == "mpich") else None
        if knob.flavour and flav and knob.flavour != flav:
            self.add(e, "flavour-mismatch", "warning",
                     f"{name} is read by the {knob.flavour} flavour of {library}; the installed "
                     f"{library} is {flav} and ignores it", f"remove it here, or use the {flav} "
                     f"equivalent (source: {knob.source})", name=name)
            return False
        if knob.renamed_to:
            if version is not None and not knob.valid_for(version):
                self.add(e, "outdated-name", "error",
                         f"{name}: outdated name, not read by {library} {version}; it was renamed "
                         f"to {knob.renamed_to}", f"rename to {knob.renamed_to} "
                         f"(source: {knob.source})", name=name)
                return False
            if version is None:
                self.add(e, "outdated-name", "warning",
                         f"{name}: read only by {library} {knob.versions or '(old versions)'}; "
                         f"later versions call it {knob.renamed_to} (the installed version is "
                         f"unknown)", f"use {knob.renamed_to} for newer {library} "
                         f"(source: {knob.source})", name=name)
                return True
        elif version is not None and not knob.valid_for(version):
            self.add(e, "wrong-version", "error",
                     f"{name} is read by {library} {knob.versions}, not by the installed "
                     f"{version}", f"remove it or upgrade {library} (source: {knob.source})",
                     name=name)
            return False
        return True

    def value_by_knob(self, e: EnvEntry, value: str, knob: Knob, name: Optional[str] = None
                      ) -> None:
        name = name or e.name
        typ = knob.type
        v = value.strip()
        bad: Optional[str] = None
        remedy: Optional[str] = None
        num: Optional[float] = None
        if typ in ("int", "bytes", "float"):
            num = _as_number(v, typ, knob.library)
            if num is None:
                size = _size_bytes(v) if typ in ("int", "bytes") else None
                if size is not None:
                    bad = f"{_short(value)} has a unit suffix; the value must be a plain integer number of bytes"
                    remedy = f"write {name}={size}"
                else:
                    bad = f"{_short(value)} is not {'a number' if typ == 'float' else 'an integer'}"
        elif typ == "bool":
            if knob.library == "mpich":
                self.mpich_bool(e, value)
                return
            if v.lower() not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
                bad = f"{_short(value)} is not a boolean (0/1)"
                remedy = f"write {name}=1 or {name}=0"
        if bad is None and knob.allowed is not None and typ != "bool":
            allowed = [_scalar_text(a) for a in knob.allowed]
            if v not in allowed:
                near = [a for a in allowed if a.lower() == v.lower()]
                bad = f"{_short(value)} is not one of {', '.join(allowed)}"
                remedy = f"write {name}={near[0]}" if near else f"use one of {', '.join(allowed)}"
        if bad is None and num is not None:
            if knob.minimum is not None and num < knob.minimum:
                bad = f"{_short(value)} is below the minimum {knob.minimum:g}"
            elif knob.maximum is not None and num > knob.maximum:
                bad = f"{_short(value)} is above the maximum {knob.maximum:g}"
        if bad:
            self.add(e, "invalid-value", "error", f"{name}: {bad}",
                     remedy or f"see {knob.source}", name=name)

    # ---- MPICH
    def mpich(self, e: EnvEntry, knob: Optional[Knob]) -> None:
        cat = self.catalogues.get("mpich")
        canon = _mpich_canonical(e.name)
        centry = cat.entries.get(canon) if cat is not None else None
        if knob is None:
            knob = self.knob_for(canon, "mpich")
        if centry is None and knob is None:
            if cat is not None:
                self.unknown(e, "mpich", listed=True,
                             severity="warning" if e.name.startswith("MPICH_") else "error")
            else:
                self.unknown(e, "mpich", listed=False)
            return
        if knob is not None and centry is None:
            if not self.name_ok(e, knob, "mpich"):
                return
            if cat is not None and knob.flavour in (None, "upstream") and (
                    self.facts is None or self.facts.mpi.flavour in (None, "upstream")):
                self.add(e, "unknown-name", "error",
                         f"{e.name}: not a control variable of the installed MPICH "
                         f"({cat.source}), although a knob record names it", "check the "
                         "library version; the installed library ignores it")
                return
        elif knob is not None and not self.name_ok(e, knob, "mpich"):
            return
        if e.value is None:
            return
        if centry is not None:
            self.mpich_value(e, centry, knob)
        elif knob is not None:
            self.value_by_knob(e, e.value, knob)

    def mpich_bool(self, e: EnvEntry, value: str) -> None:
        """A boolean CVAR: MPL_env2bool takes only ``MPL_BOOL_WORDS``, exactly."""
        if value not in MPL_BOOL_WORDS:
            self.add(e, "invalid-value", "error",
                     f"{e.name}: {value!r} is not a boolean MPICH reads ({_MPL_BOOL_TEXT}); "
                     "MPI_Init aborts", f"write {e.name}=1 or {e.name}=0")

    def mpich_value(self, e: EnvEntry, c: CatalogueEntry, knob: Optional[Knob]) -> None:
        value = e.value or ""
        src = self.catalogues["mpich"].source
        if knob is not None and knob.type == "bool" and not c.choices:
            self.mpich_bool(e, value)
            return
        if c.choices:
            if value not in c.choices:
                near = _suggest(value, c.choices) or [x for x in c.choices if x.lower() == value.lower()]
                self.add(e, "invalid-value", "error",
                         f"{e.name}: {value!r} is not one of the values the installed MPICH "
                         f"accepts ({', '.join(c.choices)}); MPI_Init aborts",
                         f"write {e.name}={near[0]}" if near else f"use one of {', '.join(c.choices)}")
            return
        if c.type == "MPI_INT":
            if value == "":
                self.add(e, "invalid-value", "warning", f"{e.name}: empty value, read as 0",
                         "remove the line or give a value")
                return
            if not _MPL_INT.match(value):
                size = _size_bytes(value)
                if value in MPL_BOOL_WORDS:
                    kt = knob.type if knob is not None else None
                    if kt == "bool":
                        return
                    self.add(e, "invalid-value", "warning",
                             f"{e.name}: {value!r} is accepted only if this control variable is a "
                             f"boolean (MPICH's MPL_env2bool); the installed MPICH lists it as "
                             f"MPI_INT, and an integer variable aborts MPI_Init on it",
                             f"write {e.name}={1 if value.lower() in ('yes', 'true', 'on') else 0}, "
                             "which both parsers accept")
                elif size is not None:
                    self.add(e, "invalid-value", "error",
                             f"{e.name}: {value!r}: the value must be a plain integer number of "
                             "bytes; MPICH reads no unit suffix and MPI_Init aborts "
                             "(\"Invalid character\")", f"write {e.name}={size}")
                else:
                    self.add(e, "invalid-value", "error",
                             f"{e.name}: {value!r} is not an integer the installed MPICH accepts "
                             "(decimal digits only); MPI_Init aborts",
                             f"give a decimal integer (default {c.default or '?'}; {src})")
                return
        if knob is not None:
            self.value_by_knob(e, value, knob)

    # ---- glibc tunables
    def glibc(self, e: EnvEntry) -> None:
        if e.prepend:
            self.add(e, "list-order", "warning",
                     f"{GLIBC_TUNABLES} is prepended to: an item already in the variable comes "
                     "later and wins (glibc reads the items in order; the last one counts)",
                     "append instead (append_path / append-path)")
        if e.value is None:
            return
        cat = self.catalogues.get("glibc")
        seen: dict[str, str] = {}
        for item in e.value.split(":"):
            if not item.strip():
                continue
            tname, eq, tval = item.partition("=")
            if not eq:
                self.add(e, "invalid-value", "error",
                         f"{GLIBC_TUNABLES}: item {item!r} has no '=value'; glibc ignores it",
                         "write name=value items separated by ':'", name=GLIBC_TUNABLES)
                continue
            if tname in seen:
                self.add(e, "duplicate", "warning",
                         f"{GLIBC_TUNABLES}: {tname} is given twice ({seen[tname]!r}, {tval!r})",
                         "give each tunable once", name=tname)
            seen[tname] = tval
            knob = self.knob_for(tname, "glibc")
            centry = cat.entries.get(tname) if cat is not None else None
            if knob is not None and not self.name_ok(e, knob, "glibc", name=tname):
                continue
            if centry is None and knob is None:
                if cat is not None or tname.startswith("glibc."):
                    self.unknown(e, "glibc", listed=cat is not None, prefix="glibc.", name=tname)
                continue
            if centry is None and cat is not None:
                version = library_version(self.facts, "glibc")
                self.add(e, "unknown-name", "error",
                         f"{tname}: not a tunable of the installed glibc"
                         f"{' ' + version if version else ''} ({cat.source}); glibc ignores it",
                         "remove it", name=tname)
                continue
            if centry is not None and centry.type == "number":
                n = parse_number(tval)
                if n is None:
                    size = _size_bytes(tval)
                    self.add(e, "invalid-value", "error",
                             f"{tname}: {tval!r} is not a number glibc reads (decimal, 0x hex, "
                             "0 octal)",
                             f"write {tname}={size}" if size is not None else "give an integer",
                             name=tname)
                    continue
                if (centry.minimum is not None and n < centry.minimum) or (
                        centry.maximum is not None and n > centry.maximum):
                    self.add(e, "invalid-value", "error",
                             f"{tname}: {tval} is outside [{centry.minimum}, {centry.maximum}] "
                             f"listed by the installed glibc; glibc ignores it", "give a value "
                             "inside the range", name=tname)
                    continue
            if knob is not None:
                self.value_by_knob(e, tval, knob, name=tname)


def _duplicates(entries: Sequence[EnvEntry], checker: _Checker) -> None:
    """The same setting assigned twice (or via two aliases) in one source: the later wins."""
    by_path: dict[str, dict[str, EnvEntry]] = {}
    for e in entries:
        if e.append or e.value is None:
            continue
        fam = _family(e.name)
        key = e.name
        if fam is not None and fam.library == "mpich":
            key = _mpich_canonical(e.name)
        else:
            k = checker.knob_for(e.name)
            if k is not None:
                key = k.name
        seen = by_path.setdefault(e.path, {})
        prev = seen.get(key)
        if prev is not None and prev.name == e.name and prev.value == e.value:
            pass  # the same value again (e.g. both branches of a csh if/else): nothing changes
        elif prev is not None and (fam is not None or checker.knob_for(e.name) is not None):
            where = f" (line {prev.line})" if prev.line is not None else ""
            if prev.name == e.name:
                msg = (f"{e.name} is set again (first{where} to {prev.value!r}); the later "
                       f"value {e.value!r} wins")
            else:
                msg = (f"{e.name} and {prev.name}{where} are two names of one setting; which "
                       "one the library takes is easy to get wrong")
            checker.add(e, "duplicate", "warning", msg, "set it once")
        seen[key] = e


def _not_exported(entries: Sequence[EnvEntry], checker: _Checker) -> None:
    """sh files that mix ``export`` with bare ``NAME=value`` lines: the bare ones do not reach
    programs started from the sourcing shell (POSIX: only exported variables go to the
    environment of commands)."""
    by_path: dict[str, list[EnvEntry]] = {}
    for e in entries:
        by_path.setdefault(e.path, []).append(e)
    for es in by_path.values():
        for e in es:
            if not e.exported and (_family(e.name) is not None or checker.knob_for(e.name)
                                   or e.name == GLIBC_TUNABLES):
                checker.add(e, "not-exported", "warning",
                            f"{e.name} is assigned without export while the file exports other "
                            "names: a sourced file passes it to programs only if it is already "
                            "exported", f"export {e.name}")


def _locate(f: Finding, entries: Sequence[EnvEntry]) -> tuple[Optional[str], Optional[int],
                                                               Optional[str]]:
    """File and line of the first env name a plugin finding mentions (its last assignment)."""
    last: dict[str, EnvEntry] = {}
    for e in entries:
        last[e.name] = e
    best: Optional[tuple[int, EnvEntry]] = None
    for name, e in last.items():
        m = re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", f.message)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), e)
    if best is None:
        return None, None, None
    e = best[1]
    return e.path, e.line, e.name


def lint_entries(entries: Sequence[EnvEntry], *, facts: Optional[Facts] = None,
                 knobs: Sequence[Knob] = (), catalogues: Optional[Mapping[str, Catalogue]] = None,
                 probes: Optional[Mapping[str, Any]] = None) -> list[LintFinding]:
    """All findings for ``entries``: generic checks, then each probe's ``lint(env, facts)``.

    :param facts: machine facts (library versions, flavour, security); None: unknown.
    :param knobs: knob records (``Registry.knobs``).
    :param catalogues: the libraries' own lists (``installed_catalogues``); None: none.
    :param probes: registered probes; those with a callable ``lint`` are called once per source
        (each file, or the environment) with the environment that source produces.  A probe whose
        ``lint`` raises gives a ``plugin-lint-failed`` warning instead.
    :return: findings in source order, then plugin findings.
    """
    own = {(k.library, k.name) for k in knobs}
    knobs = list(knobs) + [k for k in OPENMPI_KNOBS if (k.library, k.name) not in own]
    checker = _Checker(facts, knobs, catalogues or {})
    for e in entries:
        checker.entry(e)
    _duplicates(entries, checker)
    _not_exported(entries, checker)
    if probes:
        sources: dict[str, list[EnvEntry]] = {}
        for e in entries:
            sources.setdefault(e.path, []).append(e)
        for path, es in sources.items():
            env = resolve_env(es)
            for pname, probe in probes.items():
                fn = getattr(probe, "lint", None)
                if not callable(fn):
                    continue
                try:
                    found = list(fn(dict(env), facts if facts is not None else Facts()) or [])
                    bad = [type(x).__name__ for x in found if not isinstance(x, Finding)]
                    if bad:
                        raise TypeError(f"lint() returned non-Finding items: {', '.join(bad)}")
                except Exception as exc:
                    checker.out.append(LintFinding(Finding(
                        id="plugin-lint-failed", severity="warning",
                        message=f"probe {pname}: lint failed: {type(exc).__name__}: {exc}"),
                        path, None, None))
                    continue
                for f in found:
                    p, line, name = _locate(f, es)
                    checker.out.append(LintFinding(f, p or path, line, name))
    order = {id(f): i for i, f in enumerate(checker.out)}
    return sorted(checker.out, key=lambda f: (f.path or "", f.line if f.line is not None else 1 << 30,
                                              order[id(f)]))
