"""``advisor fleet report`` on node directories made from the recorded profile."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from fleet_support import scaled, write_node

from advisor.fleet.pool import pool_evidence
from advisor.fleet.report import build_report, compress_hostlist
from advisor.models import Evidence, Point, Series
from advisor.profile import load_profile

ENV = dict(os.environ)


def _advisor(*args):
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, env=ENV, timeout=120)


def test_outlier_node_flagged_others_ok_and_class_profile_written(fleet_dir):
    rep = build_report(fleet_dir)
    states = {n.name: n.state for n in rep.nodes}
    assert states == {"node1": "ok", "node2": "ok", "node3": "outlier", "node4": "ok",
                      "node5": "ok"}
    node3 = next(n for n in rep.nodes if n.name == "node3")
    assert {f.figure for f in node3.flags} >= {
        "mpich-cma:cma_on_bandwidth_largest_bytes_per_s"}
    assert all(f.rule == "mad" for f in node3.flags)
    assert rep.flagged_hostlist == "node3"
    (cls,) = rep.classes
    assert cls.nodes == [f"node{i}" for i in range(1, 6)] and cls.pooled == 4  # node3 left out
    prof = load_profile(cls.profile_path)
    assert "class profile of 5 nodes (node[1-5])" in prof.provenance.command
    assert {r.probe: r.status for r in prof.results}["mpich-cma"] == "ok"


def test_class_profile_pools_the_nodes_samples(fleet_dir):
    rep = build_report(fleet_dir)
    prof = load_profile(rep.classes[0].profile_path)
    node = load_profile(fleet_dir / "node1.toml")
    ev = Evidence.find(next(r for r in prof.results if r.probe == "host-buffer").evidence,
                       "memcpy-sweep")
    one = Evidence.find(next(r for r in node.results if r.probe == "host-buffer").evidence,
                        "memcpy-sweep")
    p, q = ev.series_named("default").points[0], one.series_named("default").points[0]
    assert len(p.samples) == 4 * len(q.samples)  # four healthy nodes, thin profiles
    assert p.stats.n == 4 * q.stats.n


def test_pool_evidence_concatenates_by_point_and_skips_artefacts():
    def ev(samples, artefact=None):
        return Evidence(id="e", series=[Series(name="s", unit="s", points=[
            Point(x=1, label="a", samples=samples, artefact=artefact)])])

    (pooled,) = pool_evidence([[ev([1.0, 2.0])], [ev([3.0])], [ev([9.0], "above ceiling")]])
    pt = pooled.series[0].points[0]
    assert pt.samples == [1.0, 2.0, 3.0] and pt.artefact is None and pt.stats.median == 2.0


def test_another_class_is_grouped_apart(fleet_dir, thin_shipped):
    other = thin_shipped.model_copy(update={"facts": thin_shipped.facts.model_copy(update={
        "cpu": thin_shipped.facts.cpu.model_copy(update={"cores_logical": 4})})})
    write_node(fleet_dir, "big1", other)
    rep = build_report(fleet_dir)
    assert sorted(len(c.nodes) for c in rep.classes) == [1, 5]
    assert {n.name: n.state for n in rep.nodes}["big1"] == "ok"  # alone: no MAD rule
    assert all(os.path.exists(c.profile_path) for c in rep.classes)


def test_hostile_files_fail_one_line_each_and_never_stop_the_report(fleet_dir):
    (fleet_dir / "bad1.toml").write_text("schema_version = [\n")
    whole = (fleet_dir / "node1.toml").read_bytes()  # cut inside a string: a torn write
    cut = whole.index(b' = "', 5000) + 6
    (fleet_dir / "bad2.toml").write_bytes(whole[:cut])
    (fleet_dir / "bad3.toml").write_text('schema_version = 99\n')
    (fleet_dir / "bad4.toml").write_text('[tool.poetry]\nname = "x"\n')
    (fleet_dir / "bad5.toml").write_bytes(b"a = 1\x00\n")
    with open(fleet_dir / "bad6.toml", "wb") as fh:  # sparse, larger than any profile
        fh.truncate(32 * 1024 * 1024)
    (fleet_dir / "bad7.toml").mkdir()
    (fleet_dir / "bad8.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    os.symlink("/dev/zero", fleet_dir / "bad9.toml")
    rep = build_report(fleet_dir)
    bad = {n.name: n for n in rep.nodes if n.name.startswith("bad")}
    assert len(bad) == 9 and all(n.state == "failed" for n in bad.values())
    assert all(n.reason and "\n" not in n.reason for n in bad.values())
    assert "schema 99" in bad["bad3"].reason
    assert "schema_version" in bad["bad4"].reason
    assert {n.name: n.state for n in rep.nodes}["node1"] == "ok"
    assert rep.flagged_hostlist == "bad[1-9],node3"


def test_missing_expected_node_is_no_result_apart_from_failed(fleet_dir):
    (fleet_dir / "node4.toml").unlink()
    rep = build_report(fleet_dir, expected=[f"node{i}" for i in range(1, 7)])
    states = {n.name: n.state for n in rep.nodes}
    assert states["node4"] == states["node6"] == "no-result"
    assert rep.to_json()["hostlists"]["no-result"] == "node[4,6]"
    assert rep.to_json()["counts"] == {"ok": 3, "outlier": 1, "failed": 0, "no-result": 2,
                                       "not-applicable": 0}


def test_not_applicable_node(fleet_dir, thin_shipped):
    na = thin_shipped.model_copy(update={"results": [
        r.model_copy(update={"status": "not-applicable", "reason": "no MPI", "evidence": [],
                             "recommendations": [], "findings": []})
        for r in thin_shipped.results]})
    write_node(fleet_dir, "node9", na)
    rep = build_report(fleet_dir)
    row = next(n for n in rep.nodes if n.name == "node9")
    assert row.state == "not-applicable" and "no MPI" in row.reason


def test_baseline_and_floor_rules(fleet_dir, thin_shipped):
    base = fleet_dir.parent / "baseline.toml"
    write_node(fleet_dir.parent, "baseline", scaled(thin_shipped, "host-buffer", 1.2))
    rep = build_report(fleet_dir, baseline=base, tolerance=0.05)
    flagged = {f.node for f in rep.flags if f.rule == "baseline"}
    assert flagged == {f"node{i}" for i in range(1, 6)}  # all about 17 % below the baseline
    rep = build_report(fleet_dir, floors={"cma_on_bandwidth_largest_bytes_per_s": 6e9})
    assert {f.node for f in rep.flags if f.rule == "floor"} == {"node3"}


def test_compress_hostlist():
    assert compress_hostlist(["n2", "n1", "n3", "n10"]) == "n[1-3,10]"
    assert compress_hostlist([]) == ""


@pytest.mark.slow
def test_cli_json_report_and_class_profile_emits(fleet_dir):
    (fleet_dir / "bad.toml").write_text("x")
    r = _advisor("fleet", "report", str(fleet_dir), "--json", "--expected", "node[1-6]")
    assert r.returncode == 1, r.stderr  # flagged nodes
    doc = json.loads(r.stdout)
    assert doc["flagged_hostlist"] == "bad,node[3,6]"
    assert doc["hostlists"]["outlier"] == "node3" and doc["hostlists"]["no-result"] == "node6"
    path = doc["classes"][0]["profile"]
    e = _advisor("emit", "--format", "env", "--profile", path)
    assert e.returncode == 0, e.stderr
    assert "MPIR_CVAR" in e.stdout or "GLIBC_TUNABLES" in e.stdout
    assert "# Machine: class " in e.stdout  # the class, not the node its facts came from
    t = _advisor("fleet", "report", str(fleet_dir))
    assert t.stdout.rstrip().splitlines()[-1] == "flagged: bad,node3"
    # the class profiles the nodes check against were rewritten: said on stderr
    assert (f"fleet: 1 class profile(s) written with bands at k=6, MAD floor 0.01 of the "
            f"median: {path}"
            in t.stderr)


@pytest.mark.parametrize("k", ["0", "-1", "nan", "inf"])
def test_k_of_zero_or_below_or_not_finite_is_bad_input(fleet_dir, k):
    """k = 0 makes each band one value: every node an outlier, every check a drift; an
    infinite k left the class profile unwritten behind a pydantic error, and exit 0 (a new
    user's finding).  One line, the same for each."""
    r = _advisor("fleet", "report", str(fleet_dir), "--k", k)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"--k {k}: expected a finite number above 0" in r.stderr, r.stderr


def test_the_mad_floor_widens_the_band_of_steady_nodes():
    """Four nodes within 2 % and one 15 % above: at the default floor (1 %) the MAD of the
    steady four (0.02) puts the fifth outside median ± 6·MAD; a floor of 5 % of the median
    (a site whose nodes move that much run to run) holds it."""
    from advisor.fleet.outliers import MAD_FLOOR_REL, robust_band, robust_flags

    vals = {"a": 1.0, "b": 1.02, "c": 0.98, "d": 1.0, "e": 1.15}
    assert [f.node for f in robust_flags(vals, "p:x_bytes_per_s")] == ["e"]
    assert robust_flags(vals, "p:x_bytes_per_s", mad_floor=0.05) == []
    lo, hi, med, mad = robust_band(vals, 6.0, 0.05)
    assert (med, mad) == (1.0, 0.05) and (lo, hi) == pytest.approx((0.7, 1.3))
    assert robust_band(vals, 6.0)[3] == pytest.approx(0.02) and 0.02 > MAD_FLOOR_REL


@pytest.mark.slow
def test_the_mad_floor_comes_from_the_option_or_the_site_and_is_recorded(fleet_dir, tmp_path):
    """node3 reads CMA at half its class's rate: an outlier at the 1 % floor, inside the band
    at a floor of 20 % (± 6·20 %).  The floor reaches the JSON report and the class profile."""
    r = _advisor("fleet", "report", str(fleet_dir), "--json", "--mad-floor", "0.2")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["mad_floor"] == 0.2 and doc["hostlists"]["outlier"] == ""
    assert load_profile(doc["classes"][0]["profile"]).fleet.mad_floor == 0.2
    site = tmp_path / "config" / "site.toml"  # tmp_path is fleet_dir: not a node's file
    site.parent.mkdir()
    site.write_text("[fleet]\nmad_floor = 0.2\n")
    r = subprocess.run([sys.executable, "-m", "advisor", "fleet", "report", str(fleet_dir),
                        "--json"], capture_output=True, text=True, timeout=120,
                       env={**ENV, "ADVISOR_SITE_CONFIG": str(site)})
    assert r.returncode == 0 and json.loads(r.stdout)["mad_floor"] == 0.2, r.stderr
    r = _advisor("fleet", "report", str(fleet_dir), "--json")  # the default: node3 flagged
    assert r.returncode == 1 and json.loads(r.stdout)["mad_floor"] == 0.01


@pytest.mark.parametrize("floor", ["0", "1", "-0.1", "nan"])
def test_a_mad_floor_outside_0_1_is_bad_input(fleet_dir, floor):
    r = _advisor("fleet", "report", str(fleet_dir), "--mad-floor", floor)
    assert r.returncode == 2 and "--mad-floor" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_band_down_to_zero_is_said(tmp_path):
    """Nodes that disagree widely give a band reaching 0: no slow node can be flagged on it."""
    from advisor.fleet.report import _open_band_warnings
    from types import SimpleNamespace as NS

    members = [NS(name=n, headlines={"p:copy_bytes_per_s": v})
               for n, v in (("a", 1.0e9), ("b", 3.5e9), ("c", 9.0e9))]
    (line,) = _open_band_warnings({"cls": members}, 6.0)
    assert line.startswith("class cls: the band of p:copy_bytes_per_s reaches ")
    assert "a slow node cannot be flagged on it" in line
    members[0].headlines["p:copy_bytes_per_s"] = 3.4e9  # close: the band stays above 0
    members[2].headlines["p:copy_bytes_per_s"] = 3.6e9
    assert _open_band_warnings({"cls": members}, 6.0) == []
    (line,) = _open_band_warnings({"cls": members}, 6.0, 0.2)  # the floor, not the nodes
    assert line.endswith("the MAD floor holds the MAD at 0.2 of the median (a smaller "
                         "--mad-floor or --k)")
    # a time's low side is the fast one: a slow node still lies above the band
    for m in members:
        m.headlines = {"p:first_touch_s": m.headlines["p:copy_bytes_per_s"] / 1e9}
    assert _open_band_warnings({"cls": members}, 6.0, 0.2) == []


def test_floor_option_refuses_bad_items():
    r = _advisor("fleet", "report", ".", "--floor", "x=fast")
    assert r.returncode == 2 and "--floor" in r.stderr and "Traceback" not in r.stderr


def test_an_empty_directory_or_an_unknown_floor_is_bad_input(tmp_path, fleet_dir):
    """A wrong or unmounted DIR, or a misspelt --floor figure, would otherwise pass silently
    (found by a new user)."""
    from advisor.errors import BadInputError

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BadInputError, match="no node profiles"):
        build_report(empty)
    rep = build_report(empty, expected=["n1"])  # expected nodes: all no-result
    assert {n.name: n.state for n in rep.nodes} == {"n1": "no-result"}
    with pytest.raises(BadInputError, match="--floor foo: no node has this headline figure"):
        build_report(fleet_dir, floors={"foo": 1.0})
