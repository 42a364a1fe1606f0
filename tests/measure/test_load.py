"""``advisor.measure.load``: other processes' CPU use before a probe, and the warning a probe
gives on a busy machine (a new user's ``make probe`` beside a running test suite advised no
glibc tunable and said nothing)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from advisor.measure import load
from advisor.profile import load_profile


def test_other_cores_is_the_machines_busy_time_less_this_processes_per_second():
    # 1.5 busy seconds on the machine, 0.5 of them this process's, over 1 s: one other core
    assert load.other_cores(10.0, 11.5, 2.0, 2.5, 1.0) == pytest.approx(1.0)
    # this process's own work is not counted against the machine, and never below 0
    assert load.other_cores(10.0, 10.4, 2.0, 2.5, 1.0) == 0.0
    assert load.other_cores(10.0, 11.0, 2.0, 2.0, 0.0) == 0.0
    assert load.Busy(cores=load.BUSY_CORES, window_s=0.3, cpus=2).busy
    assert not load.Busy(cores=load.BUSY_CORES / 2, window_s=0.3, cpus=2).busy


@pytest.fixture
def spinner():
    """Another process holding one core, stopped by its PID."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.2)
    yield proc
    proc.kill()
    proc.wait(timeout=10)


def test_a_process_spinning_beside_the_window_counts_and_sleeping_does_not(spinner):
    w = load.LoadWindow()
    assert w.result() is None or w.result().window_s >= load.MIN_WINDOW_S
    time.sleep(0.3)  # this process sleeps: what the kernel counts busy is someone else's
    got = w.wait_result()
    assert got.window_s >= 0.3 and got.cpus >= 1
    assert got.busy, got


def test_probe_on_a_busy_machine_warns_and_records_it(spinner, tmp_path, advisor_home):
    out = tmp_path / "p.toml"
    proc = subprocess.run([sys.executable, "-m", "advisor", "probe", "--plugin",
                           "memory-pool-device", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    warn = [l for l in proc.stderr.splitlines() if "busy before the probe" in l]
    assert len(warn) == 1 and "sbatch --exclusive" in warn[0], proc.stderr
    assert load_profile(out).provenance.busy_cores_before >= load.BUSY_CORES
    assert proc.stdout.strip() == str(out)  # stdout stays the product
