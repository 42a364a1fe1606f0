"""Artefacts in host-buffer evidence (constructed data): aliasing placement, first touch in the
timed region, untouched-only measurements, artefact points never shown as bandwidths, and the
glibc non-temporal threshold derived from a missing cache size."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.measure import summarize
from advisor.models import Conditions, CpuFacts, Evidence, Facts, Point, Series
from advisor_host_buffer import evidence
from advisor_host_buffer.recommend import recommend

MiB = 1 << 20


def _pt(x, median, label=None, n=20, seed=0, artefact=None):
    rng = np.random.default_rng(seed)
    s = list(median * (1 + 0.01 * rng.standard_normal(n)))
    return Point(x=float(x), label=label, samples=s, stats=summarize(s), artefact=artefact)


def _ids(advice):
    return {f.id: f for f in advice.findings}


FACTS = Facts(cpu=CpuFacts(arch="x86_64", cache_l3_bytes=32 * MiB))


def _sweep(notes, medians=((1, 12e9), (4, 9e9), (16, 6e9), (64, 4e9))):
    pts = [_pt(m * MiB, bw, label="default", seed=i) for i, (m, bw) in enumerate(medians)]
    return Evidence(id=evidence.EV_SWEEP, series=[Series(name="default", unit=evidence.BPS, x_name="nbytes",
                                                         x_unit="bytes", points=pts)],
                    conditions=Conditions(notes=notes), values={"noise_floor.within_run": 0.02})


def test_falling_curve_into_untouched_destination_is_a_first_touch_artefact():
    ev = _sweep({"src_fill": "random", "dst_fill": "untouched"})
    f = _ids(recommend([ev], FACTS))
    assert "first-touch-in-timed-region" in f
    assert f["first-touch-in-timed-region"].severity == "warning"
    # the same curve into a touched destination is not (it may be a real cliff)
    ev2 = _sweep({"src_fill": "random", "dst_fill": "random"})
    assert "first-touch-in-timed-region" not in _ids(recommend([ev2], FACTS))


def test_aliasing_placement_is_a_finding():
    ev = _sweep({"src_fill": "random", "dst_fill": "random", "placement_distance_bytes": 1 << 26,
                 "placement_distance_mod_4096": 0, "placement_near_power_of_two": True})
    f = _ids(recommend([ev], FACTS))
    assert "copy-placement-aliasing" in f and "4K aliasing" in f["copy-placement-aliasing"].message
    ok = _sweep({"placement_distance_bytes": (1 << 26) + 6144 + 4096,
                 "placement_distance_mod_4096": 2048, "placement_near_power_of_two": False})
    assert "copy-placement-aliasing" not in _ids(recommend([ok], FACTS))


def test_untouched_only_measurement_still_gets_its_finding():
    ev = Evidence(id=evidence.EV_ZERO_MEMCPY, series=[Series(name="copy", unit=evidence.BPS, points=[
        _pt(256 * MiB, 30e9, label=evidence.UNTOUCHED, artefact=evidence.ZERO_PAGE_ARTEFACT)])],
        values={"nbytes": 256 * MiB})
    f = _ids(recommend([ev], FACTS))
    assert "zero-page-untouched-only" in f
    assert "copy/untouched" in f["zero-page-untouched-only"].message
    assert "zero-page-inflation" not in f


def test_artefact_points_are_never_shown_as_bandwidths():
    ev = Evidence(id=evidence.EV_ZERO_OPENCL, series=[Series(name="h2d", unit=evidence.BPS, points=[
        _pt(1, 12.5e9, label=evidence.RANDOM),
        _pt(1, 987e9, label="mapped", artefact="artefact: above the ceiling")])],
        values={"nbytes": 1})
    f = _ids(recommend([ev], FACTS))["opencl-transfer-bandwidth"]
    assert "h2d random 12." in f.message and "GB/s" in f.message
    assert "987" not in f.message and "mapped: artefact" in f.message


@pytest.mark.parametrize("l3", [None, 0])
def test_nt_threshold_from_missing_cache_size(l3):
    facts = Facts(cpu=CpuFacts(arch="x86_64", cache_l3_bytes=l3, hypervisor_flag=True,
                               virtualization="kvm"))
    tun = Evidence(id=evidence.EV_TUNABLES, values={"glibc.cpu.x86_non_temporal_threshold.value": 0x4040,
                                                    "list_tunables_available": True})
    f = _ids(recommend([tun], facts))["glibc-nt-threshold-no-cache-size"]
    assert f.severity == "warning" and "dl-cacheinfo.h" in f.message and "kvm" in f.message
    assert f.evidence == [evidence.EV_TUNABLES]


def test_nt_threshold_finding_only_where_it_applies():
    tun = Evidence(id=evidence.EV_TUNABLES, values={"list_tunables_available": True})
    assert "glibc-nt-threshold-no-cache-size" not in _ids(recommend([tun], FACTS))
    arm = Facts(cpu=CpuFacts(arch="aarch64", cache_l3_bytes=None))
    assert "glibc-nt-threshold-no-cache-size" not in _ids(recommend([tun], arm))
