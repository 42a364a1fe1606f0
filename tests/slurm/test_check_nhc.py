"""``advisor check`` under the real LBNL NHC, on nodes of the test Slurm (issue 29 part 4).

NHC comes from its public source (mej/nhc; tested at commit 9c4a38c, NHC 1.4.3), found through
``ADVISOR_NHC_ROOT``: a source tree (``nhc``, ``scripts/``, ``helpers/``: NHC runs from it
without configure) or an install prefix (``sbin/nhc``, ``etc/nhc/scripts``,
``libexec/nhc``).  Without it the tests skip with that reason (CI installs only pip and apt
packages; NHC is not among them).

The class profile comes from a real fleet run on the test Slurm (``advisor fleet probe
--nodes 4 --quick --plugin host-buffer``), the four nodes measuring one after the other at
niceness -19, as tests/slurm/test_fleet_probe.py does, reported with ``--k`` :data:`K_TEST`.  ``advisor emit -f nhc`` writes the
``nhc.conf`` line, with ``[check]`` from a site scope file (``ADVISOR_SITE_CONFIG``) naming this
interpreter and the fleet's ``classes/`` directory.  NHC then runs as ``nhc -c FILE`` inside an
``srun`` task on one node (the task's host name is the node's: each slurmd has its own UTS
namespace), with ``MARK_OFFLINE=0``: NHC's own Slurm marking is NHC's, not under test.

- a healthy node passes;
- a node whose task runs in a cgroup with a CPU quota of :data:`SLOW_QUOTA` (5 %): NHC fails
  with advisor's reason, the memcpy headline below the class band (healthy nodes measured
  2.6-5 GB/s on the loaded VM);
- a changed fact, the THP mode, planted in the recorded facts of a copy of the class profile:
  NHC fails naming ``memory.thp_enabled`` with both values.

The ``slurm-healthcheck`` script runs under ``srun`` on one node with the drifted profile: it
drains that node with advisor's reason (read back with ``scontrol show node``); the node is
resumed afterwards.  HealthCheckProgram is never put into the shared test Slurm's slurm.conf.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cgroup_support import remove_cgroup, slow_cgroup

pytestmark = [pytest.mark.integration, pytest.mark.slurm, pytest.mark.slow]

ADVISOR = [sys.executable, "-m", "advisor"]
FIG = "host-buffer:memcpy_bandwidth_largest_bytes_per_s"
#: The drifted node's CPU quota: 5 ms per 100 ms.  The band of a class measured on this
#: loaded VM reached down to 16-19 % of its median (median 4.4 GB/s, MAD 0.6 GB/s: the four
#: "nodes" share two cores with other test runs), and a 10 % quota gave 0.8-0.9 GB/s, inside
#: it; 5 % halves that.  The whole check is slowed, not only its copies: 22 s at 10 %, about
#: 45 s at 5 %, against 3-6 s unthrottled.
SLOW_QUOTA = (5000, 100000)
#: advisor check --quick-s and NHC's timeouts, room for the throttled node.
QUICK_S, CHECK_TIMEOUT_S, NHC_TIMEOUT_S = 120, 150, 200
PROBE = ["--quick", "--plugin", "host-buffer", "-O", "budget_s=60"]
#: The class band's k (``advisor fleet report --k``).  Four "nodes" taking turns on two cores
#: shared with other test runs spread far more than identical nodes do: the MAD of their
#: headline was 5 %, 14 % and 17 % of the median in three runs here, so the default k = 6 put
#: the band's low end below zero once, where no slow node can fall under it.  Resampling 22
#: recorded quick-probe headlines and 22 short checks of this VM (4 nodes drawn for the band):
#: at k = 3 a healthy check lands inside 75 % of the time and the band's low end is above a
#: 5 %-quota node's 0.3-0.45 GB/s 92 % of the time (k = 4: 81 % and 73 %; k = 6: 90 % and 46 %).
K_TEST = 3
#: Tries of the healthy node (75 % each, see K_TEST: 98 % in three): the four nodes were
#: measured one after the other, a minute before, on cores other test runs load more or less
#: from one minute to the next; a healthy node once measured 4.8 GB/s against a class band of
#: [2.9, 4.2] GB/s made when the load was higher (MAD 4.7 %).  The drift is of another size
#: (a 5 % CPU quota) and gets one try.
HEALTHY_TRIES = 3

#: The task's command: the node measures alone (waits for the files of the nodes before it in
#: $CHECK_TEST_ORDER), in $CHECK_TEST_CGROUP when set, at niceness -19.
RUNNER = """#!/bin/sh
if [ -n "$CHECK_TEST_ORDER" ]; then
  for n in $CHECK_TEST_ORDER; do
    [ "$n" = "$SLURMD_NODENAME" ] && break
    i=0
    while [ ! -e "$CHECK_TEST_DIR/$n.toml" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
  done
fi
if [ -n "$CHECK_TEST_CGROUP" ]; then
  echo $$ > "$CHECK_TEST_CGROUP/cgroup.procs" || exit 97
fi
exec nice -n -19 "$@"
"""


def _nhc_layout(root: Path):
    """(nhc script, scripts dir, helpers dir) of a source tree or an install prefix; None."""
    for nhc, scripts, helpers in (("nhc", "scripts", "helpers"),
                                  ("sbin/nhc", "etc/nhc/scripts", "libexec/nhc")):
        if (root / nhc).is_file() and (root / scripts / "lbnl_cmd.nhc").is_file():
            return root / nhc, root / scripts, root / helpers
    return None


@pytest.fixture(scope="module")
def nhc():
    root = os.environ.get("ADVISOR_NHC_ROOT")
    if not root:
        pytest.skip("ADVISOR_NHC_ROOT (an LBNL NHC source tree or install prefix, from "
                    "github.com/mej/nhc) not set")
    got = _nhc_layout(Path(root))
    if got is None:
        pytest.skip(f"ADVISOR_NHC_ROOT={root}: no nhc with scripts/lbnl_cmd.nhc there")
    if shutil.which("bash") is None:
        pytest.skip("NHC needs bash")
    return got


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    p = tmp_path_factory.mktemp("runner") / "run-on-node"
    p.write_text(RUNNER)
    p.chmod(0o755)
    return p


@pytest.fixture(scope="module")
def fleet_classes(slurm_cluster, runner, nhc, tmp_path_factory):
    """The classes/ directory of a real fleet run of the four nodes, its one class profile."""
    c = slurm_cluster
    d = tmp_path_factory.mktemp("fleet") / "fleet"
    py = runner.parent / "node-python"
    py.write_text(f"#!/bin/sh\nexec {shlex.quote(str(runner))} {shlex.quote(sys.executable)} "
                  '"$@"\n')
    py.chmod(0o755)
    env = {**c.env, "CHECK_TEST_ORDER": " ".join(c.nodes), "CHECK_TEST_DIR": str(d)}
    r = subprocess.run([*ADVISOR, "fleet", "probe", "--nodes", "4", "--partition", c.partition,
                        "--time-limit", "10", *PROBE, "--python", str(py), "--out", str(d),
                        "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), f"{r.stderr[-3000:]}\n{c.logs()}"
    # the class band at k = K_TEST, the report's own option (see K_TEST)
    r = subprocess.run([*ADVISOR, "fleet", "report", str(d), "--k", str(K_TEST), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    (cls,) = json.loads(r.stdout)["classes"]
    from advisor.profile import load_profile

    band = load_profile(cls["profile"]).fleet.headlines[FIG]
    assert band.low is not None, band
    print(f"class band: {band}", file=sys.stderr)
    return Path(cls["profile"]).parent


def _emit(fmt: str, classes: Path, tmp: Path, facts_only: bool = False) -> Path:
    site = tmp / f"site-{fmt}.toml"
    site.write_text(f'[check]\ncommand = "{sys.executable} -m advisor"\nprofiles = "{classes}"\n'
                    f"quick_s = {QUICK_S}\ntimeout_s = {CHECK_TIMEOUT_S}\n"
                    f'scontrol = "{shutil.which("scontrol")}"\n'
                    f"facts_only = {'true' if facts_only else 'false'}\n")
    out = tmp / f"advisor-{fmt}"
    r = subprocess.run([*ADVISOR, "emit", "-f", fmt, "--profile", str(next(classes.glob(
        "*.toml"))), "-o", str(out)], env={**os.environ, "ADVISOR_SITE_CONFIG": str(site)},
        capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return out


def _drifted_copy(classes: Path, tmp: Path) -> Path:
    """A copy of the class profile whose recorded facts say another THP mode."""
    from advisor.profile import load_profile
    from advisor.save import save_profile

    (src,) = classes.glob("*.toml")
    prof = load_profile(src)
    mode = "never" if prof.facts.memory.thp_enabled != "never" else "always"
    mem = prof.facts.memory.model_copy(update={"thp_enabled": mode})
    out = tmp / "drifted"
    out.mkdir()
    save_profile(prof.model_copy(update={"facts": prof.facts.model_copy(
        update={"memory": mem})}), out / src.name)
    return out


def _nhc_on(c, node: str, nhc, conf: Path, runner: Path, tmp: Path, cgroup=None):
    script, scripts, helpers = nhc
    env = {**c.env, **({"CHECK_TEST_CGROUP": str(cgroup)} if cgroup else {})}
    r = c.run("srun", "-N1", "-n1", f"--nodelist={node}", f"--cpus-per-task={c.cpus}",
              "--exclusive", str(runner), "bash", str(script), "-v", "-c", str(conf),
              "-D", str(tmp), f"INCDIR={scripts}", f"HELPERDIR={helpers}", "LOGFILE=-",
              "MARK_OFFLINE=0", f"TIMEOUT={NHC_TIMEOUT_S}", f"RESULTFILE={tmp}/nhc.status",
              env=env, timeout=NHC_TIMEOUT_S + 60)
    print(f"nhc on {node}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}",
          file=sys.stderr)
    return r


def test_nhc_passes_a_healthy_node_and_reports_a_cpu_quota_drift(slurm_cluster, nhc, runner,
                                                                  fleet_classes, tmp_path):
    c = slurm_cluster
    conf = _emit("nhc", fleet_classes, tmp_path)
    for _ in range(HEALTHY_TRIES):
        ok = _nhc_on(c, "node1", nhc, conf, runner, tmp_path)
        if ok.returncode == 0:
            break
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Node Health Check completed successfully" in ok.stdout + ok.stderr
    cgroup = slow_cgroup(f"advisor-check-test-{os.getpid()}", SLOW_QUOTA)
    try:
        bad = _nhc_on(c, "node2", nhc, conf, runner, tmp_path, cgroup)
    finally:
        remove_cgroup(cgroup)
    text = bad.stdout + bad.stderr
    assert bad.returncode != 0, text
    assert (f"Health check failed:  check_cmd_output:  advisor check drifted: {FIG} = "
            in text), text
    assert "below the class band" in text


def test_nhc_reports_a_changed_thp_mode_in_the_recorded_facts(slurm_cluster, nhc, runner,
                                                              fleet_classes, tmp_path):
    conf = _emit("nhc", _drifted_copy(fleet_classes, tmp_path), tmp_path)
    r = _nhc_on(slurm_cluster, "node3", nhc, conf, runner, tmp_path)
    text = r.stdout + r.stderr
    assert r.returncode != 0, text
    assert "advisor check drifted: memory.thp_enabled = " in text
    assert " here, the class has " in text


def _node(c, name: str) -> str:
    r = c.run("scontrol", "show", "node", name, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_slurm_healthcheck_drains_a_drifted_node_with_the_reason(slurm_cluster, nhc, runner,
                                                                 fleet_classes, tmp_path):
    """With ``[check] facts_only``: the node's facts decide, so the healthy node is never
    drained by a load spike of this shared VM; the drain itself is what is under test."""
    c = slurm_cluster
    healthy = _emit("slurm-healthcheck", fleet_classes, tmp_path, facts_only=True)
    assert "'--facts-only'" in healthy.read_text()
    sub = tmp_path / "drift"
    sub.mkdir()
    drifted = _emit("slurm-healthcheck", _drifted_copy(fleet_classes, sub), sub, facts_only=True)
    try:
        r = c.run("srun", "-N1", "-n1", "--nodelist=node1", f"--cpus-per-task={c.cpus}",
                  "--exclusive", str(runner), "sh", str(healthy), timeout=CHECK_TIMEOUT_S)
        assert r.returncode == 0, r.stderr
        assert "DRAIN" not in _node(c, "node1")
        r = c.run("srun", "-N1", "-n1", "--nodelist=node4", f"--cpus-per-task={c.cpus}",
                  "--exclusive", str(runner), "sh", str(drifted), timeout=CHECK_TIMEOUT_S)
        assert r.returncode == 0, r.stderr  # scontrol took the drain
        state = _node(c, "node4")
        assert "DRAIN" in state, state
        assert "Reason=advisor check: drifted: memory.thp_enabled = " in state, state
        # a node an administrator drained keeps the administrator's reason (run here, as the
        # drained node takes no job step; SLURMD_NODENAME as slurmd sets it for the program)
        r = c.run("scontrol", "update", "nodename=node5", "state=drain",
                  "reason=admin: DIMM swap", timeout=30)
        assert r.returncode == 0, r.stderr
        r = c.run("sh", str(drifted), env={**c.env, "SLURMD_NODENAME": "node5"},
                  timeout=CHECK_TIMEOUT_S)
        assert r.returncode == 1 and "drifted" in r.stderr, r.stderr
        assert "Reason=admin: DIMM swap" in _node(c, "node5")
    finally:  # the cluster as found: no node of this test stays drained
        for n in ("node1", "node4", "node5"):
            if "DRAIN" in _node(c, n):
                c.run("scontrol", "update", f"nodename={n}", "state=resume", timeout=30)
    assert "DRAIN" not in _node(c, "node4")
