"""Which settings a machine's library versions allow (``library_version``, ``drop_reason``,
``valid_for_profile``).

The helpers every format shares (``env_items``, ``setting_records``, ``EnvItem``,
``header_lines``, ...) live in :mod:`advisor.formats.common`, which asks this module which
settings are valid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Sequence

from packaging.utils import canonicalize_name

if TYPE_CHECKING:  # pragma: no cover
    from advisor.knobs import Knob
    from advisor.libraries import Library
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
