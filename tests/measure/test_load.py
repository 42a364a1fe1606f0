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


def test_steal_share_is_stolen_over_busy_time_and_warns_from_the_precision():
    # 10 busy seconds in the window, 0.6 of them stolen by the hypervisor
    assert load.steal_share(100.0, 110.0, 5.0, 5.6) == pytest.approx(0.06)
    assert load.steal_share(100.0, 100.0, 5.0, 5.0) is None  # nothing ran: no share
    assert load.steal_share(100.0, 101.0, 5.0, 4.0) == 0.0  # a counter that went back
    from advisor.measure.stats import REL_PRECISION

    assert load.NOISY_STEAL == REL_PRECISION
    noisy = load.Busy(cores=0.0, window_s=40.0, cpus=2, steal_share=0.06)
    assert noisy.noisy and "6%" in noisy.steal_warning() and "steal" in noisy.steal_warning()
    assert not load.Busy(cores=0.0, window_s=40.0, cpus=2, steal_share=0.004).noisy
    assert not load.Busy(cores=0.0, window_s=40.0, cpus=2).noisy


def test_a_probe_records_the_steal_share_it_ran_under(tmp_path, advisor_home):
    """The share is whatever this machine's kernel counted (0 on bare metal); it is recorded,
    and a warning is given exactly when it reaches NOISY_STEAL."""
    out = tmp_path / "p.toml"
    proc = subprocess.run([sys.executable, "-m", "advisor", "probe", "--plugin",
                           "memory-pool-device", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    share = load_profile(out).provenance.steal_share
    warned = any("(steal)" in line for line in proc.stderr.splitlines())
    if share is None:  # the probe used no CPU the kernel counted: nothing to record or say
        assert not warned
    else:
        assert 0.0 <= share <= 1.0 and warned == (share >= load.NOISY_STEAL)
    assert proc.stdout.strip() == str(out)


def test_show_and_the_report_keep_the_conditions_the_probe_warned_about():
    """The warning is printed once, while probing; the profile's heading keeps it."""
    from advisor.models import Provenance
    from advisor.report.tables import load_note

    quiet = Provenance(advisor_version="0", command="advisor probe", created="2026-12-02",
                       busy_cores_before=0.0, steal_share=0.004)
    assert load_note(quiet) == ""
    noisy = quiet.model_copy(update={"busy_cores_before": 1.03, "steal_share": 0.059})
    note = load_note(noisy)
    assert "other processes using 1.0 cores" in note and "6% of the CPU time" in note
    assert load_note(quiet.model_copy(update={"steal_share": None,
                                              "busy_cores_before": None})) == ""
