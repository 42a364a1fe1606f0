"""Small per-node profiles for fleets (``advisor probe --thin``): at most :data:`FLEET_PROFILE_BYTES`.

A full profile keeps up to ``runner.MAX_SAMPLES_PER_POINT`` (48) samples per point, about 0.5 MB
for a full probe here (the mpich-cma sweep alone has 360 points).  A fleet writes one profile per
node into a shared directory and reads thousands of them back, so each is cut to what fits:

1. the samples of every point are thinned (``runner.thin_evidence``: every k-th, time order
   kept, statistics of all samples kept) with the largest per-point limit in
   :data:`LIMITS` whose profile fits;
2. if none fits, warm-up samples (first-use, not noise; no ``recommend`` reads them for
   advice) are dropped as well, again with the largest limit that fits.

Statistics (``stats``, computed on every sample before any cut) and ``values`` are never
dropped, so a profile that still does not fit is returned at its smallest; the caller states
the size (``thin_profile`` returns it).

Public API: :func:`thin_profile`, :data:`FLEET_PROFILE_BYTES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile

__all__ = ["FLEET_PROFILE_BYTES", "LIMITS", "thin_profile"]

#: Per-node profile size for fleets: 64 KiB (issue 15, deliverable 4).
FLEET_PROFILE_BYTES = 64 * 1024
#: Samples-per-point limits tried, largest first (48 is ``runner.MAX_SAMPLES_PER_POINT``).
LIMITS = (48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1)


def _thin(profile: "Profile", limit: int, warmup: bool) -> "Profile":
    from advisor.runner import thin_evidence

    def ev(e):
        e = thin_evidence(e, limit)
        if warmup:
            return e
        return e.model_copy(update={"series": [s.model_copy(update={"points": [
            p.model_copy(update={"warmup": []}) for p in s.points]}) for s in e.series]})

    return profile.model_copy(update={"results": [
        r.model_copy(update={"evidence": [ev(e) for e in r.evidence]}) for r in profile.results]})


def thin_profile(profile: "Profile", max_bytes: int = FLEET_PROFILE_BYTES) -> "tuple[Profile, int]":
    """``profile`` with its evidence thinned until its TOML is at most ``max_bytes`` bytes.

    :return: ``(thinned profile, its TOML size in bytes)``; the size may exceed ``max_bytes``
        when even one sample per point and no warm-up samples do not fit (see module doc).
    """
    from advisor.profile import profile_to_toml

    best = None
    for warmup in (True, False):
        for limit in LIMITS:
            cand = _thin(profile, limit, warmup)
            size = len(profile_to_toml(cand).encode())
            if size <= max_bytes:
                return cand, size
            if best is None or size < best[1]:
                best = (cand, size)
    return best
