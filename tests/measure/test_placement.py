"""Placement (4K aliasing) and first touch: pure rules on constructed data, and the harness'
placed buffers on this machine (properties that hold on any x86 or aarch64 machine, under load:
addresses and fills, never speeds)."""

import numpy as np
import pytest

from advisor.measure import (
    ALIAS_SKEW_BYTES,
    ALIAS_WINDOW_BYTES,
    aliasing_artefact,
    distance_facts,
    first_touch_artefact,
    measure_ceiling,
    near_power_of_two,
    placed_pair,
    placed_pair_with_control,
    placement_of,
    residency,
)
from advisor.measure.placement import ALIASING_LABEL, FIRST_TOUCH_LABEL

KiB, MiB = 1 << 10, 1 << 20


@pytest.mark.parametrize("d, near", [
    (0, True), (64, True), (4096, True), (1 << 20, True), (-(1 << 20), True),
    ((1 << 20) + 4095, True), ((1 << 20) - 4095, True), ((1 << 20) + 4096, False),
    ((1 << 20) + ALIAS_SKEW_BYTES + 4096, False), (3 * (1 << 20), False),
    ((1 << 21) - 4096, False), ((1 << 21) - 4095, True),
])
def test_near_power_of_two(d, near):
    assert near_power_of_two(d) is near


def test_near_power_of_two_rejects_bad_window():
    with pytest.raises(ValueError):
        near_power_of_two(1, window=0)


def test_distance_facts_of_adjacent_power_of_two_mappings():
    """Two 64 MiB mappings the kernel put side by side: exactly 2^26 apart, aliasing."""
    p = distance_facts(0x7F0000000000, 0x7F0000000000 + 64 * MiB)
    assert p.near_power_of_two and p.distance_mod_4096 == 0
    assert p.notes() == {"placement_distance_bytes": 64 * MiB, "placement_distance_mod_4096": 0,
                         "placement_near_power_of_two": True}
    q = distance_facts(0x7F0000000000, 0x7F0000000000 - (3 * 64 * MiB + ALIAS_SKEW_BYTES))
    assert not q.near_power_of_two and q.distance_mod_4096 == ALIAS_SKEW_BYTES


def test_aliasing_artefact_flags_a_spread_beyond_the_floor():
    rng = np.random.default_rng(0)
    skewed = 10e9 * (1 + 0.01 * rng.standard_normal(40))
    aliased = 6e9 * (1 + 0.01 * rng.standard_normal(40))
    label = aliasing_artefact(aliased, skewed, noise_floor=0.05)
    assert label is not None and label.startswith(ALIASING_LABEL)
    # same placement twice (A/A): no artefact
    again = 10e9 * (1 + 0.01 * rng.standard_normal(40))
    assert aliasing_artefact(skewed, again, noise_floor=0.05) is None
    # a 3 % spread inside a measured 5 % floor is noise, not aliasing
    assert aliasing_artefact(skewed, skewed * 1.03, noise_floor=0.05) is None


def _curve(medians, n=20, seed=0):
    rng = np.random.default_rng(seed)
    return [(float(x), list(m * (1 + 0.01 * rng.standard_normal(n)))) for x, m in medians]


FALLING = [(1 * MiB, 12e9), (4 * MiB, 9e9), (16 * MiB, 6e9), (64 * MiB, 4e9)]


def test_first_touch_artefact_needs_an_untouched_destination():
    pts = _curve(FALLING)
    label = first_touch_artefact(pts, dst_fill="untouched", noise_floor=0.05)
    assert label is not None and label.startswith(FIRST_TOUCH_LABEL)
    # the same curve into a touched destination is a physical cliff (e.g. leaving the cache)
    assert first_touch_artefact(pts, dst_fill="random", noise_floor=0.05) is None
    assert first_touch_artefact(pts, dst_fill=None, noise_floor=0.05) is None


def test_first_touch_artefact_flat_or_short_curves():
    flat = _curve([(1 * MiB, 10e9), (4 * MiB, 10.1e9), (16 * MiB, 9.9e9)])
    assert first_touch_artefact(flat, dst_fill="untouched", noise_floor=0.05) is None
    assert first_touch_artefact(_curve(FALLING[:1]), dst_fill="untouched", noise_floor=0.0) is None
    assert first_touch_artefact([(1.0, []), (2.0, [])], dst_fill="untouched", noise_floor=0.0) is None


@pytest.mark.parametrize("nbytes", [64, 4 * KiB, 1 * MiB, 8 * MiB])
def test_placed_pair_is_never_a_power_of_two_apart(nbytes):
    src, dst, notes = placed_pair(nbytes, seed=3)
    assert src.nbytes == dst.nbytes == nbytes
    p = placement_of(src, dst)
    assert not p.near_power_of_two and p.distance_mod_4096 == ALIAS_SKEW_BYTES
    assert abs(p.distance_bytes) >= ALIAS_WINDOW_BYTES
    assert notes == {"src_fill": "random", "dst_fill": "random", **p.notes()}
    assert dst.__array_interface__["data"][0] % 64 == 0
    # the destination's first touch happened here, before any timing: every page written
    r = residency(dst)
    assert r.present == r.pages and r.private in (None, r.pages)
    assert np.all(dst != 0) and np.all(src != 0)


@pytest.mark.parametrize("nbytes", [64, 1 * MiB])
def test_placed_pair_with_control_adds_a_view_0_mod_4k_away(nbytes):
    src, dst, aliased, notes = placed_pair_with_control(nbytes, seed=3)
    p, c = placement_of(src, dst), placement_of(src, aliased)
    assert not p.near_power_of_two and p.distance_mod_4096 == ALIAS_SKEW_BYTES
    assert c.distance_mod_4096 == 0 and aliased.nbytes == nbytes
    assert notes == {"src_fill": "random", "dst_fill": "random", **p.notes(),
                     "control_distance_bytes": c.distance_bytes, "control_distance_mod_4096": 0}
    # a view of the destination's mapping: already touched, nothing more allocated or filled
    r = residency(aliased)
    assert r.present == r.pages and np.all(aliased != 0)


def test_placed_pair_records_an_untouched_destination():
    src, dst, notes = placed_pair(1 * MiB, dst_fill="untouched")
    assert notes["src_fill"] == "random" and notes["dst_fill"] == "untouched"
    assert residency(dst).private in (None, 0)


def test_placed_pair_bad_skew():
    for skew in (0, 100, 4096):
        with pytest.raises(ValueError):
            placed_pair(64, skew_bytes=skew)


def test_ceiling_records_its_placement():
    c = measure_ceiling(4 * MiB, min_samples=3, max_time_s=0.1)
    assert c.stats.median > 0
    assert c.notes["dst_fill"] == "random" and c.notes["src_fill"] == "random"
    assert c.notes["placement_near_power_of_two"] is False
    assert c.notes["placement_distance_mod_4096"] == ALIAS_SKEW_BYTES
