"""advisor.steps: the one executor of plugin code (probe, verify, fact detectors).

Real threads and a real child process; the time limits are a fraction of a second.
"""

from __future__ import annotations

import subprocess
import threading
import time

import psutil
import pytest

from advisor.steps import (StepAborted, StepRunner, StepTimeout, call_with_timeout, run_step,
                           start_step)


def test_run_step_ok_and_result_types():
    assert run_step(lambda: 3, step="s", timeout_s=5).value == 3
    out = run_step(lambda: 3, step="check", timeout_s=5, expect=str)
    assert out.kind == "failed" and out.error == "check: TypeError: check() returned int, not str"
    assert run_step(lambda: None, step="measure", timeout_s=5, each=int).value == []
    out = run_step(lambda: (1, "x"), step="measure", timeout_s=5, each=int)
    assert out.error == "measure: TypeError: measure() returned non-int items: str"
    out = run_step(lambda: 7, step="measure", timeout_s=5, each=int)
    assert out.error == "measure: TypeError: measure() returned int, not a list of int"


@pytest.mark.parametrize("exc,kind,text", [
    (SystemExit(3), "aborted", "s: SystemExit(3) raised by the plugin"),
    (KeyboardInterrupt(), "aborted", "s: KeyboardInterrupt() raised by the plugin"),
    (OSError(13, "Permission denied"), "failed", "s: PermissionError: [Errno 13] Permission denied"),
    (ValueError("first\nsecond"), "failed", "s: ValueError: first"),
])
def test_run_step_never_raises_for_the_steps_faults(exc, kind, text):
    def fn():
        raise exc

    out = run_step(fn, step="s", timeout_s=5)
    assert (out.kind, out.error, out.ok) == (kind, text, False)


def test_run_step_timeout_abandons_the_thread():
    release = threading.Event()
    try:
        out = run_step(lambda: release.wait(30), step="s", timeout_s=0.1)
        assert out.kind == "timeout" and out.thread is not None and out.thread.is_alive()
        assert out.error == "s: exceeded its time budget: did not return within 0.1 s"
    finally:
        release.set()


def test_raising_forms_keep_their_exceptions():
    with pytest.raises(StepAborted, match="SystemExit"):
        call_with_timeout(lambda: (_ for _ in ()).throw(SystemExit(1)), 5)
    with pytest.raises(StepTimeout):
        call_with_timeout(lambda: time.sleep(1), 0.05)
    assert start_step(lambda: 5)(None) == 5


def test_runner_deadline_grace_and_reaping():
    """An abandoned step's child is killed, its thread remembered under its owner; the step
    may overrun its deadline by the grace period only."""
    release = threading.Event()
    box = {}

    def hangs():
        box["child"] = subprocess.Popen(["sleep", "3600"])
        release.wait(30)

    try:
        with StepRunner(grace_s=0.2) as runner:
            t0 = time.monotonic()
            out = runner.run(hangs, step="measure", owner="p", deadline=time.monotonic() + 0.1)
            assert 0.3 <= time.monotonic() - t0 < 5
            assert out.kind == "timeout" and out.killed == ("sleep",)
            assert out.error.endswith("; 1 process(es) it started were killed")
            assert not psutil.pid_exists(box["child"].pid) or \
                psutil.Process(box["child"].pid).status() == psutil.STATUS_ZOMBIE
            assert [n for n, _ in runner.abandoned] == ["p"]
            assert runner.still_running() == ["p"]  # it ignores the deadline: still there
            release.set()
            box["thread"] = out.thread
        box["thread"].join(5)
        assert runner.still_running() == []
    finally:
        release.set()
        if "child" in box:
            box["child"].kill()
            box["child"].wait()


def test_runner_exit_kills_what_a_step_left_running():
    box = {}
    with StepRunner() as runner:
        out = runner.run(lambda: box.setdefault("p", subprocess.Popen(["sleep", "3600"])),
                         step="measure", timeout_s=5)
        assert out.ok
    try:  # killed (and reaped) on leaving the runner
        assert not psutil.pid_exists(box["p"].pid)
    finally:
        if box["p"].poll() is None:
            box["p"].kill()
