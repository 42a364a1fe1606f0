"""What every check of ``advisor lint`` reads and writes: :class:`LintContext`.

One context is made per ``lint_entries`` call: the machine facts, the library records and their
catalogues, the knob records by name, and the findings so far.  The checker
(``advisor.lint.check.Checker``) holds it and hands it to the name checks
(``advisor.lint.names``) and the value checks (``advisor.lint.values``), which are plain
functions of it; none of them imports another.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from packaging.utils import canonicalize_name

from advisor.knobs import Knob
from advisor.libraries import Catalogue, Library, library_of_env, version_of
from advisor.specs.entry import EnvEntry
from advisor.lint.report import LintFinding
from advisor.models import Facts, Finding

__all__ = ["LintContext"]


class LintContext:
    """The state of one lint run.

    Attributes:
        facts: machine facts (library versions, flavour); None: unknown.
        catalogues: the libraries' own lists of names, by library name.
        libraries: the library records, by canonical name.
        by_name: knob records of env settings (and list items) by each of their names.
        out: the findings so far, in the order they were found.
        unclaimed: entries whose name no knob or library checks.
        declared: names the plugins' knob records declare (emit writes no others); None: not
            known.
    """

    def __init__(self, facts: Optional[Facts], knobs: Sequence[Knob],
                 catalogues: Mapping[str, Catalogue], libraries: Mapping[str, Library]) -> None:
        self.facts = facts
        self.catalogues = catalogues
        self.libraries = libraries
        self.by_name: dict[str, list[Knob]] = {}
        for k in knobs:
            if k.kind != "env" and k.separator is None:
                continue
            for n in [k.name, *k.aliases]:
                self.by_name.setdefault(n, []).append(k)
        self.out: list[LintFinding] = []
        self.unclaimed: list[EnvEntry] = []
        self.declared: Optional[frozenset[str]] = None
        #: names of a library's family: library -> [(entry, name, checked)], in input order
        #: (``advisor.lint.coverage``)
        self.seen: dict[str, list[tuple[EnvEntry, str, bool]]] = {}

    def add(self, e: EnvEntry, fid: str, severity: str, message: str,
            remedy: Optional[str] = None, name: Optional[str] = None) -> None:
        """Record a finding at ``e``'s file and line, about ``name`` (default: ``e.name``)."""
        self.out.append(LintFinding(Finding(id=fid, severity=severity, message=message,
                                            remedy=remedy), e.path, e.line, name or e.name))

    def version(self, lib: Library) -> Optional[str]:
        """The version of ``lib`` lint judges for: a recorded catalogue's own version when
        one was chosen, else the detected one (``advisor.libraries.version_of``); None:
        unknown."""
        cat = self.catalogues.get(lib.name)
        if cat is not None and cat.recorded and cat.version:
            return cat.version
        return version_of(self.facts, lib.name, self.libraries)

    def listed_by(self, lib: Library, source: bool = True) -> str:
        """Who lists ``lib``'s names, for messages: ``the installed openmpi 5.0.11
        (<tool>)`` or ``openmpi 5.0.11 as recorded (<source>)``; ``source`` False leaves the
        parenthesis out."""
        cat = self.catalogues.get(lib.name)
        v = self.version(lib)
        what = f"{lib.name}{' ' + v if v else ''}"
        if cat is not None and cat.recorded:
            what = f"{what} as recorded"
        else:
            what = f"the installed {what}"
        return f"{what} ({cat.source})" if source and cat is not None else what

    def flavour(self, lib: Library) -> Optional[str]:
        """The installed flavour of ``lib``; None when unknown or its record fails."""
        if self.facts is None:
            return None
        try:
            return lib.flavour(self.facts)
        except Exception:  # a third-party record's bug: flavour unknown
            return None

    def complete_for(self, lib: Library, knob: Optional[Knob]) -> bool:
        """True when the library's catalogue and history list every name of ``knob``'s flavour
        and of the installed flavour (Cray MPICH reads names upstream ``mpivars`` never lists)."""
        if not lib.catalogue_flavours:
            return True
        flav = self.flavour(lib)
        return ((knob is None or knob.flavour in (None, *lib.catalogue_flavours))
                and flav in (None, *lib.catalogue_flavours))

    def recorded_value(self, f: LintFinding) -> bool:
        """True when ``f`` judged a value against a recorded catalogue (not this build)."""
        lib = library_of_env(f.name or "", self.libraries)
        cat = self.catalogues.get(lib.name) if lib is not None else None
        return cat is not None and cat.recorded

    def covered(self, e: EnvEntry, lib: Library, name: str, knob: Optional[Knob]) -> None:
        """Note that ``name`` of ``lib``'s family was read: checked when the library's
        catalogue was read (or its name history holds the version in use) and lists its
        flavour completely; for a library that has no list
        at all (no reader, nothing recorded: CuPy, DLA-Future), when a knob record declares
        the name.  A knob record alone does not check a name of a library whose list could
        be read elsewhere (``OMPI_MCA_pml`` has one, with no values: ``ucxx`` would pass)."""
        listless = lib.catalogue is None and lib.recorded is None
        hist = lib.history
        listed = (self.catalogues.get(lib.name) is not None
                  or (hist is not None and hist.release_of(self.version(lib)) is not None))
        checked = (listed and self.complete_for(lib, None)) or (listless and knob is not None)
        self.seen.setdefault(lib.name, []).append((e, name, checked))

    def knob_for(self, name: str, library: Optional[str] = None) -> Optional[Knob]:
        """The knob record of ``name`` (of ``library`` when given), of the installed flavour
        when several match; None when no record names it."""
        cands = self.by_name.get(name, [])
        if library:
            cands = [k for k in cands if k.library == library] or cands
        lib = self.libraries.get(cands[0].library) if cands else None
        flav = self.flavour(lib) if lib is not None else None
        for k in cands:
            if k.flavour is None or flav is None or k.flavour == flav:
                return k
        return cands[0] if cands else None

    def library(self, name: str) -> Library:
        """The record of library ``name``; a bare record when no plugin registered one."""
        key = canonicalize_name(name)
        return self.libraries.get(key) or Library(name=key)

    def claims(self, name: str) -> bool:
        """True when a library's naming family or a knob record holds ``name``."""
        return library_of_env(name, self.libraries) is not None or name in self.by_name

    def canonical(self, name: str) -> str:
        """The key of the setting ``name`` stands for (duplicates across aliases)."""
        lib = library_of_env(name, self.libraries)
        if lib is not None and lib.canonical_prefix is not None:
            return lib.canonical(name)
        k = self.knob_for(name)
        return k.name if k is not None else name
