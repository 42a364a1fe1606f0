"""Knob records: the settings a library understands, as data.

Plugins register ``Knob`` records through ``advisor_register_knobs``; ``emit`` uses them to pick
names valid for the detected library version and ``lint`` to check env files.  Version ranges are
PEP 440 specifiers (``packaging.specifiers.SpecifierSet``), e.g. ``">=4.3,<5"``.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from advisor.models import Model, Scalar, SettingKind, SettingType


class VersionedDefault(Model):
    versions: str = Field(description="PEP 440 specifier, e.g. '>=5.0'")
    value: Scalar


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
