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


def _advice(profile, probes) -> dict:
    return {r.probe: probes[r.probe].recommend(list(r.evidence), profile.facts)
            for r in profile.results if r.status == "ok" and r.probe in probes}


def _settings(advice) -> list:
    return [(r.id, [(s.library, s.name, s.value) for s in r.settings], r.confidence)
            for r in advice.recommendations]


def test_rounding_loses_no_advice_and_thinning_keeps_the_settings(fleet_probes):
    """Rounded to SIGNIFICANT_DIGITS (all samples kept), every probe's recommend re-derives the
    full profile's advice exactly; thinned to the smallest form, host-buffer's and
    memory-pool's still do, and mpich-cma (which bootstraps the samples) keeps its settings and
    confidence, its quoted CIs moving (module doc)."""
    from advisor.fleet.thin import _round

    full = load_profile(SHIPPED_PROFILE)
    want = _advice(full, fleet_probes)
    assert want and _advice(_round(full), fleet_probes) == want
    thin, size = thin_profile(full)
    got = _advice(thin, fleet_probes)
    assert got.keys() == want.keys()
    for probe in want:
        assert _settings(got[probe]) == _settings(want[probe]), probe
        if probe != "mpich-cma":
            assert got[probe] == want[probe], probe
