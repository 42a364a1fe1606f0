"""memory-pool figures (issue 17) against the shipped profile's evidence: the plotted first-use
medians and CIs are the stored ones; the waste figure is the pool model's, for the recorded
workload, with the chosen configuration the one the stored recommendation sets."""

from __future__ import annotations

import pytest

from advisor.profile import load_profile
from advisor_memory_pool import model
from advisor_memory_pool.plugin import HostPoolProbe
from advisor_memory_pool.workload import from_evidence
from support import SHIPPED_PROFILE


@pytest.fixture(scope="module")
def shipped():
    prof = load_profile(SHIPPED_PROFILE)
    res = next(r for r in prof.results if r.probe == "memory-pool-host")
    return prof, res, {f.id: f for f in HostPoolProbe().figures(res.evidence, prof.facts)}


def test_first_use_bars_are_the_stored_points(shipped):
    _, res, figs = shipped
    ev = next(e for e in res.evidence if e.id == "host-first-touch")
    spec = figs["first-use"]
    assert spec.y_unit == "s" and spec.y_scale == "log"
    for s in spec.series:
        label = "huge" if s.role == "advised" else "nohuge"
        for x, y, lo, hi in zip(s.x, s.y, s.lo, s.hi):
            sname = "first-touch" if spec.names[x].startswith("first touch") else "register"
            p = next(p for p in ev.series_named(sname).points if p.label == label)
            assert (y, lo, hi) == (p.stats.median, p.stats.ci_low, p.stats.ci_high)
    assert any(f"x{ev.values['register_ratio']:.2f}" in n for n in spec.notes)
    assert "97 repeats" in spec.caption and "THP madvise" in spec.caption


def test_waste_figure_is_the_models_and_marks_the_stored_choice(shipped):
    prof, res, figs = shipped
    spec = figs["pool-waste"]
    assert spec.caption.startswith("Computed, not measured")
    w = from_evidence(res.evidence)
    current = model.evaluate(w.current, w.sizes, 2 << 20)
    waste, reserved = spec.series
    assert waste.y[0] == current.waste_bytes
    assert reserved.y[0] == model.overhead_bytes(current)
    (chosen,) = spec.markers
    rec = next(r for r in res.recommendations if r.id == "host-pool-large-page-blocks")
    align = next(s.value for s in rec.settings if s.name.endswith("ALIGNMENT_BYTES"))
    assert f"({align >> 20} MiB, " in spec.names[chosen.value]
    # a block of 1 GiB - 16 B is written exactly, never rounded to 1024 MiB
    assert "compensated block (16 B, 1 GiB - 16 B)" in spec.names.values()
    assert all("1024 MiB" not in n for n in spec.names.values())
