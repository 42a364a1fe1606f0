"""Which settings a machine's library versions allow (``library_version``, ``drop_reason``,
``valid_for_profile``), and which selected settings a format leaves out, and why
(``left_out_settings``: the one home of that logic; ``advisor.emit.left_out_notes`` sums it up
for stderr, ``advisor.formats.common.left_out_comment`` writes it into the output).

The helpers every format shares (``env_items``, ``setting_records``, ``EnvItem``,
``header_lines``, ...) live in :mod:`advisor.formats.common`, which asks this module which
settings are valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Collection, Mapping, Optional, Sequence

from packaging.utils import canonicalize_name

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.libraries import Library
    from advisor.emit import EmitOptions
    from advisor.models import Facts, Profile, Setting


def library_version(facts: "Facts", library: str,
                    libraries: Optional[Mapping[str, "Library"]] = None) -> Optional[str]:
    """The version of ``library`` recorded in ``facts``, or None when unknown: the library
    record's answer (``advisor.libraries.version_of``; ``libraries`` defaults to the built-in
    records), else ``facts.python_packages`` by PEP 503 normalised name."""
    from advisor.libraries import version_of

    return version_of(facts, library, libraries)


def drop_reason(setting: "Setting", facts: "Facts", knobs: Sequence["Knob"] = (),
                libraries: Optional[Mapping[str, "Library"]] = None) -> Optional[str]:
    """Why ``setting`` must not be emitted for a machine with ``facts``; None when it may.

    A setting is dropped when

    * its own ``versions`` PEP 440 specifier excludes the recorded library version;
    * a knob record of the same library and name (``knobs``) has a ``versions`` range that
      excludes it (knob version ranges filter emit, as docs/plugins.md says);
    * the library's name history (``Library.history``) says the recorded release does not read
      the name (renamed, removed, or added later), for the flavours the history covers;
    * its ``flavour`` differs from the library's recorded flavour (an HPE Cray MPICH name means
      nothing to upstream MPICH).

    An unparsable version or specifier counts as excluded (``advisor.knobs.version_in``).
    Unknown versions or flavours keep the setting.
    """
    from advisor.knobs import version_in
    from advisor.libraries import builtin_libraries

    libs = builtin_libraries() if libraries is None else libraries
    lib = libs.get(canonicalize_name(setting.library))
    version = library_version(facts, setting.library, libs)
    if version is not None:
        if setting.versions and not version_in(version, setting.versions):
            return (f"{setting.name}: valid for {setting.library} {setting.versions}, "
                    f"the profile records {setting.library} {version}")
        for k in knobs:
            if (k.name == setting.name and canonicalize_name(k.library) ==
                    canonicalize_name(setting.library) and k.versions
                    and not version_in(version, k.versions)):
                return (f"{setting.name}: its knob record says {setting.library} "
                        f"{k.versions}, the profile records {setting.library} {version}")
    flavour = lib.flavour(facts) if lib is not None else None
    if setting.flavour and flavour and setting.flavour.lower() != flavour.lower():
        return (f"{setting.name}: for the {setting.flavour} flavour of {setting.library}, "
                f"the profile records {flavour}")
    hist = lib.history if lib is not None else None
    rel = hist.release_of(version) if hist is not None else None
    if (hist is not None and rel is not None and setting.kind == "env"
            and (flavour is None or flavour in lib.catalogue_flavours)  # type: ignore[union-attr]
            and lib.owns(setting.name)):  # type: ignore[union-attr]
        fate = hist.fate(lib.canonical(setting.name), rel)  # type: ignore[union-attr]
        if fate is not None:
            what = {"renamed": f"renamed in {fate.release} to {fate.new}",
                    "removed": f"removed in {fate.release}",
                    "added": f"added only in {fate.release}"}[fate.kind]
            return (f"{setting.name}: not read by {setting.library} {version} ({what}; "
                    f"{setting.library} name history)")
    return None


def valid_for_profile(setting: "Setting", profile: "Profile", knobs: Sequence["Knob"] = (),
                      libraries: Optional[Mapping[str, "Library"]] = None) -> bool:
    """True when ``setting`` may be emitted for the machine recorded in ``profile``."""
    return drop_reason(setting, profile.facts, knobs, libraries) is None


@dataclass(frozen=True)
class LeftOut:
    """One selected setting a format does not write.

    :ivar probe: the probe whose recommendation holds the setting.
    :ivar recommendation: the recommendation id.
    :ivar setting: the setting.
    :ivar cause: ``"version"`` (the recorded library version or flavour excludes it),
        ``"verdict"`` (``advisor verify`` refuted its recommendation on the profile's machine
        class: ``advisor.emit.veto``; without ``--all``),
        ``"kind"`` (the format writes no setting of its kind), ``"library"`` (the format writes
        only other libraries' settings), ``"default"`` (only confirms the library default,
        without ``--all``) or ``"scope"`` (excluded by a configuration scope, decided before the
        format ran and passed in ``EmitOptions.left_out``).
    :ivar why: the reason, one human phrase that does not repeat the setting's name.
    """

    probe: str
    recommendation: str
    setting: "Setting"
    cause: str
    why: str


def version_drops(profile: "Profile", options: "EmitOptions") -> list[LeftOut]:
    """The selected settings (every kind, defaults included) that ``drop_reason`` excludes for
    the machine recorded in ``profile``, in profile order."""
    from advisor.plugins import SETTING_KINDS

    plugins = set(options.plugins) if options.plugins is not None else None
    out = []
    for res, rec, s in profile.settings(kinds=SETTING_KINDS, include_defaults=True,
                                        plugins=plugins):
        why = drop_reason(s, profile.facts, options.knobs or (), options.libraries)
        if why:
            if why.startswith(f"{s.name}: "):
                why = why[len(s.name) + 2:]
            out.append(LeftOut(res.probe, rec.id, s, "version", why))
    return out


def left_out_settings(profile: "Profile", options: "EmitOptions",
                      kinds: Sequence[str] = ("env",), *, fmt: str = "this format",
                      libraries: Optional[Collection[str]] = None,
                      kind_hint=None) -> list[LeftOut]:
    """Every selected setting (by ``options.plugins``; every kind, defaults included) that a
    format writing ``kinds`` (and, when given, only settings of ``libraries``: PEP 503 names)
    leaves out, with the first reason that applies, in this order: the recorded library
    version excludes it, verify refuted its recommendation on the profile's machine class
    (``advisor.emit.veto``; without ``options.include_defaults``), its kind, its library, it
    only confirms the default (without ``options.include_defaults``).  ``options.left_out``
    (settings dropped before the format ran: version drops and vetoes by
    ``advisor.emit.render``, scope excludes) come first.  Sorted by name, then probe order;
    one entry per setting.

    :param fmt: the format's name, for the reason text.
    :param kind_hint: ``hint(setting) -> str`` naming where a setting of another kind can go
        (e.g. the formats that write it); None: no hint.
    """
    from advisor.emit.veto import vetoes
    from advisor.plugins import SETTING_KINDS

    plugins = set(options.plugins) if options.plugins is not None else None
    if plugins is not None and not plugins:
        return []  # an explicit empty filter selects nothing
    vetoed = {} if options.include_defaults else vetoes(profile)
    libs = {canonicalize_name(x) for x in libraries} if libraries is not None else None
    out: list[LeftOut] = list(getattr(options, "left_out", ()) or ())
    seen = {(lo.probe, lo.recommendation, lo.setting.name, repr(lo.setting.value)) for lo in out}
    drops = {id(lo.setting): lo for lo in version_drops(profile, options)}
    for res, rec, s in profile.settings(kinds=SETTING_KINDS, include_defaults=True,
                                        plugins=plugins):
        key = (res.probe, rec.id, s.name, repr(s.value))
        if key in seen:
            continue
        seen.add(key)
        if id(s) in drops:
            out.append(drops[id(s)])
        elif (res.probe, rec.id) in vetoed:
            out.append(LeftOut(res.probe, rec.id, s, "verdict",
                               f"{vetoed[(res.probe, rec.id)].why}; --all writes it"))
        elif s.kind not in kinds:
            hint = kind_hint(s) if kind_hint is not None else ""
            out.append(LeftOut(res.probe, rec.id, s, "kind",
                               f"{s.library} {s.kind} setting, not written by {fmt}"
                               + (f"; {hint}" if hint else "")))
        elif libs is not None and canonicalize_name(s.library) not in libs:
            out.append(LeftOut(res.probe, rec.id, s, "library",
                               f"a setting of {s.library}; {fmt} writes only "
                               f"{', '.join(sorted(libs))} settings"))
        elif s.is_default and not options.include_defaults:
            out.append(LeftOut(res.probe, rec.id, s, "default",
                               "only confirms the library default; --all writes it"))
    order = {id(lo): i for i, lo in enumerate(out)}
    return sorted(out, key=lambda lo: (lo.setting.name, order[id(lo)]))


#: How ``nothing_to_write`` sums up each cause of ``LeftOut`` (``{n}``: count, ``{fmt}``).
_CAUSE_TEXT = {
    "version": "{n} not read by the recorded library versions",
    "verdict": "{n} refuted by advisor verify on this machine class (--all writes them)",
    "scope": "{n} excluded by a configuration scope",
    "kind": "{n} of a kind {fmt} does not write",
    "library": "{n} of libraries {fmt} does not write",
    "default": "{n} only confirm the library default (--all writes them)",
}


def nothing_to_write(profile: "Profile", options: "EmitOptions", kinds: Sequence[str],
                     fmt: str, libraries: Optional[Collection[str]] = None) -> str:
    """The one-line reason why a format has nothing to write, for the ``EmitError`` of a
    format whose empty output would be useless (a module, a configuration snippet): the
    ``left_out_settings`` counted by cause, or, when nothing is selected at all, each selected
    probe's status.  Example: ``nothing to write as lmod: 2 setting(s) only confirm the
    library default (--all writes them)``."""
    los = left_out_settings(profile, options, kinds, fmt=fmt, libraries=libraries)
    if not los:
        sel = options.plugins
        why = "; ".join(f"{r.probe}: {r.status}" + (f" ({r.reason})" if r.reason else "")
                        for r in profile.results
                        if sel is None or r.probe in sel or r.plugin in sel) or "no probe"
        return f"nothing to write as {fmt}: the selected probes made no recommendation ({why})"
    counts: dict[str, int] = {}
    for lo in los:
        counts[lo.cause] = counts.get(lo.cause, 0) + 1
    parts = [_CAUSE_TEXT[c].format(n=f"{counts[c]} setting(s)", fmt=fmt)
             for c in _CAUSE_TEXT if c in counts]
    return f"nothing to write as {fmt}: " + "; ".join(parts)
