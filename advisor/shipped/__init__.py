"""Profiles shipped with hpc-advisor: measured on known machines, installed as package data.

Each ``<name>.toml`` in this package is a profile exactly as ``advisor probe`` wrote it; its
provenance (advisor version, command, time, duration, host) and facts are inside the file.
``index.toml`` adds what the file cannot say about itself: a one-line description of the machine
(``machine``) and how the probe was run (``how``: environment, budget, plugins).  A test keeps
the two sets of names equal (tests/unit/test_shipped.py).

The CLI selects a shipped profile with ``--profile @NAME`` (``advisor.cli.common``) and lists
them with ``advisor profiles list``.  The repository's ``profiles/`` keeps a symbolic link per
file, so paths such as ``profiles/x86_64-icelake-2core-vm.toml`` still work from a checkout.

Files are read from the installed package directory (``Path(__file__).parent``): hpc-advisor is
installed unpacked (pip wheels, editable installs), never imported from a zip.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from advisor.errors import BadInputError, did_you_mean
from advisor.models import Model

__all__ = ["SHIPPED_DIR", "ShippedProfile", "list_shipped", "shipped_names", "shipped_path",
           "SHIPPED_PREFIX"]

#: The directory of the shipped profiles (package data of ``advisor.shipped``).
SHIPPED_DIR = Path(__file__).resolve().parent
#: ``--profile @NAME`` names a shipped profile.
SHIPPED_PREFIX = "@"
_INDEX = "index.toml"


class IndexEntry(Model):
    """One ``[profiles.NAME]`` table of ``index.toml``."""

    machine: str
    how: str


class Index(Model):
    """``index.toml``: ``[profiles.NAME]`` per shipped profile."""

    profiles: dict[str, IndexEntry] = {}


@dataclass(frozen=True)
class ShippedProfile:
    """A shipped profile with its provenance.

    Attributes:
        name: what ``--profile @NAME`` takes (the file name without ``.toml``).
        path: the installed file.
        machine, how: from ``index.toml``.
        created: ISO 8601 UTC time the probe started (the profile's provenance).
        advisor_version, command, hostname, duration_s: the profile's provenance (seconds).
        fingerprint: the profile's 16-hex-digit machine fingerprint.
        probes: probe name -> status (``ok``, ``not-applicable``, ``failed``).
    """

    name: str
    path: Path
    machine: str
    how: str
    created: str
    advisor_version: str
    command: str
    hostname: str
    duration_s: float
    fingerprint: str
    probes: dict

    def as_dict(self) -> dict:
        """JSON-ready mapping (``path`` as a string)."""
        from dataclasses import asdict

        return {**asdict(self), "path": str(self.path)}


def _index() -> Index:
    """``index.toml`` validated.

    :raises BadInputError: unreadable, malformed TOML, unknown key or wrong type (one line
        naming the file and the first key at fault).
    """
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    from pydantic import ValidationError

    path = SHIPPED_DIR / _INDEX
    try:
        with path.open("rb") as fh:
            return Index.model_validate(tomllib.load(fh))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadInputError(f"{path}: {exc}") from None
    except ValidationError as exc:
        e = exc.errors()[0]
        key = ".".join(str(x) for x in e["loc"])
        raise BadInputError(f"{path}: {key}: {e['msg']}") from None


def shipped_names() -> list[str]:
    """Names of the shipped profiles, sorted (file names without ``.toml``, index excluded)."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.toml") if p.name != _INDEX)


def shipped_path(name: str) -> Path:
    """The file of shipped profile ``name`` (a leading ``@`` is accepted).

    :raises BadInputError: no shipped profile has that name (the message lists those there are).
    """
    bare = name[len(SHIPPED_PREFIX):] if name.startswith(SHIPPED_PREFIX) else name
    names = shipped_names()
    if bare not in names:
        near = did_you_mean(bare, names)
        raise BadInputError(f"--profile {SHIPPED_PREFIX}{bare}: no shipped profile of that name"
                            + (f"; did you mean {SHIPPED_PREFIX}{near}?" if near else "")
                            + f" (shipped: {', '.join(names) or 'none'}; see 'advisor profiles "
                            "list')")
    return SHIPPED_DIR / f"{bare}.toml"


def list_shipped() -> list[ShippedProfile]:
    """Every shipped profile with its provenance, sorted by name.

    :raises ProfileError: a shipped file does not validate (names the file and key).
    :raises BadInputError: ``index.toml`` is malformed or lacks a shipped profile's entry.
    """
    from advisor.profile import load_profile

    index = _index()
    out = []
    for name in shipped_names():
        entry = index.profiles.get(name)
        if entry is None:
            raise BadInputError(f"{SHIPPED_DIR / _INDEX}: no [profiles.{name}] entry for "
                                f"{name}.toml")
        path = SHIPPED_DIR / f"{name}.toml"
        prof = load_profile(path)
        pv = prof.provenance
        out.append(ShippedProfile(
            name=name, path=path, machine=entry.machine, how=entry.how, created=pv.created,
            advisor_version=pv.advisor_version, command=pv.command, hostname=pv.hostname or "",
            duration_s=pv.duration_s, fingerprint=prof.fingerprint,
            probes={r.probe: r.status for r in prof.results}))
    return out
