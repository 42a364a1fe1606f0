"""Name history of a library: the names each release reads, with renames and removals.

The data are committed JSON files (``advisor/libraries/data/``), one per release, made by the
library's own list tool (for MPICH: ``scripts/mpich-cvar-history.py`` runs each release wheel's
``mpivars``).  A release is a ``major.minor`` series: its file holds the names of the newest
patch release recorded (MPICH keeps CVAR names within a series).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class NameInfo:
    """One name in one release: the library's type word, default as printed, family."""

    type: Optional[str]
    default: Optional[str]
    family: Optional[str]


@dataclass(frozen=True)
class Fate:
    """What happened to a name that the asked release does not read.

    ``kind``: ``renamed`` (``new`` is the name in the asked release), ``removed`` (``family``:
    the family it belonged to) or ``added`` (the name exists only from ``release`` on).
    ``release``: the release where that happened (``X`` in "renamed in X")."""

    kind: str
    release: str
    new: Optional[str] = None
    family: Optional[str] = None


def series(version: Optional[str]) -> Optional[str]:
    """``"5.0.11"`` -> ``"5.0"`` (the ``major.minor`` release a recorded file stands for);
    None when ``version`` is empty or not a version."""
    if not version:
        return None
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    return f"{v.major}.{v.minor}"


def _key(release: str) -> Version:
    return Version(release)


@dataclass
class NameHistory:
    """Names per release (``releases``: ``"4.3" -> {name: NameInfo}``) and renames per release
    (``renames``: ``"5.0" -> {old: new}``: ``old`` was read up to the previous release, ``new``
    from this one on)."""

    library: str
    releases: dict[str, dict[str, NameInfo]] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)  # release -> exact version recorded
    renames: dict[str, dict[str, str]] = field(default_factory=dict)
    source: str = ""

    @classmethod
    def load(cls, library: str, directory: Path, pattern: str) -> "NameHistory":
        """Read ``directory/pattern`` files (``{"release", "version", "source", "names":
        {name: [type, default, family]}}``) and ``directory/<library>-renames.json``
        (``{"renames": {release: {old: new}}}``).  Raises ``OSError``/``ValueError`` when the
        committed data are missing or malformed (a packaging error, not user input)."""
        hist = cls(library)
        for path in sorted(directory.glob(pattern)):
            doc = json.loads(path.read_text(encoding="utf-8"))
            rel = str(doc["release"])
            hist.releases[rel] = {n: NameInfo(*v) for n, v in doc["names"].items()}
            hist.versions[rel] = str(doc["version"])
            hist.source = str(doc.get("source", ""))
        ren = directory / f"{library}-renames.json"
        if ren.is_file():
            hist.renames = {str(k): dict(v) for k, v in
                            json.loads(ren.read_text(encoding="utf-8"))["renames"].items()}
        hist.releases = dict(sorted(hist.releases.items(), key=lambda kv: _key(kv[0])))
        return hist

    def release_of(self, version: Optional[str]) -> Optional[str]:
        """The recorded ``major.minor`` series of ``version``; None when not recorded or
        unparsable (a Cray MPICH 8.1 is not an upstream release)."""
        rel = series(version)
        return rel if rel in self.releases else None

    def info(self, name: str, release: str) -> Optional[NameInfo]:
        return self.releases.get(release, {}).get(name)

    def known(self, name: str) -> bool:
        """True when any recorded release reads ``name``."""
        return any(name in names for names in self.releases.values())

    def family_of(self, name: str) -> Optional[str]:
        """The family of ``name`` in the newest release that reads it."""
        for names in reversed(list(self.releases.values())):
            if name in names:
                return names[name].family
        return None

    def fate(self, name: str, release: str) -> Optional[Fate]:
        """Why ``release`` does not read ``name``; None when it does, or when no recorded
        release ever read it (a misspelling, not history)."""
        order = list(self.releases)
        if release not in self.releases or name in self.releases[release]:
            return None
        at = order.index(release)
        earlier = [r for r in order[:at] if name in self.releases[r]]
        if not earlier:
            later = [r for r in order[at + 1:] if name in self.releases[r]]
            return Fate("added", later[0]) if later else None
        last = earlier[-1]
        current, changed = name, None
        for r in order[order.index(last) + 1: at + 1]:
            new = self.renames.get(r, {}).get(current)
            if new is not None:
                current, changed = new, changed or r
            elif current not in self.releases[r]:
                return Fate("removed", r, family=self.releases[last][name].family)
        if current != name and current in self.releases[release]:
            return Fate("renamed", changed or release, new=current)
        nxt = order[order.index(last) + 1]
        return Fate("removed", nxt, family=self.releases[last][name].family)
