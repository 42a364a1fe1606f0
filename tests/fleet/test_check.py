"""``advisor check`` (issue 29 part 4): the class profile's band, the pure verdict, the
``--json`` shape agreed with the ReFrame test, bad input, and the nhc / slurm-healthcheck files.

Recorded real data: tests/data/fleet (a class profile from a fleet run on the 2-core VM, and
the four nodes' headline figures it was made from).  The real NHC and the test Slurm are in
tests/slurm/test_check_nhc.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import DATA

from advisor.fleet.check import FigureCheck, plain_line, verdict
from advisor.fleet.outliers import band_record, robust_band

CLASS = DATA / "fleet" / "class-x86_64_v4-2c-24g.toml"
FIG = "host-buffer:memcpy_bandwidth_largest_bytes_per_s"
ADVISOR = [sys.executable, "-m", "advisor"]


@pytest.fixture(scope="module")
def cls():
    from advisor.profile import load_profile

    return load_profile(CLASS)


@pytest.fixture(scope="module")
def nodes():
    got = json.loads((DATA / "fleet" / "headlines.json").read_text())["nodes"]
    return {n: h[FIG] for n, h in got.items()}


def test_class_profile_stores_the_band_the_report_judged_with(cls, nodes):
    band = cls.fleet.headlines[FIG]
    lo, hi, med, mad = robust_band(nodes, cls.fleet.k)
    assert (band.low, band.high, band.median, band.mad) == pytest.approx((lo, hi, med, mad))
    assert band.nodes == 4 and band.k == 6.0 and band.unit == "bytes/s"
    assert cls.fleet.class_id == cls.facts.class_fingerprint()
    assert cls.fleet.hostlist == "node[1-4]" and cls.fleet.nodes == 4
    assert band_record(nodes, FIG) == band


def test_band_of_fewer_than_three_nodes_has_no_bounds_and_never_drifts(nodes):
    two = dict(list(nodes.items())[:2])
    band = band_record(two, FIG)
    assert band.low is None and band.high is None and band.mad is None
    res = verdict("n1", [], {FIG: 1.0}, {FIG: band})
    assert res.state == "healthy" and res.figures[0].ok


def test_a_node_inside_the_band_is_healthy(cls, nodes):
    res = verdict("node2", [], {FIG: nodes["node2"]}, cls.fleet.headlines, took_s=2.5)
    assert res.state == "healthy" and res.reasons == []


def test_a_node_below_the_band_drifted_with_one_reason_naming_the_figure(cls):
    band = cls.fleet.headlines[FIG]
    res = verdict("node9", [], {FIG: band.low * 0.5}, cls.fleet.headlines)
    assert res.state == "drifted"
    (reason,) = res.reasons
    assert reason.startswith(f"{FIG} = ") and "below the class band" in reason
    assert f"{band.low:.4g}" in reason and f"{band.high:.4g}" in reason


def test_a_changed_fact_is_named_with_both_values(cls):
    from advisor.machine_class import class_differences

    here = cls.facts.model_copy(update={"memory": cls.facts.memory.model_copy(
        update={"thp_enabled": "never"})})
    diffs = class_differences(cls.facts, here)
    assert diffs == [("memory.thp_enabled", "madvise", "never")]
    res = verdict("node1", diffs, {}, cls.fleet.headlines)
    assert res.reasons == ["memory.thp_enabled = never here, the class has madvise"]


def test_json_shape_is_the_agreed_one(cls):
    band = cls.fleet.headlines[FIG]
    res = verdict("node1", [("kernel.series", "6.1", None)], {FIG: band.low / 2},
                  cls.fleet.headlines, took_s=1.23456)
    j = res.to_json()
    assert list(j) == ["node", "state", "reasons", "facts", "figures", "took_s"]
    assert j["state"] == "drifted" and len(j["reasons"]) == 2
    assert j["facts"] == [{"fact": "kernel.series", "expected": "6.1", "found": None}]
    (f,) = j["figures"]
    assert list(f) == ["figure", "value", "low", "high", "median", "unit", "ok", "inside"]
    assert f["ok"] is False and f["unit"] == "bytes/s" and f["median"] == band.median
    assert j["took_s"] == 1.235
    json.dumps(j)


def test_a_failed_measurement_is_a_reason():
    res = verdict("n", [], {}, {}, failed=[f"{FIG}: not measured (measure: timed out)"])
    assert res.state == "drifted" and res.reasons[0].endswith("(measure: timed out)")


def test_reason_lines_for_nhc_carry_no_quotes_dollars_or_backticks():
    line = plain_line("model = 'A \"B\"' $HOME `x` \\ end\n2nd")
    assert line == "model = _A _B__ _HOME _x_ _ end 2nd"


def test_open_bounds_accept_every_value():
    assert FigureCheck("p:x_s", 5.0, None, 4.0, 3.0, "s").ok is False
    assert FigureCheck("p:x_s", 5.0, None, None, 3.0, "s").ok is True


def _run(*args, env=None, timeout=120):
    return subprocess.run([*ADVISOR, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("args, message", [
    (["--profile", "@x86_64-icelake-2core-vm"], "no [fleet.headlines] table"),
    (["--profile", "missing.toml"], "missing.toml"),
    (["--profile", str(CLASS), "--quick-s", "0"], "--quick-s"),
    ([], "--profile CLASS.toml is required"),
])
def test_bad_input_is_one_line_exit_2(args, message):
    r = _run("check", *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert r.stdout == ""


def test_check_measures_this_machine_and_prints_the_agreed_json():
    """The real short measurement here (the recorded class is another machine's only where
    the facts differ: the state is not asserted, the shape and the measured figure are)."""
    r = _run("check", "--profile", str(CLASS), "--json", timeout=180)
    assert r.returncode in (0, 1), r.stderr
    j = json.loads(r.stdout)
    (f,) = j["figures"]
    assert f["figure"] == FIG and f["value"] > 0
    assert j["state"] == ("healthy" if r.returncode == 0 else "drifted")
    if r.returncode == 1:
        assert r.stderr.strip().splitlines()[-1].startswith("advisor check: drifted: ")


def _emit(fmt, site_toml, tmp_path):
    site = tmp_path / "site.toml"
    site.write_text(site_toml)
    return _run("emit", "-f", fmt, "--profile", str(CLASS), env={"ADVISOR_SITE_CONFIG": str(site)})


def test_nhc_line_runs_check_with_the_site_command_and_class_path(tmp_path):
    r = _emit("nhc", '[check]\ncommand = "/opt/adv/bin/advisor"\nprofiles = "/srv/classes/"\n'
              "timeout_s = 25\n", tmp_path)
    assert r.returncode == 0, r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if not ln.startswith("#")]
    assert line == ("* || check_cmd_output -t 25 -r 0 -m '!/^drifted:/' -M 'advisor check %L' "
                    "/opt/adv/bin/advisor check --profile "
                    "/srv/classes/x86_64_v4-2c-24g-55c3d9d3.toml")


def test_slurm_healthcheck_is_sh_that_drains_with_the_reason(tmp_path):
    r = _emit("slurm-healthcheck", '[check]\ncommand = "/opt/adv/bin/advisor"\n'
              'scontrol = "/opt/slurm/bin/scontrol"\nquick_s = 6\n', tmp_path)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert text.startswith("#!/bin/sh\n")
    assert ("out=$('/opt/adv/bin/advisor' 'check' '--profile' "
            "'/etc/advisor/classes/x86_64_v4-2c-24g-55c3d9d3.toml' '--quick-s' '6' "
            "2>&1 >/dev/null)") in text
    assert ("exec '/opt/slurm/bin/scontrol' update nodename=\"$node\" state=drain "
            "reason=\"advisor check: ${reason:-drifted}\"") in text
    script = tmp_path / "hc.sh"
    script.write_text(text)
    assert subprocess.run(["sh", "-n", str(script)]).returncode == 0


@pytest.mark.parametrize("fmt", ["nhc", "slurm-healthcheck"])
@pytest.mark.parametrize("site, key", [
    ('[check]\ncommand = "/opt/advisor/bin/advisor;reboot"\n', "site.toml:2: key 'check.command'"),
    ('[check]\nprofiles = "/srv/$(reboot)"\n', "site.toml:2: key 'check.profiles'"),
    ('[check]\nprofiles = "relative/dir"\n', "site.toml:2: key 'check.profiles'"),
])
def test_a_word_nhc_would_reread_as_shell_is_refused(tmp_path, fmt, site, key):
    """Refused where the site wrote it: the configuration file, its line and key."""
    r = _emit(fmt, site, tmp_path)
    assert r.returncode == 2 and key in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("fmt", ["nhc", "slurm-healthcheck"])
def test_health_check_formats_need_a_class_profile(fmt):
    r = _run("emit", "-f", fmt, "--profile", "@x86_64-icelake-2core-vm")
    assert r.returncode == 2 and "needs a class profile" in r.stderr


class _Faulty:
    """A probe whose short measurement raises (plugin code is run through advisor.steps)."""

    name = "host-buffer"

    def measure_headline(self, ctx, recorded):
        raise RuntimeError("injected fault")

    def headline(self, evidence):
        return {}


def test_a_measurement_that_raises_is_one_reason_not_a_crash(cls):
    from advisor.fleet.check_run import run_check

    res = run_check(cls, probes={"host-buffer": _Faulty()}, node_facts=cls.facts)
    assert res.state == "drifted" and res.figures == []
    assert res.reasons == [f"{FIG}: not measured (measure: RuntimeError: injected fault)"]


def test_facts_only_measures_nothing_and_loads_no_plugin(cls):
    from advisor.fleet.check_run import run_check

    res = run_check(cls, probes={}, node_facts=cls.facts, measure=False)
    assert res.state == "healthy" and res.figures == [] and res.facts == []


class _Sequence:
    """A host-buffer stand-in whose short measurements give ``values`` in turn."""

    name = "host-buffer"

    def __init__(self, values):
        self.values = list(values)
        self.calls = 0

    def measure_headline(self, ctx, recorded):
        from advisor.models import Evidence

        self.calls += 1
        return [Evidence(id="short", values={"v": self.values.pop(0)})]

    def headline(self, evidence):
        return {FIG.partition(":")[2]: float(evidence[0].values["v"])}


def test_a_figure_outside_its_band_is_measured_once_more_before_it_drifts(cls):
    """One stray short copy on a shared node must not drain it: a drift needs two."""
    from advisor.fleet.check_run import run_check

    band = cls.fleet.headlines[FIG]
    inside, below = band.median, band.low / 10
    probe = _Sequence([below, inside])
    res = run_check(cls, probes={"host-buffer": probe}, node_facts=cls.facts)
    assert (res.state, probe.calls, res.figures[0].value) == ("healthy", 2, inside)
    probe = _Sequence([below, below / 2])
    res = run_check(cls, probes={"host-buffer": probe}, node_facts=cls.facts)
    assert (res.state, probe.calls, res.figures[0].value) == ("drifted", 2, below)
    probe = _Sequence([inside])
    assert run_check(cls, probes={"host-buffer": probe}, node_facts=cls.facts).state == "healthy"
    assert probe.calls == 1  # a healthy first measurement is not repeated


def test_only_the_worse_side_of_a_band_is_a_drift():
    """A node faster than its class is reported, not drained: a rate above its band, a time
    below it; a figure of another unit drifts on either side."""
    from advisor.fleet.check import FigureCheck

    rate = FigureCheck("p:copy_bytes_per_s", 12.0, 4.0, 8.0, 6.0, "bytes/s")
    assert (rate.inside, rate.better, rate.ok) == (False, True, True)
    assert not FigureCheck("p:copy_bytes_per_s", 3.0, 4.0, 8.0, 6.0, "bytes/s").ok
    assert FigureCheck("p:latency_s", 1.0, 4.0, 8.0, 6.0, "s").ok
    assert not FigureCheck("p:latency_s", 9.0, 4.0, 8.0, 6.0, "s").ok
    assert not FigureCheck("p:ratio", 9.0, 4.0, 8.0, 6.0, "").ok


def test_a_measurement_that_overruns_is_a_short_reason(cls):
    """The reason becomes a drain reason: no worker command line in it (a new user's
    finding: a timed-out worker's JSON argument ended up in the line)."""
    from advisor.fleet.check_run import run_check

    class _Slow(_Faulty):  # as the host-buffer worker's launcher says it (LaunchError)
        def measure_headline(self, ctx, recorded):
            raise TimeoutError("timed out after 1 s and was killed (process group and 0 "
                               "descendants): /usr/bin/python -m worker '{\"task\": \"sweep\"}'")

    res = run_check(cls, probes={"host-buffer": _Slow()}, node_facts=cls.facts, quick_s=0.2)
    (line,) = res.reasons
    assert line == f"{FIG}: not measured (the short measurement did not end within --quick-s 0.2 s)"
