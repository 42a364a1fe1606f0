"""The launcher with the real MPICH (mpiexec -n 2 from the mpich wheel) and fresh Pythons.

The hung-job test records every descendant of this test process while the job runs (a
background psutil poller) and checks after the timeout that none of them is left.
"""

import os
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from advisor.measure import (
    LaunchError,
    mpi_launch_available,
    resolve_launcher,
    run_mpi,
    run_python,
)
from support import tool

HERE = Path(__file__).resolve().parent
WORKER_ENV = {"PYTHONPATH": str(HERE)}


@pytest.fixture
def mpi():
    tool("mpiexec")
    pytest.importorskip("mpi4py")
    ok, why = mpi_launch_available()
    if not ok:
        pytest.skip(why)


class Watcher:
    """Collects every descendant of this process until stopped."""

    def __init__(self):
        self.seen: dict[int, psutil.Process] = {}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        me = psutil.Process()
        while not self._stop.is_set():
            for p in me.children(recursive=True):
                self.seen.setdefault(p.pid, p)
            time.sleep(0.05)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()

    def alive(self):
        out = []
        for p in self.seen.values():
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    out.append(p)
            except psutil.NoSuchProcess:
                pass
        return out


@pytest.mark.integration
def test_run_mpi_two_ranks_env_overlay_rank0_json(mpi):
    res = run_mpi("mpi_worker", ["ping"], env={**WORKER_ENV, "ADVISOR_TEST_VAR": "overlay"},
                  timeout_s=60)
    assert res["size"] == 2 and res["var"] == "overlay"
    assert len(set(res["pids"])) == 2 and os.getpid() not in res["pids"]
    assert "ADVISOR_TEST_VAR" not in os.environ  # overlay is per run


@pytest.mark.integration
def test_run_mpi_failure_carries_rank_stderr(mpi):
    with pytest.raises(LaunchError) as ei:
        run_mpi("mpi_worker", ["fail"], env=WORKER_ENV, timeout_s=60)
    err = ei.value
    assert not err.timed_out and err.returncode != 0
    assert "rank 1: deliberate failure" in str(err)


@pytest.mark.integration
def test_hung_mpi_job_killed_at_timeout_no_orphans(mpi):
    # long enough for mpiexec, its proxy and both ranks to start on a loaded 2-core machine
    # (0.4 s unloaded here; the claim is the kill, not the start-up time)
    timeout = 10.0
    with Watcher() as w:
        t0 = time.monotonic()
        with pytest.raises(LaunchError) as ei:
            run_mpi("mpi_worker", ["hang"], env=WORKER_ENV, timeout_s=timeout)
        took = time.monotonic() - t0
    assert ei.value.timed_out and "timed out" in str(ei.value)
    assert "hanging ranks" in ei.value.stderr  # the ranks were really running
    # mpiexec + hydra proxy + 2 ranks were all seen, and none is left
    assert len(w.seen) >= 3
    deadline = time.monotonic() + 5
    while w.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert w.alive() == []
    assert took < timeout + 15  # grace periods only


def test_run_python_json_env_and_errors():
    code = "import json, os; print('noise'); print(json.dumps({'v': os.environ.get('X_T')}))"
    assert run_python(["-c", code], env={"X_T": "1"}, timeout_s=30) == {"v": "1"}
    os.environ["X_GONE_T"] = "here"
    try:
        code2 = "import json, os; print(json.dumps({'v': os.environ.get('X_GONE_T')}))"
        assert run_python(["-c", code2], env={"X_GONE_T": None}, timeout_s=30) == {"v": None}
    finally:
        del os.environ["X_GONE_T"]
    with pytest.raises(LaunchError) as ei:
        run_python(["-c", "import sys; sys.stderr.write('boom-x'); sys.exit(4)"], timeout_s=30)
    assert ei.value.returncode == 4 and "boom-x" in str(ei.value)
    with pytest.raises(LaunchError, match="no JSON"):
        run_python(["-c", "print('hello')"], timeout_s=30)
    # a module name runs with -m
    assert run_python("mpi_worker_free_json", timeout_s=30, env=WORKER_ENV) == {"ok": True}


def test_run_python_timeout_kills_children_outside_its_group():
    """A grandchild that left the process group (its own session) is still killed."""
    code = ("import subprocess, sys, time; "
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
            "start_new_session=True); "
            "time.sleep(600)")
    with Watcher() as w:
        with pytest.raises(LaunchError) as ei:
            run_python(["-c", code], timeout_s=6)  # the grandchild must start first, even loaded
    assert ei.value.timed_out
    assert len(w.seen) >= 2
    deadline = time.monotonic() + 5
    while w.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert w.alive() == []


def test_launcher_resolution(monkeypatch):
    monkeypatch.delenv("ADVISOR_LAUNCHER", raising=False)
    assert resolve_launcher("srun -n {nprocs} --mpi=pmi2", nprocs=4) == [
        "srun", "-n", "4", "--mpi=pmi2"]
    monkeypatch.setenv("ADVISOR_LAUNCHER", "mylaunch -np 2")
    assert resolve_launcher() == ["mylaunch", "-np", "2"]
    assert resolve_launcher(["x", "-n", "2"]) == ["x", "-n", "2"]  # explicit argv wins
    monkeypatch.delenv("ADVISOR_LAUNCHER")
    default = resolve_launcher()
    venv_mpiexec = Path(sys.executable).parent / "mpiexec"
    if venv_mpiexec.exists():
        assert default == [str(venv_mpiexec), "-n", "2"]


def test_missing_launcher_is_not_applicable_reason(monkeypatch):
    monkeypatch.setenv("ADVISOR_LAUNCHER", "no-such-launcher-xyz -n 2")
    pytest.importorskip("mpi4py")
    ok, why = mpi_launch_available()
    assert not ok and "no-such-launcher-xyz" in why
    with pytest.raises(LaunchError):
        run_mpi("mpi_worker", ["ping"], env=WORKER_ENV, timeout_s=10)
