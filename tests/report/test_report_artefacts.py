"""A profile recorded before artefact points lost their bandwidth is shown by today's rules:
``show`` (rows, ``--json``), ``report`` (figures) and ``fleet`` (pooled evidence, headlines)
re-derive the labels from the recorded conditions and never show an artefact's figure."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from advisor.cli import app
from advisor.fleet.headline import headlines_of
from advisor.fleet.pool import pool_evidence
from advisor.measure import summarize
from advisor.models import Conditions, Evidence, PluginResult, Point, Series
from advisor.profile import load_profile
from advisor.report.evidence import evidence_rows
from advisor.report.collect import collect_figures
from advisor.save import save_profile
from support import SHIPPED_PROFILE, sample_profile

MiB = 1 << 20


def _pt(x, median, seed):
    s = list(median * (1 + 0.01 * np.random.default_rng(seed).standard_normal(20)))
    return Point(x=float(x), label="default", samples=s, stats=summarize(s))


def _old_profile():
    """A memcpy sweep written by an old advisor: the destination was untouched (recorded), the
    bandwidth falls with size (page faults in the timed region), and no point is labelled."""
    pts = [_pt(m * MiB, bw, i) for i, (m, bw) in enumerate(((1, 12.3e9), (4, 9.1e9),
                                                             (16, 6.2e9), (64, 4.4e9)))]
    ev = Evidence(id="memcpy-sweep", series=[Series(name="default", unit="bytes/s",
                                                    x_name="nbytes", x_unit="bytes", points=pts)],
                  conditions=Conditions(notes={"src_fill": "random", "dst_fill": "untouched"}))
    res = PluginResult(plugin="host-buffer", probe="host-buffer", status="ok", evidence=[ev])
    return sample_profile(results=[res])


def test_old_profile_row_has_the_label_not_the_bandwidth(tmp_path):
    (row,) = evidence_rows(_old_profile())
    assert row[4] == "none (artefacts only)" and "first touch" in row[6]
    path = save_profile(_old_profile(), tmp_path / "old.toml")
    out = CliRunner().invoke(app, ["show", "-p", str(path)])
    assert out.exit_code == 0, out.output
    assert "first touch" in out.output
    for figure in ("12.3", "9.1 GB", "6.2", "4.4 GB"):
        assert figure not in out.output
    got = CliRunner().invoke(app, ["show", "-p", str(path), "--json"])
    pts = json.loads(got.output)["results"][0]["evidence"][0]["series"][0]["points"]
    assert all(p["artefact"].startswith("artefact: first touch") for p in pts)
    assert not any(p.get("samples") or p.get("stats") for p in pts)


def test_shipped_old_style_zero_page_point_is_shown_without_its_bandwidth(tmp_path):
    prof = load_profile(SHIPPED_PROFILE)
    hb = next(r for r in prof.results if r.probe == "host-buffer")
    z = next(e for e in hb.evidence if e.id == "zero-page-memcpy")
    old = z.series[0].point("untouched")
    assert old.artefact and old.stats is not None  # recorded with a bandwidth on the artefact
    got = CliRunner().invoke(app, ["show", "-p", str(SHIPPED_PROFILE), "--json"])
    shown = json.loads(got.output)
    hb2 = next(r for r in shown["results"] if r["probe"] == "host-buffer")
    z2 = next(e for e in hb2["evidence"] if e["id"] == "zero-page-memcpy")
    u = next(p for p in z2["series"][0]["points"] if p.get("label") == "untouched")
    assert u["artefact"] == old.artefact and "stats" not in u and not u.get("samples")
    # report: the zero-page figure draws no artefact bandwidth, it names the artefact instead
    from advisor.plugins import load

    figs = collect_figures(prof, load().probes)
    spec = next(s for p, s in figs.items() if s.id == "zero-page-memcpy")
    assert not any(s.role == "reference" for s in spec.series)
    drawn = [y for s in spec.series for y in s.y]
    assert old.stats.median not in drawn
    # ... and names it where it would stand: a cross in its category, no bandwidth
    x = next(k for k, n in spec.names.items() if n == "untouched")
    assert any(m.x == x and m.shape == "x" and m.y is None and "zero page" in m.label
               for m in spec.marks)


def test_fleet_reads_nodes_by_the_same_rules():
    old = _old_profile().results[0].evidence
    (pooled,) = pool_evidence([old, old])
    assert all(p.artefact and not p.samples for p in pooled.series[0].points)

    class Probe:
        @staticmethod
        def headline(evidence):
            from advisor.specs.headline import median_at_largest_x

            return {"x_bytes_per_s": median_at_largest_x(evidence[0].series[0])}

    assert headlines_of(Probe(), old) == {}  # None: the only figures are artefacts
