"""Summary sidecars (advisor.fleet.summary): used only for the exact bytes they name; a missing,
mismatched, malformed or hostile sidecar never changes what the node's profile says."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from fleet_support import write_node

from advisor.fleet import nodes
from advisor.fleet.report import build_report
from advisor.fleet.summary import MAX_SIDECAR_BYTES, sidecar_path, write_sidecar
from advisor.profile import load_profile


def _parsed(path, probes):
    """The summary the profile alone gives (its sidecar moved away for the call)."""
    car = sidecar_path(path)
    keep = car.with_name(car.name + ".away")
    if car.exists() or car.is_symlink():
        car.rename(keep)
    try:
        return nodes.summarize(path, probes)
    finally:
        if keep.exists() or keep.is_symlink():
            keep.rename(car)


def _node(tmp_path, thin_shipped, probes, name="node1", profile=None):
    write_node(tmp_path, name, profile or thin_shipped)
    path = tmp_path / f"{name}.toml"
    write_sidecar(load_profile(path), path, probes)
    return path


def test_a_matching_sidecar_stands_for_the_profile_and_says_the_same(
        tmp_path, thin_shipped, fleet_probes, monkeypatch):
    path = _node(tmp_path, thin_shipped, fleet_probes)
    car = json.loads(sidecar_path(path).read_text())
    assert car["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    want = _parsed(path, fleet_probes)
    assert want.state == "read" and want.headlines

    import advisor.profile

    def no_parse(*a, **k):
        raise AssertionError("the profile was parsed although its sidecar matches")

    monkeypatch.setattr(advisor.profile, "profile_from_text", no_parse)
    assert nodes.summarize(path, fleet_probes) == want


def _failed_variant(thin_shipped):
    return thin_shipped.model_copy(update={"results": [
        r.model_copy(update={"status": "failed", "reason": "rank 1 died"})
        if r.probe == "mpich-cma" else r for r in thin_shipped.results]})


HOSTILE = {
    "another profile's sidecar": None,  # filled in by the test: a healthy node's sidecar
    "not JSON": b"{not json",
    "unknown key": "extra",
    "too large": b" " * (MAX_SIDECAR_BYTES + 1),
    "class id not its facts' hash": "class",
    "foreign advisor version": "version",
    "NaN headline": "nan",
    "headline of a probe it claims none for": "heads",
    "a directory": "dir",
    "a link to /dev/zero": "zero",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_bad_sidecar_never_changes_the_node_state(tmp_path, thin_shipped, fleet_probes, kind):
    """The node's profile says mpich-cma failed; each sidecar claims otherwise or is broken:
    the report still says what the profile says."""
    healthy = _node(tmp_path, thin_shipped, fleet_probes, "good")
    path = _node(tmp_path, thin_shipped, fleet_probes, "node1", _failed_variant(thin_shipped))
    car = sidecar_path(path)
    mine = json.loads(car.read_text())
    good = json.loads(sidecar_path(healthy).read_text())
    lie = dict(good, sha256=mine["sha256"])  # claims all ok, for node1's bytes
    car.unlink()
    how = HOSTILE[kind]
    if how is None:
        car.write_text(json.dumps(good))
    elif isinstance(how, bytes):
        car.write_bytes(how)
    elif how == "extra":
        car.write_text(json.dumps(dict(lie, state="ok")))
    elif how == "class":
        car.write_text(json.dumps(dict(lie, class_id="icelake-2c-24g-00000000")))
    elif how == "version":
        car.write_text(json.dumps(dict(lie, advisor_version="0.0.1")))
    elif how == "nan":
        car.write_text(json.dumps(dict(lie, headlines={k: float("nan") for k in lie["headlines"]})))
    elif how == "heads":
        car.write_text(json.dumps(dict(lie, headline_probes=[])))
    elif how == "dir":
        car.mkdir()
    elif how == "zero":
        os.symlink("/dev/zero", car)
    got = nodes.summarize(path, fleet_probes)
    want = _parsed(path, fleet_probes)
    assert got == want and got.results["mpich-cma"][0] == "failed"
    rep = build_report(tmp_path, probes=fleet_probes, write_profiles=False)
    assert {n.name: n.state for n in rep.nodes}["node1"] == "failed"


def test_a_sidecar_left_from_before_a_rewrite_is_not_used(tmp_path, thin_shipped, fleet_probes):
    """The profile was rewritten (a re-run without --thin, or by hand): the old sidecar's hash
    no longer matches and the new bytes decide."""
    path = _node(tmp_path, thin_shipped, fleet_probes)
    write_node(tmp_path, "node1", _failed_variant(thin_shipped))
    assert nodes.summarize(path, fleet_probes).results["mpich-cma"][0] == "failed"


def test_probe_thin_writes_the_sidecar_the_report_uses(tmp_path, advisor_home):
    """A real (quick) probe with --thin writes X.toml and X.summary.json naming its bytes; the
    report reads the node as ok."""
    out = tmp_path / "fleet" / "n1.toml"
    out.parent.mkdir()  # a fleet directory exists before its nodes write (probe -o makes no parent)
    proc = subprocess.run([sys.executable, "-m", "advisor", "probe", "--plugin", "memory-pool-host",
                           "--quick", "--thin", "--time-budget", "30", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    car = json.loads(sidecar_path(out).read_text())
    assert car["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert car["results"]["memory-pool-host"]["status"] == "ok"
    assert car["class_id"] == load_profile(out).facts.class_fingerprint()
    rep = subprocess.run([sys.executable, "-m", "advisor", "fleet", "report", str(out.parent),
                          "--json"], capture_output=True, text=True, timeout=300)
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout)["counts"]["ok"] == 1
