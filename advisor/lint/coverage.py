"""What ``advisor lint`` checked: every name of a known family is checked against a list, or
said not to be (``unchecked-family``), and the summary counts the two apart.

A name of a library's family (``Library.prefixes``, an item of its list variable) is checked
when the library's catalogue was read (installed, or recorded for ``--library NAME@VERSION`` /
a profile's version: ``advisor.lint.catalogue.choose_catalogues``) and lists the flavour in
use completely; for a library with no list anywhere (CuPy), when a knob record declares it
(``LintContext.covered``).  The rest of a family gives one
``unchecked-family`` warning per file (an error under ``--strict``): the family, why it was
not checked and how to check it, all from the library record (no library is named here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from advisor.libraries import Library
from advisor.lint.context import LintContext

__all__ = ["Coverage", "unchecked_families", "coverage_of"]

#: Names shown in one ``unchecked-family`` message before "and N more".
SHOWN = 5


@dataclass
class Coverage:
    """Distinct ``(path, variable)`` pairs of known families, ``checked`` and ``unchecked`` (a
    variable with one unchecked item counts as unchecked), and
    per library the list its checked names were read against (``used``: library -> one
    line naming the catalogue, installed or recorded, and its version)."""

    checked: int = 0
    unchecked: int = 0
    families: int = 0
    used: dict[str, str] = field(default_factory=dict)


def _why(ctx: LintContext, lib: Library, why_none: Mapping[str, str]) -> tuple[str, str]:
    """``(why not checked, how to check)`` for ``lib``, from its record."""
    title = lib.description or lib.name
    cat = ctx.catalogues.get(lib.name)
    recorded = lib.recorded.releases if lib.recorded is not None else ()
    if cat is not None:  # read, but not of the flavour in use
        flav = ctx.flavour(lib)
        return (f"the list read ({cat.source}) holds the {'/'.join(lib.catalogue_flavours)} "
                f"flavour's names only, and the {lib.name} here is {flav}",
                f"lint on a node with the {flav} {lib.name}, or check the names against its "
                "documentation")
    flav = ctx.flavour(lib)
    if lib.catalogue_flavours and flav and flav not in lib.catalogue_flavours:
        return (f"advisor reads and records lists of the {'/'.join(lib.catalogue_flavours)} "
                f"{lib.name} only, and the {lib.name} here is {flav}",
                f"check the names against the {flav} {lib.name} documentation (its man pages)")
    if lib.catalogue is None and not recorded:
        how = (f"compare the names with '{lib.list_tool}' on a node with {lib.name}"
               if lib.list_tool else f"check the names against {lib.source or 'its manual'}")
        return f"advisor has no list of {title}", how
    why = why_none.get(lib.name) or (
        f"{lib.name} is not installed here"
        + (f" ('{lib.list_tool}' not found)" if lib.list_tool else "")
        + " and no recorded catalogue was chosen")
    hows = []
    if recorded:
        hows.append(f"--library {lib.name}@{recorded[-1]} (recorded: {', '.join(recorded)})")
    if lib.catalogue is not None:
        hows.append(f"lint on a node with {lib.name}"
                    + (f" ('{lib.list_tool}' on PATH)" if lib.list_tool else ""))
    return why, ", or ".join(hows)


def unchecked_families(ctx: LintContext, *, strict: bool = False,
                       why_none: Optional[Mapping[str, str]] = None) -> None:
    """One ``unchecked-family`` finding per library and file with names no list checked, at
    the first such name; severity ``error`` when ``strict``, else ``warning``.

    :param why_none: library -> why no catalogue was chosen (``choose_catalogues``), used
        instead of the record's generic reason."""
    for lib_name, seen in ctx.seen.items():
        lib = ctx.library(lib_name)
        by_path: dict[str, list] = {}
        for e, name, checked in seen:
            if not checked:
                by_path.setdefault(e.path, []).append((e, name))
        for path, miss in by_path.items():
            names = list(dict.fromkeys(n for _, n in miss))
            shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more"
                                                if len(names) > SHOWN else "")
            why, how = _why(ctx, lib, why_none or {})
            knobbed = len({n for _, n, c in seen if c})
            if knobbed and lib.name not in ctx.catalogues:
                why += (f" (the {knobbed} name(s) that the loaded plugins' knob records "
                        "declare were checked against those)")
            fams = ", ".join(p + "*" for p in lib.prefixes) or lib.list_variable or lib.name
            ctx.add(miss[0][0], "unchecked-family", "error" if strict else "warning",
                    f"{shown}: {len(names)} name(s) of {lib.description or lib.name} ({fams}) "
                    f"not checked: {why}", how, name=miss[0][1])


def coverage_of(ctx: LintContext) -> Coverage:
    """The counts and catalogues of a finished run (``ctx.seen``)."""
    cov = Coverage()
    checked: set[tuple[str, str]] = set()
    unchecked: set[tuple[str, str]] = set()
    fams: set[str] = set()
    for lib_name, seen in ctx.seen.items():
        for e, name, ok in seen:  # counted by variable: a list variable's items are one
            (checked if ok else unchecked).add((e.path, e.name))
            if not ok:
                fams.add(lib_name)
        cat = ctx.catalogues.get(lib_name)
        if cat is not None and any(ok for _, _, ok in seen):
            lib = ctx.library(lib_name)
            cov.used[lib_name] = f"{lib_name} names checked against {ctx.listed_by(lib)}"
    cov.checked = len(checked - unchecked)
    cov.unchecked = len(unchecked)
    cov.families = len(fams)
    return cov
