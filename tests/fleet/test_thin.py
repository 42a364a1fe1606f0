"""``advisor probe --thin`` (advisor.fleet.thin) on the shipped full-probe profile, re-thinned."""

from __future__ import annotations

from support import SHIPPED_PROFILE

from advisor.fleet.thin import FLEET_PROFILE_BYTES, thin_profile
from advisor.profile import load_profile, profile_to_toml


def _max_samples(p) -> int:
    return max(len(pt.samples) for r in p.results for e in r.evidence for s in e.series
               for pt in s.points)


def test_thin_keeps_the_largest_sample_count_that_fits():
    full = load_profile(SHIPPED_PROFILE)
    thin, size = thin_profile(full, max_bytes=250_000)
    assert size == len(profile_to_toml(thin).encode()) <= 250_000
    assert 1 < _max_samples(thin) < _max_samples(full)
    # statistics of all samples are kept whole
    pt = lambda p: p.results[-1].evidence[-1].series[0].points[0]  # noqa: E731
    assert pt(thin).stats == pt(full).stats


def test_thin_of_a_full_probe_is_its_smallest_and_says_its_size():
    """The full probe's 360 mpich-cma sweep points alone do not fit 64 KiB even at one sample:
    thin returns its smallest form (one sample per point, no warm-up) and the true size."""
    full = load_profile(SHIPPED_PROFILE)
    thin, size = thin_profile(full)
    assert size > FLEET_PROFILE_BYTES and _max_samples(thin) == 1
    assert size < len(profile_to_toml(full).encode()) / 5
    small = full.model_copy(update={"results": [r for r in full.results
                                                if r.probe != "mpich-cma"]})
    thin, size = thin_profile(small)
    assert size <= FLEET_PROFILE_BYTES
