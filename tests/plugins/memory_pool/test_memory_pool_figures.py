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


def test_first_use_dots_are_the_stored_points(shipped):
    """Dot and whisker on the log axis (issue 27: never bars on a log axis), the two kinds of
    one operation side by side; the base-page dot labelled with the stored ratio and CI."""
    _, res, figs = shipped
    ev = next(e for e in res.evidence if e.id == "host-first-touch")
    spec = figs["first-use"]
    assert spec.y_unit == "s" and spec.y_scale == "log"
    assert {s.kind for s in spec.series} == {"points"}
    for s in spec.series:
        label = "huge" if s.role == "advised" else "nohuge"
        for x, y, lo, hi in zip(s.x, s.y, s.lo, s.hi):
            tick = spec.names[float(round(x))]
            assert abs(x - round(x)) < 0.5  # beside its operation's tick
            sname = "first-touch" if tick.startswith("first touch") else "register"
            p = next(p for p in ev.series_named(sname).points if p.label == label)
            assert (y, lo, hi) == (p.stats.median, p.stats.ci_low, p.stats.ci_high)
    huge, base = sorted(spec.series, key=lambda s: s.role != "advised")
    assert all(a != b for a, b in zip(huge.x, base.x))  # equal medians would not hide each other
    ratio = next(m for m in spec.marks if m.label.startswith(f"x{ev.values['register_ratio']:.2f}"))
    assert (ratio.x, ratio.y) in set(zip(base.x, base.y)) and ratio.role == "default"
    assert "97 repeats" in spec.caption and "THP madvise" in spec.caption


def test_pool_figure_plots_what_decided_the_choice(shipped):
    """Issue 27: the pool figure showed three equal bars of reserved bytes, the reason for the
    choice in a footnote.  It now plots what ``model.choose`` keeps candidates by, the share of
    backing blocks that are large-page multiples, labels each configuration with its blocks
    in large pages and its rounding waste (the tie-break), and names the tie rule."""
    prof, res, figs = shipped
    spec = figs["pool-waste"]
    assert spec.caption.startswith("Computed, not measured") and spec.y_unit == "%"
    w = from_evidence(res.evidence)
    lp = 2 << 20
    current = model.evaluate(w.current, w.sizes, lp)
    by_role = {s.role: s for s in spec.series}
    assert by_role["default"].y == [0.0]  # 1 GiB + 16 B: not a multiple of 2 MiB
    assert by_role["advised"].y == [100.0] and by_role["reference"].y == [100.0]
    labels = {m.x: m.label for m in spec.marks}
    assert labels[0.0].startswith(f"0 of {len(current.backing)} blocks a multiple\n"
                                  "512 x 2 MiB + 16 B")
    chosen = by_role["advised"].x[0]
    rec = next(r for r in res.recommendations if r.id == "host-pool-large-page-blocks")
    align = next(s.value for s in rec.settings if s.name.endswith("ALIGNMENT_BYTES"))
    assert spec.names[chosen].split("\n")[1].startswith(f"{align >> 20} MiB, ")
    assert "513 x 2 MiB, waste 0 B" in labels[chosen]
    # both candidates qualify with no waste: the figure says the tie rule chose
    assert any("tie" in n and "the tie rule chose large-page alignment" in n for n in spec.notes)
    # a block of 1 GiB - 16 B is written exactly, never rounded to 1024 MiB
    assert "compensated block\n16 B, 1 GiB - 16 B" in spec.names.values()
    assert all("1024 MiB" not in n for n in spec.names.values())
