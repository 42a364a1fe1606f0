"""``advisor fleet probe`` (issue 15, deliverable 3, the submission half).

Under the real test Slurm (``slurm_cluster``, tests/slurm/conftest.py: six nodes) the must-show,
in one run: ``advisor fleet probe --nodes 6`` completes with 5 per-node profiles (all but node4)
and a class profile of those 5 nodes; node2, made really different, is flagged as an outlier;
node4, whose task is killed mid-probe, is "no result" while the others go on and complete; the
flagged hostlist names both; ``advisor emit --profile <class profile>`` works; and a re-run of
only node4 into the same directory fills the gap.  Six nodes because the outlier rule
(median ± k·MAD, advisor/fleet/outliers.py) learns the class's spread from the healthy nodes: with
three values (two healthy, one slow) the MAD is the smaller gap between neighbours, and two
healthy nodes 30 % apart (11.5 and 8.7 GB/s, seen in CI with a core kept busy) hid a node
throttled to 1.4 GB/s; with four healthy nodes the MAD is a typical healthy deviation.

The nodes measure one after the other (they share this machine's 2 cores): the wrapper below
makes each wait for the files of the nodes before it in ``FLEET_TEST_ORDER``
(node4 node1 node3 node5 node6 node2).  node4 goes first and is killed while it measures alone; the test
then leaves a ``node4.killed`` mark that ends the others' wait for a file node4 never writes.
Each node's probe runs at niceness -19, so that other work on this machine (another test run)
does not take time slices from one healthy node's copies and set it apart from the other.

How one node is made different through ``srun``: ``--python`` names the interpreter the nodes
run; here it is a test-only wrapper script that looks at ``$SLURMD_NODENAME`` and, for the slow
node, moves itself into a cgroup with a CPU quota of :data:`SLOW_QUOTA` before it execs the real
Python (every copy of that node's probe then runs in 1 ms slices per 10 ms period); for the
node to kill it records its PID.  A CPU hog pinned beside the probe was tried first: the median copy bandwidth
moved by less than the noise between runs (5.1 vs 6.7-11 GB/s), so it is not "really different".

Without Slurm, ``--launcher CMD`` takes any launcher that starts one task per node: a shell
script that starts the task once per node name stands in for ``pdsh -w``.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib
from cgroup_support import remove_cgroup, slow_cgroup

ADVISOR = [sys.executable, "-m", "advisor"]
#: Per-node probe: host-buffer with --quick takes about 6-9 s alone on this 2-core machine
#: (measured); the throttled node takes longer (:data:`SLOW_QUOTA`).
#: ``budget_s``: the quick probe's own 13 s target cut the throttled node's sweep off at 6.7 s
#: in CI (a 2-core VM, other tests running), twice in a row, so it failed instead of showing
#: as the outlier; ``--time-budget``: at 10 % of a core the throttled node took 58-61 s, and
#: the quick probe's 60 s budget left its malloc first-touch stage 5 s, which it overran once
#: in two runs.  The unthrottled nodes end well inside either.
PROBE = ["--quick", "--plugin", "host-buffer", "--time-budget", "150", "-O", "budget_s=150"]
#: Bound on one fleet run in the test (one run takes 1-2 min here: the nodes take turns; room
#: for a machine shared with other test runs).
RUN_TIMEOUT_S = 360
#: The slow node's CPU quota: 1 ms per 10 ms period, 10 % of one core (cgroup v1
#: cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max).  The short period throttles every copy
#: longer than 1 ms (a copy of the largest size takes 10-40 ms), so the node's median copy is
#: slow; with 20 ms per 100 ms a copy that fits in one slice runs at full speed.  At 2 ms per
#: 10 ms the throttled node read 1.4-2.6 GB/s beside healthy nodes at 8.6-14.9 GB/s, a quarter
#: of their median: too close for the rule below in one CI run of three (FLEET_MAD_FLOOR).
SLOW_QUOTA = (1000, 10000)
#: Seconds after the killed node's task started before it is killed: its probe is then past
#: Python start-up and fact detection (about 1-2 s here) and before its end (12 s).
KILL_AFTER_S = 3.0
#: The site's outlier rule for this test's "nodes" ([fleet] k and mad_floor, which fleet
#: probe's report reads as fleet report does).  Six "nodes" taking turns on one shared 2-core VM
#: spread far more than identical nodes: one node's headline read 6.99-11.96 GB/s over 8 fresh
#: processes (a log-normal spread of sigma 0.17 over these and a CI run's 10.3, 10.4, 12.7 and
#: 14.9 GB/s), so four healthy nodes have a MAD of 5-22 % of their median.  At Intel Cluster
#: Checker's k = 6 and the 1 % floor, one report in two failed the scenario in a simulation of
#: that spread (20,000 draws): the band held the throttled node when the MAD was wide, and left a
#: healthy node out when three of them agreed closely.  A floor of 35 % (as a site with such
#: nodes would set it) and k = 2 give a band of at least median ± 70 %: the throttled node, at
#: about a tenth of the median, is flagged unless the MAD exceeds 44 % of the median, and a
#: healthy node is left out only beyond 1.7 times it; the simulation fails 2.4 % of runs (10 % at
#: sigma 0.22), and the test runs the scenario up to :data:`TRIES` times.
FLEET_K = 2.0
FLEET_MAD_FLOOR = 0.35
#: Runs of the scenario before the test fails (see FLEET_K).
TRIES = 3
#: The nodes that write a profile: all but node4 (killed).
HEALTHY_AND_SLOW = ("node1", "node2", "node3", "node5", "node6")

WRAPPER = """#!/bin/sh
# test-only: the "python" every node's task runs (advisor fleet probe --python)
node="${SLURMD_NODENAME:-$(hostname -s)}"
if [ "$node" = "$FLEET_TEST_SLOW_NODE" ] && [ -n "$FLEET_TEST_CGROUP" ]; then
  echo $$ > "$FLEET_TEST_CGROUP/cgroup.procs" || exit 97
fi
# one node measures at a time (the "nodes" share this machine's cores and memory): wait for
# the files of the nodes before this one in $FLEET_TEST_ORDER, at most 120 s each; a node the
# test killed has the mark $FLEET_TEST_PIDS/<node>.killed instead of a file
if [ -n "$FLEET_TEST_ORDER" ]; then
  for n in $FLEET_TEST_ORDER; do
    [ "$n" = "$node" ] && break
    i=0
    while [ ! -e "$3/$n.toml" ] && [ ! -e "$FLEET_TEST_PIDS/$n.killed" ] && [ $i -lt 1200 ]; do
      sleep 0.1; i=$((i + 1))
    done
  done
fi
if [ "$node" = "$FLEET_TEST_KILL_NODE" ]; then
  echo $$ > "$FLEET_TEST_PIDS/$node.pid.tmp" && mv "$FLEET_TEST_PIDS/$node.pid.tmp" "$FLEET_TEST_PIDS/$node.pid"
fi
# niceness -19: another process on this shared machine's cores (another test run) takes a
# time slice from the probe and halves some memcpy samples (seen: 5.9 beside 11 GB/s in one
# node); the healthy nodes must agree for median +- k*MAD to single out the slow one.  Where
# it may not be set, nice warns and runs the probe anyway.
exec nice -n -19 @PYTHON@ "$@"
"""


def _slow_cgroup(name: str) -> Path:
    """A cgroup with the CPU quota ``SLOW_QUOTA`` (tests/cgroup_support.py)."""
    return slow_cgroup(name, SLOW_QUOTA)


def _kill_tree(pid: int) -> None:
    import psutil

    try:
        top = psutil.Process(pid)
        procs = top.children(recursive=True) + [top]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass


def _fleet(cluster, *args, env=None, timeout=RUN_TIMEOUT_S):
    t0 = time.monotonic()
    p = subprocess.Popen([*ADVISOR, "fleet", "probe", *args], env=env or cluster.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=os.getcwd())
    return p, t0


def _finish(p, t0, cluster, timeout=RUN_TIMEOUT_S):
    out, err = p.communicate(timeout=timeout)
    took = time.monotonic() - t0
    print(f"fleet probe: {took:.1f} s, exit {p.returncode}\n{err[-2000:]}", file=sys.stderr)
    return out, err, took


def _explain(rep: dict, d: Path) -> str:
    """Each node's state and reason, and the tail of each node's probe log (a failed assertion
    on the states then says why, not only which)."""
    lines = [f"{n['name']}: {n['state']} ({n.get('reason')})" for n in rep["nodes"]]
    lines += [f"class medians: {c.get('medians')}" for c in rep.get("classes", [])]
    from advisor.fleet.summary import sidecar_path

    for prof in sorted(d.glob("*.toml")):
        try:  # each node's headline figures, as the outlier rule read them
            heads = json.loads(sidecar_path(prof).read_text())["headlines"]
        except (OSError, ValueError, KeyError) as exc:
            heads = f"(no sidecar: {exc})"
        lines.append(f"{prof.stem} headlines: {heads}")
    for log in sorted((d / "logs").glob("*.log")):
        lines.append(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}")
    return "\n".join(lines)


def _slow_and_killed_run(c, wrapper: Path, base: Path):
    """One fleet run of six nodes: node2 slowed by its CPU quota, node4 killed mid-probe;
    node4 measures first, alone, and the others wait for it (then for each other) in order.
    -> (process, stdout, stderr, the --out directory, when node4 was killed)."""
    pids = base / "pids"
    pids.mkdir(parents=True)
    d = base / "fleet"
    cgroup = _slow_cgroup(f"advisor-fleet-test-{os.getpid()}-{base.name}")
    try:
        site = base / "site.toml"
        site.write_text(f"[fleet]\nk = {FLEET_K:g}\nmad_floor = {FLEET_MAD_FLOOR:g}\n")
        env = {**c.env, "ADVISOR_SITE_CONFIG": str(site),
               "FLEET_TEST_SLOW_NODE": "node2", "FLEET_TEST_CGROUP": str(cgroup),
               "FLEET_TEST_KILL_NODE": "node4", "FLEET_TEST_PIDS": str(pids),
               "FLEET_TEST_ORDER": "node4 node1 node3 node5 node6 node2"}
        p, t0 = _fleet(c, "--nodes", str(len(c.nodes)), "--partition", c.partition, "--time-limit", "5",
                       *PROBE, "--python", str(wrapper), "--out", str(d), "--json", env=env)
        try:
            pid_file = pids / "node4.pid"
            deadline = time.monotonic() + 60
            while not pid_file.exists() and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert pid_file.exists(), f"node4's task did not start\n{c.logs()}"
            time.sleep(KILL_AFTER_S)
            assert not (d / "node4.toml").exists(), "node4 finished before it could be killed"
            assert not list(d.glob("*.toml")), "a node did not wait for node4 (FLEET_TEST_ORDER)"
            _kill_tree(int(pid_file.read_text()))
            killed_at = time.time()
        finally:
            (pids / "node4.killed").touch()  # the others stop waiting for node4's file
        out, err, _ = _finish(p, t0, c)
    finally:
        remove_cgroup(cgroup)
    return p, out, err, d, killed_at


@pytest.mark.integration
@pytest.mark.slurm
@pytest.mark.slow
def test_fleet_probe_under_slurm_flags_the_slow_node_and_keeps_the_killed_one_apart(
        slurm_cluster, tmp_path):
    c = slurm_cluster
    assert c.nodes == ["node1", "node2", "node3", "node4", "node5", "node6"]
    wrapper = tmp_path / "node-python"
    wrapper.write_text(WRAPPER.replace("@PYTHON@", shlex.quote(sys.executable)))
    wrapper.chmod(0o755)
    healthy = [n for n in HEALTHY_AND_SLOW if n != "node2"]
    for attempt in range(1, TRIES + 1):
        p, out, err, d, killed_at = _slow_and_killed_run(c, wrapper, tmp_path / f"try{attempt}")
        rep = json.loads(out) if p.returncode == 1 else {"nodes": []}
        got = {n["name"]: n["state"] for n in rep["nodes"]}
        if got.get("node2") == "outlier" and all(got.get(n) == "ok" for n in healthy):
            break
        # seen in CI: the throttled node failed its probe (its sweep cut by the quick probe's
        # target), or the healthy "nodes" of this shared VM spread too far for the rule to
        # single it out, or one of them left the band itself (a VM at 15 % steal: node1 at
        # 16.2 GB/s against a class median of 12.2): say why, and run the whole scenario again
        print(f"run {attempt}: node2 alone was not flagged:\n{_explain(rep, d)}",
              file=sys.stderr)
    assert p.returncode == 1, f"{err[-3000:]}\n{c.logs()}"  # 1: nodes are flagged
    rep = json.loads(out)
    # the site's [fleet] rule, as fleet report reads it
    assert (rep["k"], rep["mad_floor"]) == (FLEET_K, FLEET_MAD_FLOOR)
    # 3 per-node profiles; the killed node wrote none
    assert sorted(f.name for f in d.glob("*.toml")) == [f"{n}.toml" for n in HEALTHY_AND_SLOW]
    for f in d.glob("*.toml"):
        assert f.stat().st_size <= 64 * 1024, f"{f} is not thin"
    # the others were still waiting or measuring when node4 died, and completed
    assert all((d / f"{n}.toml").stat().st_mtime > killed_at for n in HEALTHY_AND_SLOW)
    states = {n["name"]: n["state"] for n in rep["nodes"]}
    assert states == {"node1": "ok", "node2": "outlier", "node3": "ok", "node4": "no-result",
                      "node5": "ok", "node6": "ok"}, _explain(rep, d)
    assert rep["hostlists"]["outlier"] == "node2"
    assert rep["hostlists"]["no-result"] == "node4"
    assert rep["flagged_hostlist"] == "node[2,4]"
    flag = next(n for n in rep["nodes"] if n["name"] == "node2")["flags"][0]
    assert flag["figure"].endswith("memcpy_bandwidth_largest_bytes_per_s")
    assert flag["value"] < flag["low"]
    # one class profile, of the 5 nodes that wrote a profile
    (cls,) = rep["classes"]
    assert cls["nodes"] == 5 and cls["hostlist"] == "node[1-3,5-6]", cls
    assert Path(cls["profile"]).is_file()
    assert Path(cls["profile"]).parent == d / "classes"
    assert "fleet: 5/6 node profiles" in err
    prof = tomllib.loads((d / "node1.toml").read_text())
    assert prof["facts"]["scheduler"]["kind"] == "slurm"
    assert prof["facts"]["scheduler"]["cpus_allowed_count"] >= 2  # --cpus-per-task
    # the class profile is a profile like any other
    e = subprocess.run([*ADVISOR, "emit", "--profile", cls["profile"]], capture_output=True,
                       text=True, timeout=60)
    assert e.returncode == 0, e.stderr
    assert e.stdout.strip()

    # only the missing node, into the same directory (docs/cluster.md)
    p, t0 = _fleet(c, "--nodelist", rep["hostlists"]["no-result"], "--time-limit", "5", *PROBE,
                   "--out", str(d), "--json")
    out, err, took = _finish(p, t0, c)
    rep = json.loads(out)
    assert {n["name"]: n["state"] for n in rep["nodes"]}["node4"] in ("ok", "outlier"), err
    assert rep["counts"]["no-result"] == 0
    assert (d / "node4.toml").is_file()


def _launcher(tmp_path: Path, names) -> Path:
    script = tmp_path / "one-task-per-node"
    script.write_text("#!/bin/sh\n# starts the command once per node, as pdsh -w would\n"
                      "echo launcher chatter\n"  # must not reach stdout (the report's)
                      + "".join(f'SLURMD_NODENAME={n} "$@" &\n' for n in names) + "wait\n")
    script.chmod(0o755)
    return script


@pytest.mark.integration
@pytest.mark.slow
def test_fleet_probe_with_any_launcher_names_the_node_that_wrote_nothing(tmp_path):
    launcher = _launcher(tmp_path, ["n1", "n2"])
    d = tmp_path / "fleet"
    r = subprocess.run([*ADVISOR, "fleet", "probe", "--launcher", str(launcher),
                        "--nodelist", "n[1-3]", *PROBE, "--out", str(d), "--json"],
                       capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    assert {n["name"]: n["state"] for n in rep["nodes"]} == {"n1": "ok", "n2": "ok",
                                                             "n3": "no-result"}
    assert rep["flagged_hostlist"] == "n3"
    assert (d / "logs" / "n1.log").is_file()  # each node's own lines, not the launcher's


@pytest.mark.parametrize("args, message", [
    ([], "--out DIR is required"),
    (["--out", "D", "--nodes", "2", "--nodelist", "n[1-2]"], "exclude each other"),
    (["--out", "D", "--nodelist", "n[1-"], "not a Slurm hostlist"),
    (["--out", "D", "--nodes", "2", "--option", "novalue"], "expected KEY=VALUE"),
])
def test_fleet_probe_bad_input_is_one_line_exit_2(tmp_path, args, message):
    args = [str(tmp_path / a) if a == "D" else a for a in args]
    r = subprocess.run([*ADVISOR, "fleet", "probe", *args], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "ADVISOR_DISABLE_PLUGINS": "example-broken"})
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_fleet_probe_without_srun_says_so(tmp_path):
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    r = subprocess.run([*ADVISOR, "fleet", "probe", "--nodes", "2", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith("advisor: error: srun: command not found")


def test_srun_command_is_one_allocation_one_task_per_node_whole_nodes(tmp_path):
    from advisor.fleet import submit

    args = submit.probe_args(quick=True, plugins=["host-buffer"], time_budget_s=90,
                             options=["sweep_mib=4,8"])
    assert args == ["--quick", "--plugin", "host-buffer", "--time-budget", "90", "--option",
                    "sweep_mib=4,8", "--thin"]
    task = submit.task_argv("/py", tmp_path, args)
    req = submit.Request(nodelist="node[1-4]", partition="batch", time_limit_min=10,
                         account="acct")
    argv = submit.srun_argv(req, task, cpus=64, job_name="advisor-fleet-x")
    assert argv[:argv.index("/py")] == [
        "srun", "--nodelist=node[1-4]", "--nodes=4", "--ntasks-per-node=1",
        "--cpus-per-task=64", "--exclusive", "--kill-on-bad-exit=0", "--wait=0",
        "--job-name=advisor-fleet-x", "--partition=batch", "--time=10", "--account=acct"]
    assert argv[argv.index("/py"):] == ["/py", "-m", "advisor.cli.fleet_task", str(tmp_path),
                                        *args]
    full = submit.probe_args(thin=False)
    assert "--thin" not in full


def test_fleet_probe_stopped_by_sigterm_stops_its_launcher(tmp_path):
    started = tmp_path / "started"
    launcher = tmp_path / "hangs"
    launcher.write_text(f"#!/bin/sh\necho $$ > {started}\nexec sleep 300\n")
    launcher.chmod(0o755)
    p = subprocess.Popen([*ADVISOR, "fleet", "probe", "--launcher", str(launcher), "--nodelist",
                          "n1", "--out", str(tmp_path / "d")], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    pid = int(started.read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_a_failed_rerun_into_a_directory_with_older_profiles_is_not_a_success(tmp_path):
    """Files already in DIR are not this run's: a launcher that starts nothing is exit 3, not
    an all-ok report of the old files (found by a new user re-running as docs/cluster.md
    says)."""
    from advisor.fleet import submit
    from advisor.save import save_profile
    from support import sample_profile

    d = tmp_path / "fleet"
    d.mkdir()
    for n in ("n1", "n2"):
        save_profile(sample_profile(), d / f"{n}.toml")
    before = submit.profile_stamps(d)
    assert submit.profiles_written(d, before) == []
    save_profile(sample_profile(), d / "n2.toml")  # rewritten atomically: a new inode
    assert submit.profiles_written(d, before) == ["n2"]
    failing = tmp_path / "fails"
    failing.write_text("#!/bin/sh\necho 'srun: error: Invalid partition name' >&2\nexit 1\n")
    failing.chmod(0o755)
    r = subprocess.run([*ADVISOR, "fleet", "probe", "--launcher", str(failing), "--nodelist",
                        "n[1-2]", "--out", str(d)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, r.stderr
    assert r.stdout == "" and "before any node wrote a profile in this run" in r.stderr
