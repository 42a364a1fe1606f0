"""Fact detectors registered by plugins (``advisor_register_facts``) that raise, call
``sys.exit`` or hang: ``advisor probe`` must still finish, with a warning naming the detector."""

from __future__ import annotations

import pytest

from advisor.profile import load_profile
from reliability_support import need_fault_plugins, one_line_error, run_advisor


def _probe_args(out, kinds):
    args = ["probe", "-o", str(out)]
    for k in kinds:
        args += ["--plugin", f"fault-{k}"]
    return args


def test_faults_fact_detector_raises_is_a_warning(tmp_path):
    need_fault_plugins()
    out = tmp_path / "p.toml"
    proc, marker = run_advisor(_probe_args(out, ["ok"]), faults=["ok", "facts-raise"])
    assert proc.returncode == 0, proc.stderr
    assert "fault-facts-raise" in proc.stderr and "injected fault" in proc.stderr
    prof = load_profile(out)
    assert any("fault-facts-raise" in w for w in prof.facts.warnings)
    assert prof.results[0].status == "ok"


def test_faults_fact_detector_exit_is_not_silent(tmp_path):
    """A detector calling sys.exit(0) must not end ``advisor probe`` silently with status 0."""
    need_fault_plugins()
    out = tmp_path / "p.toml"
    proc, _ = run_advisor(_probe_args(out, ["ok"]), faults=["ok", "facts-exit"])
    assert proc.returncode != 0 or out.exists(), "exit 0 and no profile: a silent failure"
    assert proc.returncode == 0 or one_line_error(proc.stderr), proc.stderr
    assert "Traceback" not in proc.stderr


def test_faults_fact_detector_exit_is_a_warning(tmp_path):
    need_fault_plugins()
    out = tmp_path / "p.toml"
    proc, _ = run_advisor(_probe_args(out, ["ok"]), faults=["ok", "facts-exit"])
    assert proc.returncode == 0, proc.stderr
    assert any("fault-facts-exit" in w for w in load_profile(out).facts.warnings)


#: A fact detector "should be fast (well under a second)" (advisor.hookspecs); one that has not
#: returned after this many seconds is hung.
FACTS_HANG_LIMIT_S = 10


def test_faults_fact_detector_hang_is_abandoned(tmp_path):
    import subprocess

    need_fault_plugins()
    out = tmp_path / "p.toml"
    try:
        proc, marker = run_advisor(_probe_args(out, ["ok"]), faults=["ok", "facts-hang"],
                                   timeout=FACTS_HANG_LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"advisor probe still running after {FACTS_HANG_LIMIT_S} s")
    assert proc.returncode == 0, proc.stderr
    assert any("fault-facts-hang" in w for w in load_profile(out).facts.warnings)
