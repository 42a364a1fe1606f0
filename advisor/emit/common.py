"""Which settings a machine's library versions allow (``library_version``, ``drop_reason``,
``valid_for_profile``).

The format helpers that used to live here (``env_items``, ``setting_records``, ``EnvItem``,
``header_lines``, ...) moved to :mod:`advisor.formats.common`; they are re-exported here so
existing imports keep working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from advisor.formats.common import (MERGE_POLICY, EnvItem, Source, check_name,  # noqa: F401
                                    check_value, describe, env_items, first_sentence,
                                    header_lines, one_line, setting_records, sources,
                                    value_string, value_string_of)
from advisor.formats.entry import NAME_RE  # noqa: F401

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Facts, Profile, Setting


def library_version(facts: "Facts", library: str) -> Optional[str]:
    """The version of ``library`` recorded in ``facts``, or None when unknown.

    ``mpich`` -> ``facts.mpi.version`` (None when the recorded MPI implementation is known and is
    not MPICH, so an Open MPI version never decides about MPICH names); ``glibc`` ->
    ``facts.kernel.glibc_version``; anything else -> ``facts.python_packages`` looked up by
    PEP 503 normalised name (``DLA_Future`` and ``dla-future`` are the same library).
    """
    from packaging.utils import canonicalize_name

    lib = canonicalize_name(library)
    if lib == "mpich":
        impl = (facts.mpi.implementation or "").lower()
        if impl and "mpich" not in impl:
            return None
        return facts.mpi.version
    if lib == "glibc":
        return facts.kernel.glibc_version
    for key, version in facts.python_packages.items():
        if canonicalize_name(key) == lib:
            return version
    return None


def drop_reason(setting: "Setting", facts: "Facts") -> Optional[str]:
    """Why ``setting`` must not be emitted for a machine with ``facts``; None when it may.

    A setting is dropped when its ``versions`` PEP 440 specifier excludes the recorded library
    version (an unparsable version or specifier counts as excluded, as in
    ``advisor.knobs.version_in``), or when its ``flavour`` differs from the recorded MPI flavour
    (an HPE Cray MPICH name means nothing to upstream MPICH).  Unknown versions or flavours keep
    the setting.
    """
    from advisor.knobs import version_in

    if setting.versions:
        version = library_version(facts, setting.library)
        if version is not None and not version_in(version, setting.versions):
            return (f"{setting.name}: valid for {setting.library} {setting.versions}, "
                    f"the profile records {setting.library} {version}")
    if setting.flavour and setting.library.lower() == "mpich" and facts.mpi.flavour:
        if setting.flavour.lower() != facts.mpi.flavour.lower():
            return (f"{setting.name}: for the {setting.flavour} flavour of {setting.library}, "
                    f"the profile records {facts.mpi.flavour}")
    return None


def valid_for_profile(setting: "Setting", profile: "Profile") -> bool:
    """True when ``setting`` may be emitted for the machine recorded in ``profile``."""
    return drop_reason(setting, profile.facts) is None
