"""advisor verify runs plugin code through the same executor as advisor probe (``advisor.steps``).

* A verify step that hangs is abandoned at its share of the budget plus the grace period, and the
  processes it started are killed: a real ``sleep`` it started (a child) and one it left as an
  orphan (double fork, re-parented to this process as a subreaper) are gone when
  ``verify_profile`` returns.
* For the same plugin fault (hang, ``SystemExit``, wrong return type, an exception) probe and
  verify record the same error text.

The grace period is shortened (``advisor.steps.GRACE_S``) so a hang costs a second, not 15 s.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time

import psutil
import pytest
from support import BUILTIN_LIBRARIES, StubProbe, sample_profile

from advisor.models import Recommendation, Setting
from advisor.runner import run_probe
from advisor.verify import verify_profile

#: Seconds a step may overrun its deadline in these tests (instead of ``advisor.steps.GRACE_S``).
SHORT_GRACE_S = 0.5
#: Budget of one run (seconds): long enough for a well-behaved step here, short for a hang.
BUDGET_S = 0.5


@pytest.fixture
def short_grace(monkeypatch):
    import advisor.steps

    monkeypatch.setattr(advisor.steps, "GRACE_S", SHORT_GRACE_S)


def _rec() -> Recommendation:
    return Recommendation(id="perturb", title="t", rationale="r", confidence="low",
                          verifiable=True, settings=[
                              Setting(library="glibc", name="GLIBC_TUNABLES",
                                      value="glibc.malloc.perturb=165", type="list",
                                      separator=":")])


def _profile(probe: str):
    p = sample_profile()
    res = p.results[0].model_copy(update={"probe": probe, "plugin": probe,
                                          "recommendations": [_rec()]})
    return p.model_copy(update={"results": [res]})


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_verify_kills_the_processes_an_abandoned_step_started(short_grace, release):
    pids: list[int] = []

    class Hangs(StubProbe):
        name = "hangs"

        def verify(self, rec, ctx):
            child = subprocess.Popen(["sleep", "3600"])
            pids.append(child.pid)
            # a daemon left behind: sh forks sleep and exits, the sleep is orphaned
            out = subprocess.run(["sh", "-c", "sleep 3600 >/dev/null 2>&1 & echo $!"],
                                 capture_output=True, text=True, check=True)
            pids.append(int(out.stdout))
            release.wait(60)  # ignores its deadline

    try:
        _, out = verify_profile(_profile("hangs"), {"hangs": Hangs()},
                                facts=sample_profile().facts, time_budget_s=BUDGET_S,
                                libraries=BUILTIN_LIBRARIES)
        (o,) = out
        assert o.verdict == "not-measurable" and o.note == "verification ran out of time"
        assert o.error.startswith("verify: exceeded its time budget: did not return within")
        assert o.error.endswith("2 process(es) it started were killed"), o.error
        assert len(pids) == 2 and not [p for p in pids if _alive(p)], pids
    finally:
        for pid in pids:  # stop them by PID whatever happened
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _fault(kind: str, release: threading.Event):
    def hang(*_):
        release.wait(60)

    def exits(*_):
        raise SystemExit(3)

    def raises(*_):
        raise RuntimeError("injected fault\nsecond line")

    return {"hang": hang, "exit": exits, "raise": raises, "wrong-type": lambda *_: 7}[kind]


def _normalise(text: str) -> str:
    """The limit in a timeout text depends on when the step started: not compared."""
    return re.sub(r"within [0-9.]+ s", "within T s", text)


@pytest.mark.parametrize("kind", ["hang", "exit", "raise", "wrong-type"])
@pytest.mark.parametrize("step", ["check", "measure"])
def test_probe_and_verify_give_the_same_error_text(kind, step, short_grace, release):
    """The fault in ``check`` (run by both commands) gives one text; in the measuring step
    (``measure`` for probe, ``verify`` for verify) the same text but for the step's name."""
    fault = _fault(kind, release)

    class Faulty(StubProbe):
        name = "faulty"

    probe = Faulty()
    setattr(probe, step, fault)
    if step == "measure":
        probe.verify = fault
    else:
        probe.verify = lambda rec, ctx: pytest.fail("verify ran after a failed check")

    res = run_probe("faulty", probe, "faulty", sample_profile().facts,
                    deadline=time.monotonic() + BUDGET_S)
    _, out = verify_profile(_profile("faulty"), {"faulty": probe},
                            facts=sample_profile().facts, time_budget_s=BUDGET_S,
                            libraries=BUILTIN_LIBRARIES)
    assert res.status == "failed" and out[0].verdict == "not-measurable"
    probe_text = _normalise(res.reason)
    verify_text = _normalise(out[0].error)
    expected = {"hang": f"{step}: exceeded its time budget: did not return within T s",
                "exit": f"{step}: SystemExit(3) raised by the plugin",
                "raise": f"{step}: RuntimeError: injected fault",
                "wrong-type": f"{step}: TypeError: {step}() returned int, not Applicability"}
    if step == "check":
        assert probe_text == verify_text == expected[kind]
    elif kind == "wrong-type":  # the contracts differ: a list of Evidence, one Verification
        assert probe_text == "measure: TypeError: measure() returned int, not a list of Evidence"
        assert verify_text == "verify: TypeError: verify() returned int, not Verification"
    else:
        assert probe_text == expected[kind]
        assert verify_text == expected[kind].replace("measure", "verify")
