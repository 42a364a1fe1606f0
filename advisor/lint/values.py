"""Value checks of ``advisor lint``: the library's grammar (``Library.values``), its own list's
types, choices and ranges, a knob record's type, enum and range, and values equal to the
installed version's default (inert).  Functions of the run's ``LintContext``
(``advisor.lint.context``); the checker (``advisor.lint.check``) calls :func:`check_value`."""

from __future__ import annotations

from typing import Optional

from advisor.knobs import Knob
from advisor.libraries import CatalogueEntry, Library, Problem
from advisor.libraries.record import short, size_bytes
from advisor.lint.context import LintContext
from advisor.specs.entry import EnvEntry, scalar_text


def problem(ctx: LintContext, e: EnvEntry, p: Problem, name: str) -> None:
    """Record the library's verdict ``p`` on the value of ``name``."""
    ctx.add(e, p.id, p.severity, f"{name}: {p.message}", p.remedy, name=name)


def check_value(ctx: LintContext, e: EnvEntry, lib: Library, name: str, value: str,
                centry: Optional[CatalogueEntry], knob: Optional[Knob]) -> None:
    """Check ``value`` of ``name``: first against the library's own list entry, then the
    knob record; a clean value equal to the installed version's default gets a note."""
    before = len(ctx.out)
    if centry is not None:
        cat = ctx.catalogues[lib.name]
        p, done = lib.values.check_listed(name, value, centry, cat.source, knob)
        if p is not None:
            problem(ctx, e, p, name)
        if not done and knob is not None:
            value_by_knob(ctx, e, value, knob, lib, name)
    elif knob is not None:
        value_by_knob(ctx, e, value, knob, lib, name)
    if len(ctx.out) == before:
        default_note(ctx, e, lib, name, value, centry)


def default_note(ctx: LintContext, e: EnvEntry, lib: Library, name: str, value: str,
                 centry: Optional[CatalogueEntry]) -> None:
    """``info`` when ``value`` equals the installed version's default (from the name
    history of that release, else the installed catalogue): the line changes nothing."""
    version = ctx.version(lib)
    default: Optional[str] = None
    where = ""
    hist = lib.history
    rel = hist.release_of(version) if hist is not None else None
    if hist is not None and rel is not None and ctx.complete_for(lib, None):
        info = hist.info(lib.canonical(name), rel)
        if info is not None:
            default, where = info.default, f"{lib.name} {version}"
    elif centry is not None and lib.history is not None:
        default, where = centry.default, f"the installed {lib.name}"
    if default is None or not lib.values.same(value, default):
        return
    ctx.add(e, "default-value", "info",
             f"{name}={value} equals this version's default ({where}: {default}); the "
             "setting is inert here", "keep it only to pin the value across versions",
             name=name)


def value_by_knob(ctx: LintContext, e: EnvEntry, value: str, knob: Knob, lib: Library,
                  name: Optional[str] = None) -> None:
    """Check ``value`` against the knob record's type, allowed values and range."""
    name = name or e.name
    typ = knob.type
    v = value.strip()
    bad: Optional[str] = None
    remedy: Optional[str] = None
    num: Optional[float] = None
    if typ in ("int", "bytes", "float"):
        num = lib.values.number(v, typ)
        if num is None:
            size = size_bytes(v) if typ in ("int", "bytes") else None
            if size is not None:
                bad = (f"{short(value)} has a unit suffix; the value must be a plain "
                       "integer number of bytes")
                remedy = f"write {name}={size}"
            else:
                bad = f"{short(value)} is not {'a number' if typ == 'float' else 'an integer'}"
    elif typ == "bool":
        p = lib.values.bool_problem(name, value)
        if p is not None:
            problem(ctx, e, p, name)
        return
    if bad is None and knob.allowed is not None:
        allowed = [scalar_text(a) for a in knob.allowed]
        if v not in allowed:
            near = [a for a in allowed if a.lower() == v.lower()]
            bad = f"{short(value)} is not one of {', '.join(allowed)}"
            remedy = f"write {name}={near[0]}" if near else f"use one of {', '.join(allowed)}"
    if bad is None and num is not None:
        if knob.minimum is not None and num < knob.minimum:
            bad = f"{short(value)} is below the minimum {knob.minimum:g}"
        elif knob.maximum is not None and num > knob.maximum:
            bad = f"{short(value)} is above the maximum {knob.maximum:g}"
    if bad:
        ctx.add(e, "invalid-value", "error", f"{name}: {bad}",
                 remedy or f"see {knob.source}", name=name)
