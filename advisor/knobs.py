"""Knob records: the settings a library understands, as data.

Plugins register ``Knob`` records through ``advisor_register_knobs``; ``emit`` uses them to pick
names valid for the detected library version and ``lint`` to check env files.  Version ranges are
PEP 440 specifiers (``packaging.specifiers.SpecifierSet``), e.g. ``">=4.3,<5"``.
"""

from __future__ import annotations

import re
from typing import Iterable, Literal, Optional

from pydantic import Field

from advisor.models import Model, Scalar, SettingKind, SettingType


class VersionedDefault(Model):
    versions: str = Field(description="PEP 440 specifier, e.g. '>=5.0'")
    value: Scalar


#: What ranks on one node may need to share with each other, that a launch wrapper can take
#: away (``advisor.formats.wrappers``): ``ptrace`` - one rank may read another's memory with
#: process_vm_readv(2), which needs ptrace access (PTRACE_MODE_ATTACH_REALCREDS: the same user
#: namespace and credentials, or CAP_SYS_PTRACE there); ``pid`` - a rank's PID means the same
#: process to its peers (the same PID namespace: process_vm_readv takes the peer's PID); ``ipc``
#: - the same /dev/shm and System V IPC (the same IPC namespace and mount of /dev/shm).
Shared = Literal["ptrace", "pid", "ipc"]


class Need(Model):
    """What a setting needs the ranks to share, for the values that make it need it.

    :ivar values: a regular expression the whole value must match (case-insensitive), e.g.
        ``"1|yes|true"``; None: every value.
    :ivar shares: what the ranks must share (:data:`Shared`).
    :ivar why: the mechanism, for the finding (``"CMA single copy (process_vm_readv)"``).
    :ivar certain: False when these values only allow the mechanism and the library chooses
        per peer (UCX's ``sm`` group: cma among posix, sysv, knem, xpmem); lint then warns
        instead of reporting an error.
    """

    values: Optional[str] = None
    shares: list[Shared]
    why: str
    certain: bool = True

    def applies(self, value: Optional[str]) -> bool:
        """True when ``value`` (None: unknown, treated as any) makes the setting need this."""
        return self.values is None or value is None or bool(
            re.fullmatch(self.values, value.strip(), flags=re.IGNORECASE))


def cma_need(values: Optional[str] = None, certain: bool = True) -> Need:
    """The need of a setting that selects CMA single copy (for ``values``; None: any): the
    ranks read each other's memory with process_vm_readv(2), so they must be able to ptrace
    each other and see each other's PIDs (process_vm_readv(2), ptrace(2) "Ptrace access mode
    checking").  ``certain``: see :class:`Need`."""
    return Need(values=values, shares=["ptrace", "pid"], certain=certain,
                why="CMA single copy (process_vm_readv(2) of the peer rank's memory)")


def shm_need(values: Optional[str] = None) -> Need:
    """The need of a setting that selects a shared-memory transport (POSIX /dev/shm or System
    V segments) between the ranks of a node (shm_overview(7), sysvipc(7))."""
    return Need(values=values, shares=["ipc"],
                why="shared-memory transport (segments in /dev/shm or System V IPC)")


class Knob(Model):
    library: str = Field(description="e.g. mpich, glibc, dla-future, cupy")
    flavour: Optional[str] = Field(None, description="e.g. upstream, cray; None: any flavour")
    name: str = Field(description="canonical name, e.g. MPIR_CVAR_CH4_CMA_ENABLE")
    kind: SettingKind = Field("env",
                              description="env (environment variable) or config (set in code)")
    type: SettingType = Field(description="int, bytes, bool, str, enum, float, list")
    unit: Optional[str] = None
    allowed: Optional[list[Scalar]] = Field(None, description="enum values")
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    defaults: list[VersionedDefault] = Field(default_factory=list)
    versions: Optional[str] = Field(None, description="versions in which the name is valid")
    renamed_to: Optional[str] = Field(None, description="newer name, when this one is outdated")
    aliases: list[str] = Field(default_factory=list, description="other names read, e.g. prefixes")
    separator: Optional[str] = Field(None, description="list variables: item separator")
    description: str = ""
    source: str = Field(description="where the facts come from: doc URL, PR, file")
    needs: list[Need] = Field(default_factory=list,
                              description="what the ranks must share for some values (a "
                                          "launch wrapper that isolates ranks breaks it)")

    def default_for(self, version: Optional[str]) -> Optional[Scalar]:
        """The default value for ``version`` (None when unknown or no range matches)."""
        if version is None:
            return None
        for d in self.defaults:
            if version_in(version, d.versions):
                return d.value
        return None

    def valid_for(self, version: Optional[str]) -> bool:
        """True when the name is understood by ``version`` (unknown version: True)."""
        return version is None or self.versions is None or version_in(version, self.versions)


def version_in(version: str, spec: str) -> bool:
    """True when ``version`` satisfies the PEP 440 specifier ``spec``; unparsable: False."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) in SpecifierSet(spec)
    except (InvalidVersion, InvalidSpecifier):
        return False


def knob_named(knobs: Iterable[Knob], name: str) -> Knob:
    """The record of ``knobs`` named ``name`` (its canonical name or an alias).  Raises
    ``KeyError`` when none is."""
    for k in knobs:
        if name == k.name or name in k.aliases:
            return k
    raise KeyError(name)
