"""Name checks of ``advisor lint``: unknown, misspelt, renamed, removed, wrong version, flavour.

Everything library-specific comes from the ``Library`` records (``advisor.libraries``): naming
families, canonical names, catalogues, name history and renamed prefixes.  Functions of the
run's ``LintContext`` (``advisor.lint.context``), called by the checker (``advisor.lint.check``).
"""

from __future__ import annotations

import difflib
from typing import Optional

from advisor.knobs import Knob, version_in
from advisor.libraries import Library
from advisor.libraries.names import same_role, suggest_in_family
from advisor.lint.context import LintContext
from advisor.specs.entry import EnvEntry


#: Similarity from which a name outside every family is reported as a slip of a registered
#: knob's name (``difflib`` ratio, same first ``_`` word).  Measured against the knob records
#: of the built-in plugins: slips score 0.96-0.99 (GLIBC_TUNABLE, CUPY_GPU_MEMORY_LIMITS,
#: VENDOR_COPY_MOD for a plugin's VENDOR_COPY_MODE); this machine's environment and common HPC
#: variables (SLURM_*, OMP_*, CUDA_*, CUPY_CACHE_DIR, UCX_TLS, ...) score 0.46 at most.
NEAR_KNOB_CUTOFF = 0.9


def near_knob(ctx: LintContext, e: EnvEntry) -> None:
    """A name outside every known family that is one slip away from a registered knob
    (a plugin's own ``VENDOR_`` knobs have no family): a warning with the suggestion.
    Strict, since any variable may stand here: same first ``_`` word, same role word, and
    a similarity of at least ``NEAR_KNOB_CUTOFF``."""
    head = e.name.split("_", 1)[0]
    pool = [n for n, ks in ctx.by_name.items()
            if n.split("_", 1)[0] == head and n != e.name and same_role(n, e.name)
            and any(k.kind == "env" for k in ks)]
    near = difflib.get_close_matches(e.name, pool, n=1, cutoff=NEAR_KNOB_CUTOFF)
    if near:
        k = ctx.by_name[near[0]][0]
        ctx.add(e, "unknown-name", "warning",
                 f"{e.name}: no library reads this name; did you mean {near[0]} "
                 f"({k.library})?", f"rename to {near[0]}")
        return
    ctx.unclaimed.append(e)


def pool_of(ctx: LintContext, lib: Library) -> dict[str, Optional[str]]:
    """Canonical names the library reads -> family: the catalogue, the history's release
    for the installed version (all releases when unknown), and the knob records."""
    pool: dict[str, Optional[str]] = {}
    for n, ks in ctx.by_name.items():
        if any(k.library == lib.name for k in ks):
            pool[lib.canonical(n)] = None
    hist = lib.history
    if hist is not None:
        rel = hist.release_of(ctx.version(lib))
        for r, names in hist.releases.items():
            if rel is None or r == rel:
                pool.update({n: i.family for n, i in names.items()})
    cat = ctx.catalogues.get(lib.name)
    if cat is not None:
        pool.update({n: c.category for n, c in cat.entries.items()})
    return pool


def unknown(ctx: LintContext, e: EnvEntry, lib: Library, *, listed: bool,
            name: Optional[str] = None, severity: Optional[str] = None) -> None:
    """A name of ``lib``'s family that no list or record holds: ``unknown-name`` with near
    misses of its family (an error when the installed library's own list was read)."""
    name = name or e.name
    canon = lib.canonical(name)
    prefix = lib.canonical_prefix or lib.prefix_of(name) or lib.item_prefix
    family = lib.history.family_of(canon) if lib.history is not None else None
    sugg = [lib.spelled_as(s, name) for s in
            suggest_in_family(canon, pool_of(ctx, lib), prefix, family)]
    cat = ctx.catalogues.get(lib.name)
    where = (ctx.listed_by(lib) if listed and cat is not None else
             "the knob records of the loaded plugins")
    if not sugg and not listed:
        return  # not in our partial records and no near miss: nothing to say
    shown = name if name.strip() == name and name.isprintable() else repr(name)
    msg = f"{shown}: unknown name, not listed by {where}"
    if name.strip() != name:
        msg += " (mind the blank: the library compares names exactly)"
    elsewhere = other_releases(ctx, lib, canon) if listed else ""
    if elsewhere:
        msg += f" ({elsewhere}: the library ignores it)"
    elif listed and cat is not None and cat.recorded and not sugg:
        # a recorded list is of one build: another build of the release may have the
        # component that reads it
        severity = severity or "warning"
        msg += " (a build with other components than the recorded one may read it)"
    elif listed:
        msg += " (outdated or misspelt: the library ignores it)"
    if sugg:
        msg += f"; did you mean {' or '.join(sugg)}?"
        rem = f"rename to {sugg[0]}"
    else:
        rem = (f"remove it, or find the current name in the library's list "
               f"({cat.source if cat is not None else lib.source})")
    ctx.add(e, "unknown-name", severity or ("error" if listed else "warning"), msg, rem,
             name=name)


def other_releases(ctx: LintContext, lib: Library, canon: str) -> str:
    """``listed by openmpi 4.1.8 (recorded), not by 5.0.11``: the other recorded releases
    that list ``canon`` (a name removed, or added later); ``""`` when none does."""
    from advisor.libraries.recorded import series

    rec, version = lib.recorded, ctx.version(lib)
    if rec is None or lib.history is not None:  # a name history says it better
        return ""
    found = []
    for rel in rec.releases:
        if rel != series(version):
            other = rec.load(rel)
            if canon in other.entries:
                found.append(other.version or rel)
    if not found:
        return ""
    return (f"listed by {lib.name} {', '.join(found)} as recorded, not by "
            f"{version or 'this version'}")


def history_fate(ctx: LintContext, e: EnvEntry, lib: Library, name: str) -> bool:
    """Report a name the installed release does not read but a recorded one did: "renamed
    in X -> Y", "removed in X (see family Z)" or "added in X".  True when reported."""
    hist = lib.history
    version = ctx.version(lib)
    rel = hist.release_of(version) if hist is not None else None
    if hist is None or rel is None:
        return False
    fate = hist.fate(lib.canonical(name), rel)
    if fate is None:
        return False
    src = f"{lib.name} name history ({hist.source or 'advisor/libraries/data'})"
    if fate.kind == "renamed":
        new = lib.spelled_as(fate.new or "", name)
        ctx.add(e, "outdated-name", "error",
                 f"{name}: renamed in {lib.name} {fate.release} -> {new}; "
                 f"{ctx.listed_by(lib, source=False)} ignores the old name", f"rename to {new} (source: {src})",
                 name=name)
    elif fate.kind == "removed":
        ctx.add(e, "removed-name", "error",
                 f"{name}: removed in {lib.name} {fate.release} (see family "
                 f"{fate.family or '?'}); {ctx.listed_by(lib, source=False)} ignores it",
                 f"remove it, or pick the current setting of family {fate.family or '?'} "
                 f"(source: {src})", name=name)
    else:
        ctx.add(e, "wrong-version", "error",
                 f"{name}: added in {lib.name} {fate.release}; "
                 f"{ctx.listed_by(lib, source=False)} does not read it", f"remove it or upgrade {lib.name} (source: {src})",
                 name=name)
    return True


def renamed_prefix(ctx: LintContext, e: EnvEntry, lib: Library) -> bool:
    """A name under a prefix the library renamed (``Library.renamed_prefixes``)."""
    version = ctx.version(lib)
    for old, new, since in lib.renamed_prefixes:
        if e.name.startswith(old):
            newname = new + e.name[len(old):]
            if version is not None and version_in(version, f"<{since}"):
                return True
            ctx.add(e, "outdated-name", "warning",
                     f"{e.name}: {lib.name} {since}.0 renamed {old}* to {new}*; this name is "
                     f"only an alias from then on"
                     + (f" (installed: {version})" if version else " (version not detected)"),
                     f"rename to {newname} (source: {lib.source})")
            return True
    return False


def name_ok(ctx: LintContext, e: EnvEntry, knob: Knob, lib: Library,
            name: Optional[str] = None) -> bool:
    """Version, rename and flavour checks of a name with a knob record; False if the value
    should not be checked further."""
    name = name or e.name
    library = lib.name
    version = ctx.version(lib)
    flav = ctx.flavour(lib)
    if knob.flavour and flav and knob.flavour != flav:
        ctx.add(e, "flavour-mismatch", "warning",
                 f"{name} is read by the {knob.flavour} flavour of {library}; the installed "
                 f"{library} is {flav} and ignores it", f"remove it here, or use the {flav} "
                 f"equivalent (source: {knob.source})", name=name)
        return False
    if knob.renamed_to:
        if version is not None and not knob.valid_for(version):
            ctx.add(e, "outdated-name", "error",
                     f"{name}: outdated name, not read by {library} {version}; it was renamed "
                     f"to {knob.renamed_to}", f"rename to {knob.renamed_to} "
                     f"(source: {knob.source})", name=name)
            return False
        if version is None:
            ctx.add(e, "outdated-name", "warning",
                     f"{name}: read only by {library} {knob.versions or '(old versions)'}; "
                     f"later versions call it {knob.renamed_to} (the installed version is "
                     f"unknown)", f"use {knob.renamed_to} for newer {library} "
                     f"(source: {knob.source})", name=name)
            return True
    elif version is not None and not knob.valid_for(version):
        ctx.add(e, "wrong-version", "error",
                 f"{name} is read by {library} {knob.versions}, not by the installed "
                 f"{version}", f"remove it or upgrade {library} (source: {knob.source})",
                 name=name)
        return False
    return True
