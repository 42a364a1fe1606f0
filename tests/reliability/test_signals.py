"""A batch system ends a job with SIGTERM (time limit) or SIGHUP (lost session), a user with
SIGINT: ``advisor probe`` keeps the probes that completed, records the interrupted and unstarted
ones as failed naming the signal, writes the profile (exit 3) and leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid

import pytest

from advisor.errors import ExitCode
from advisor.profile import load_profile
from reliability_support import advisor_cmd, kill_leftovers, leftovers, need_fault_plugins


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=lambda s: s.name)
def test_signal_keeps_completed_probes(tmp_path, sig):
    need_fault_plugins()
    out = tmp_path / "p.toml"
    marker = uuid.uuid4().hex
    env = dict(os.environ, ADVISOR_TEST_FAULTS="early,hang,ok", ADVISOR_FAULT_RUN=marker,
               ADVISOR_DISABLE_PLUGINS="example-broken")
    env.pop("ADVISOR_LAUNCHER", None)
    # fault-early completes, fault-hang then waits on a child sleeping an hour, fault-ok waits
    proc = subprocess.Popen(advisor_cmd("probe", "--plugin", "fault-early", "--plugin",
                                        "fault-hang", "--plugin", "fault-ok", "-o", str(out),
                                        "--time-budget", "600"),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # wait until the hang probe's child exists: the run is then inside fault-hang
        deadline = time.monotonic() + 60
        while not any("time.sleep" in l for l in leftovers(marker, wait_s=0)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the hang probe never started its child"
            time.sleep(0.1)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == ExitCode.PARTIAL, stderr
        assert "Traceback" not in stderr and stdout.strip() == str(out)
        res = {r.probe: r for r in load_profile(out).results}
        assert res["fault-early"].status == "ok" and res["fault-early"].recommendations
        assert res["fault-hang"].status == "failed"
        assert sig.name in res["fault-hang"].reason and "interrupted" in res["fault-hang"].reason
        assert res["fault-ok"].status == "failed" and "not run" in res["fault-ok"].reason
        assert leftovers(marker) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_leftovers(marker)
