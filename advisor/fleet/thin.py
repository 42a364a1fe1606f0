"""Small per-node profiles for fleets (``advisor probe --thin``): at most :data:`FLEET_PROFILE_BYTES`.

A full profile keeps up to ``measure.thinning.MAX_SAMPLES_PER_POINT`` (48) samples per point,
about 0.5 MB for a full probe here (the mpich-cma sweep alone has 360 points).  A fleet writes one profile per
node into a shared directory and reads thousands of them back, so each is cut to what fits:

0. every float of a point (samples, warm-up samples, statistics) is rounded to
   :data:`SIGNIFICANT_DIGITS` significant digits (``_round``);
1. the samples of every point are thinned (``measure.thinning.thin_evidence``: every k-th, time
   order kept, statistics of all samples kept) with the largest per-point limit in
   :data:`LIMITS` whose profile fits;
2. if none fits, warm-up samples (first-use, not noise; no ``recommend`` reads them for
   advice) are dropped as well, again with the largest limit that fits.

Statistics (``stats``, computed on every sample before any cut) and ``values`` are never
dropped, so a profile that still does not fit is returned at its smallest; the caller states
the size (``thin_profile`` returns it).

Measured on the shipped full probe (profiles/x86_64-icelake-2core-vm.toml, 478 KB): rounding
alone gives 353 KB with every probe's re-derived advice identical; one sample per point and no
warm-up gives 93.6 KB unrounded, 89.0 KB rounded.  The 360 points of the mpich-cma sweep
cost about 90 bytes each in TOML whatever their samples (table header, ``x``, ``label``, the
array), so a full probe does not fit 64 KiB; a probe with fewer points does.  Fewer samples also
change what ``recommend`` re-derives from this node's evidence alone for probes that bootstrap
the samples (mpich-cma's CIs and A/A floors); the node's recorded advice is the one given on all
samples at probe time, and a class profile pools the samples of up to 48 nodes
(``advisor.fleet.pool``).

Public API: :func:`thin_profile`, :data:`FLEET_PROFILE_BYTES`, :data:`SIGNIFICANT_DIGITS`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile

__all__ = ["FLEET_PROFILE_BYTES", "LIMITS", "SIGNIFICANT_DIGITS", "thin_profile"]

#: Per-node profile size for fleets: 64 KiB (issue 15, deliverable 4).
FLEET_PROFILE_BYTES = 64 * 1024
#: Samples-per-point limits tried, largest first (48 is ``measure.thinning.MAX_SAMPLES_PER_POINT``).
LIMITS = (48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1)
#: Significant digits kept of each sample and statistic: 6, a resolution of 0.0001 %, against a
#: smallest noise floor of about 0.8 % recorded in the shipped profile (its A/A floors): the
#: rounding is thousands of times below anything a probe can tell apart.  A rounded value can
#: still flip the last printed digit of a figure that lies on a rounding boundary, so the count
#: is the smallest that re-derives identical advice, text included, on the shipped profile
#: (measured: at 5 digits host-buffer prints 10.95 GB/s for 10.94, at 4 mpich-cma one A/A
#: floor 1.2 % for 1.3 %, verdicts unchanged; at 3 the advice of every probe changes).
SIGNIFICANT_DIGITS = 6

_STAT_FLOATS = ("median", "mean", "p5", "p95", "min", "max", "ci_low", "ci_high")


def _sig(v: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """``v`` rounded to ``digits`` significant digits (0, inf and nan unchanged)."""
    return float(f"{v:.{digits - 1}e}") if v and math.isfinite(v) else v


def _round(profile: "Profile") -> "Profile":
    """``profile`` with every sample, warm-up sample and statistic rounded (:func:`_sig`)."""

    def pt(p):
        upd = {"samples": [_sig(v) for v in p.samples], "warmup": [_sig(v) for v in p.warmup]}
        if p.stats is not None:
            upd["stats"] = p.stats.model_copy(update={
                k: _sig(getattr(p.stats, k)) for k in _STAT_FLOATS
                if getattr(p.stats, k) is not None})
        return p.model_copy(update=upd)

    return profile.model_copy(update={"results": [r.model_copy(update={"evidence": [
        e.model_copy(update={"series": [s.model_copy(update={"points": [pt(p) for p in s.points]})
                                        for s in e.series]}) for e in r.evidence]})
        for r in profile.results]})


def _thin(profile: "Profile", limit: int, warmup: bool) -> "Profile":
    from advisor.measure.thinning import thin_evidence

    def ev(e):
        e = thin_evidence(e, limit)
        if warmup:
            return e
        return e.model_copy(update={"series": [s.model_copy(update={"points": [
            p.model_copy(update={"warmup": []}) for p in s.points]}) for s in e.series]})

    return profile.model_copy(update={"results": [
        r.model_copy(update={"evidence": [ev(e) for e in r.evidence]}) for r in profile.results]})


def thin_profile(profile: "Profile", max_bytes: int = FLEET_PROFILE_BYTES) -> "tuple[Profile, int]":
    """``profile`` with its evidence rounded and thinned until its TOML is at most ``max_bytes``
    bytes (see the module doc for the steps and their measured effect).

    :return: ``(thinned profile, its TOML size in bytes)``; the size may exceed ``max_bytes``
        when even one sample per point and no warm-up samples do not fit (see module doc).
    """
    from advisor.profile import profile_to_toml

    profile = _round(profile)
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
