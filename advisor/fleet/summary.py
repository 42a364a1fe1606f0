"""Per-node summary sidecars: ``X.summary.json`` beside ``X.toml``, trusted only for X's bytes.

Parsing a node profile with tomllib is what a fleet report spends its time on (about 20 ms per
thinned profile here, so 10,000 nodes took minutes).  ``advisor probe --thin -o X.toml`` therefore
also writes ``X.summary.json``: what :class:`advisor.fleet.nodes.NodeSummary` keeps of the node
(class id and class facts, each probe's status and reason, the headline figures) together with
the SHA-256 of the exact bytes of ``X.toml``, the profile's schema version and the advisor
version that computed the figures.

The report (``advisor.fleet.nodes.summarize``) reads ``X.toml``'s bytes (size-limited as any
profile), hashes them, and uses the sidecar only when it is a valid :class:`Sidecar` (size
limit :data:`MAX_SIDECAR_BYTES`, pydantic, unknown keys refused), its hash equals the profile's,
its versions equal this advisor's, its class id is the one its class facts hash to, and it holds the headlines of every probe the report knows
that is ``ok`` in it; in every other case the profile is parsed as before.  A missing,
malformed, foreign or stale sidecar thus never changes a node's state: the profile decides.
A sidecar written with a matching hash but false content needs write access to the node
directory, which lets one rewrite the profile itself as well; the pooled nodes of each class
are parsed in full in any case (``advisor.fleet.pool``).

Public API: :class:`Sidecar`, :func:`sidecar_path`, :func:`sidecar_of`, :func:`write_sidecar`,
:func:`read_sidecar`, :func:`one_line`, :data:`MAX_SIDECAR_BYTES`, :data:`SIDECAR_FORMAT`.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile

__all__ = ["SIDECAR_FORMAT", "MAX_SIDECAR_BYTES", "SUFFIX", "Sidecar", "one_line", "sidecar_path",
           "sidecar_of", "write_sidecar", "read_sidecar", "digest"]

#: Version of the sidecar's own layout; a reader uses only its own.
SIDECAR_FORMAT = 1
#: Largest sidecar read: 64 KiB.  One here is about 1 KB (3 probes, 3 headline figures, the
#: class facts); 64 KiB leaves room for many probes and GPUs and bounds a hostile file.
MAX_SIDECAR_BYTES = 64 * 1024
#: ``X.toml`` -> ``X.summary.json``.
SUFFIX = ".summary.json"

_Short = Field(max_length=1000)


class ProbeState(BaseModel):
    """One probe's result in a node profile: its status and reason (one line)."""

    model_config = ConfigDict(extra="forbid")
    status: str = Field(max_length=40)
    reason: Optional[str] = _Short


class Sidecar(BaseModel):
    """The summary of one node profile, valid only for the profile whose SHA-256 it names."""

    model_config = ConfigDict(extra="forbid")
    format: int
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    schema_version: int
    advisor_version: str = Field(max_length=100)
    class_id: str = Field(max_length=200)
    class_facts: dict[str, Any]
    fingerprint: Optional[str] = Field(None, max_length=200)
    results: dict[str, ProbeState] = Field(max_length=200)
    headline_probes: list[str] = Field(max_length=200)
    headlines: dict[str, float] = Field(max_length=2000)

    @field_validator("headlines")
    @classmethod
    def _finite(cls, v: dict[str, float]) -> dict[str, float]:
        if not all(math.isfinite(x) for x in v.values()):
            raise ValueError("headline figures must be finite")
        return v


def digest(data: bytes) -> str:
    """SHA-256 of ``data``, hex."""
    return hashlib.sha256(data).hexdigest()


def sidecar_path(profile_path: "Path | str") -> Path:
    """``dir/X.toml`` -> ``dir/X.summary.json``."""
    p = Path(profile_path)
    return p.with_name(p.stem + SUFFIX)


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line for a node's reason: whitespace runs as one space, unprintable
    characters escaped (``\\x1b``), at most ``limit`` characters (cut with ``...``)."""
    line = " ".join(str(text).split())
    line = line if line.isprintable() else line.encode("unicode_escape").decode("ascii")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def sidecar_of(profile: "Profile", data: bytes, probes: Mapping[str, Any]) -> Sidecar:
    """The sidecar of ``profile``, whose TOML bytes are ``data``; headline figures by the
    ``headline`` method of ``probes`` (``advisor.fleet.headline``)."""
    from advisor import __version__
    from advisor.fleet.headline import headlines_of
    from advisor.machine_class import class_inputs

    heads: dict[str, float] = {}
    done = []
    results = {}
    for res in profile.results:
        results[res.probe] = ProbeState(status=res.status,
                                        reason=one_line(res.reason) if res.reason else None)
        if res.status == "ok" and res.probe in probes:
            done.append(res.probe)
            for fig, v in headlines_of(probes[res.probe], res.evidence).items():
                heads[f"{res.probe}:{fig}"] = v
    return Sidecar(format=SIDECAR_FORMAT, sha256=digest(data),
                   schema_version=profile.schema_version, advisor_version=__version__,
                   class_id=profile.facts.class_fingerprint(),
                   class_facts=class_inputs(profile.facts), fingerprint=profile.fingerprint,
                   results=results, headline_probes=done, headlines=heads)


def write_sidecar(profile: "Profile", profile_path: "Path | str",
                  probes: Mapping[str, Any]) -> Path:
    """Write ``profile``'s sidecar beside ``profile_path`` atomically (``advisor.save``), for the
    bytes ``advisor.save.save_profile`` writes for it; returns the sidecar's path.

    :raises ProfileError: the sidecar cannot be written (as ``atomic_write_text``).
    """
    from advisor.profile import profile_to_toml
    from advisor.save import atomic_write_text

    data = profile_to_toml(profile).encode("utf-8")
    path = sidecar_path(profile_path)
    atomic_write_text(path, sidecar_of(profile, data, probes).model_dump_json() + "\n")
    return path


def read_sidecar(profile_path: "Path | str", sha256: str,
                 probes: Mapping[str, Any]) -> Optional[Sidecar]:
    """The sidecar of ``profile_path`` when it may stand for a profile whose bytes hash to
    ``sha256`` (see the module doc); None otherwise, never raises for its content."""
    from advisor import __version__
    from advisor.models import SCHEMA_VERSION

    path = sidecar_path(profile_path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SIDECAR_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_SIDECAR_BYTES:
        return None
    try:
        sc = Sidecar.model_validate_json(raw)
    except (ValueError, RecursionError):  # pydantic.ValidationError is a ValueError
        return None
    if (sc.sha256 != sha256 or sc.format != SIDECAR_FORMAT
            or sc.schema_version != SCHEMA_VERSION or sc.advisor_version != __version__):
        return None
    blob = json.dumps(sc.class_facts, sort_keys=True, separators=(",", ":")).encode()
    if not sc.class_id.endswith("-" + hashlib.sha256(blob).hexdigest()[:8]):
        return None  # the class id is not the one its class facts give (advisor.machine_class)
    ok = {p for p, st in sc.results.items() if st.status == "ok"}
    if not (ok & set(probes)) <= set(sc.headline_probes) or \
            any(f.partition(":")[0] not in sc.headline_probes for f in sc.headlines):
        return None
    return sc
