"""A check that could not decide (Applicability.failed) makes the probe failed, not
not-applicable (issue 15: a launcher that cannot start ranks is never a feature result)."""

import time

from advisor.models import Advice, Facts, Finding
from advisor.probe import Applicability
from advisor.runner import run_probe


class LauncherDown:
    name = "launcher-down"

    def check(self, facts):
        return Applicability(usable=False, failed=True, reason="launcher failed: no ranks")

    def measure(self, ctx):  # never reached
        raise AssertionError("measure after a failed check")

    def recommend(self, evidence, facts):
        return Advice(findings=[Finding(id="launcher-failed", severity="error", message="m")])


def test_failed_check_is_failed_with_its_reason_and_findings():
    res = run_probe("launcher-down", LauncherDown(), "test", Facts(),
                    deadline=time.monotonic() + 30)
    assert res.status == "failed" and res.reason.startswith("launcher failed")
    assert [f.id for f in res.findings] == ["launcher-failed"]
