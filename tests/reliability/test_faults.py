"""Fault isolation: a probe that raises, exits, hangs past its budget, loses an MPI rank, finds
no mpiexec, or whose OpenCL platform fails is recorded as ``failed`` with its reason in a valid
partial profile; the other probes complete; ``advisor probe`` exits with ``ExitCode.PARTIAL``; no
process is left behind.  Faults are real (test plugins in tests/reliability/fault_plugins run
through the real CLI, real MPICH, real pyopencl); nothing is mocked."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.errors import ExitCode
from advisor.profile import load_profile
from reliability_support import (kill_leftovers, leftovers, need_fault_plugins, one_line_error,
                                 run_advisor)
from support import tool

#: Injected faults and a word their recorded reason must contain (what the user needs to know).
EXPECTED_REASON = {
    "fault-raise": "injected fault",
    "fault-exit": "SystemExit",
    "fault-hang": "time budget",
    "fault-killrank": "LaunchError",
    "fault-opencl": "PLATFORM_NOT_FOUND",
}


def _probe_args(out: Path, kinds, *extra) -> list[str]:
    args = ["probe", "-o", str(out)]
    for k in kinds:
        args += ["--plugin", f"fault-{k}"]
    return [*args, *extra]


def _check_partial(proc, out: Path):
    assert proc.returncode == ExitCode.PARTIAL, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip() == str(out)
    prof = load_profile(out)
    return {r.probe: r for r in prof.results}


def test_faults_isolated_in_one_run(tmp_path):
    """All kinds of fault in one ``advisor probe``: each recorded, the fault-free probe ok."""
    need_fault_plugins()
    tool("mpiexec")
    pytest.importorskip("pyopencl")
    no_icd = tmp_path / "no-such-icd-dir"  # ocl-icd finds no vendor: no platform at all
    out = tmp_path / "p.toml"
    kinds = ["ok", "raise", "exit", "hang", "orphan", "killrank", "opencl"]
    proc, marker = run_advisor(_probe_args(out, kinds, "--time-budget", "6"), faults=kinds,
                               env={"OCL_ICD_VENDORS": str(no_icd)}, timeout=150)
    try:
        results = _check_partial(proc, out)
        assert results["fault-ok"].status == "ok", results["fault-ok"].reason
        assert results["fault-ok"].recommendations, "the healthy probe's advice was lost"
        for name, word in EXPECTED_REASON.items():
            assert results[name].status == "failed", (name, results[name])
            assert word in (results[name].reason or ""), (name, results[name].reason)
            # the failure is also reported on stderr, one line per probe
            assert any(l.startswith(f"advisor: {name}: failed") for l in proc.stderr.splitlines())
        # the reason names the step that failed (a plugin author's first question)
        assert results["fault-raise"].reason.startswith("measure: RuntimeError")
        assert results["fault-hang"].reason.startswith("measure: exceeded its time budget")
        # the hung step started a child that sleeps an hour: it must be gone
        assert "killed" in results["fault-hang"].reason
        # a probe that returns but leaves a daemon behind: ok, with a warning naming it
        orphan = results["fault-orphan"]
        assert orphan.status == "ok"
        assert [f.id for f in orphan.findings] == ["advisor-leftover-processes"]
        assert "sleep" in orphan.findings[0].message
        assert leftovers(marker) == []
    finally:
        kill_leftovers(marker)


def test_faults_opencl_platform_without_devices(tmp_path):
    """PoCL asked for a device driver that does not exist: a platform with no device."""
    need_fault_plugins()
    pytest.importorskip("pyopencl")
    out = tmp_path / "p.toml"
    proc, marker = run_advisor(_probe_args(out, ["ok", "opencl"]), faults=["ok", "opencl"],
                               env={"POCL_DEVICES": "no-such-pocl-driver"})
    results = _check_partial(proc, out)
    assert results["fault-ok"].status == "ok"
    assert results["fault-opencl"].status == "failed" and results["fault-opencl"].reason
    assert leftovers(marker) == []


def test_faults_no_mpiexec_launcher_missing(tmp_path):
    """``--launcher /nonexistent/mpiexec``: the MPI probe fails naming the launcher."""
    need_fault_plugins()
    out = tmp_path / "p.toml"
    proc, marker = run_advisor(_probe_args(out, ["ok", "nompiexec"], "--launcher",
                                           "/nonexistent/mpiexec -n 2"),
                               faults=["ok", "nompiexec"])
    results = _check_partial(proc, out)
    assert results["fault-ok"].status == "ok"
    assert results["fault-nompiexec"].status == "failed"
    assert "/nonexistent/mpiexec" in results["fault-nompiexec"].reason
    assert leftovers(marker) == []


def test_faults_no_mpiexec_path_stripped(tmp_path):
    """A batch job with a bare ``PATH`` and ``ADVISOR_LAUNCHER=mpiexec``: no mpiexec found."""
    need_fault_plugins()
    out = tmp_path / "p.toml"
    proc, marker = run_advisor(_probe_args(out, ["ok", "nompiexec"]), faults=["ok", "nompiexec"],
                               env={"PATH": str(tmp_path / "empty-bin"),
                                    "ADVISOR_LAUNCHER": "mpiexec -n {nprocs}"})
    results = _check_partial(proc, out)
    assert results["fault-ok"].status == "ok"
    assert results["fault-nompiexec"].status == "failed"
    assert "mpiexec" in results["fault-nompiexec"].reason
    assert leftovers(marker) == []


def test_faults_bare_path_still_finds_venv_mpiexec(tmp_path):
    """With a bare ``PATH`` and no launcher configured, the ``mpiexec`` beside the interpreter
    (the mpich wheel's) is used and the 2-rank job runs: hydra needs nothing from ``PATH``."""
    need_fault_plugins()
    tool("mpiexec")
    out = tmp_path / "p.toml"
    proc, marker = run_advisor(_probe_args(out, ["ok", "nompiexec"]), faults=["ok", "nompiexec"],
                               env={"PATH": str(tmp_path / "empty-bin")})
    assert proc.returncode == 0, proc.stderr
    results = {r.probe: r for r in load_profile(out).results}
    assert results["fault-nompiexec"].status == "ok"
    assert results["fault-nompiexec"].evidence[0].values["ranks"] == 2
    assert leftovers(marker) == []


def test_faults_missing_fault_plugin_selection_is_bad_input(tmp_path):
    """Asking for a probe that no plugin registers is exit 2 with one line, no profile."""
    out = tmp_path / "p.toml"
    proc, _ = run_advisor(["probe", "-o", str(out), "--plugin", "no-such-probe"])
    assert proc.returncode == 2
    assert len(one_line_error(proc.stderr)) == 1 and "no-such-probe" in proc.stderr
    assert not out.exists()


def test_faults_real_mpich_cma_missing_launcher_not_blamed_on_cma(tmp_path):
    """The real mpich-cma probe with a launcher that cannot start: failed naming the launcher,
    and no advice to disable CMA (the launcher, not CMA, is what failed)."""
    from support import need_cma_usable

    need_cma_usable()  # where CMA is blocked, the sibling test rightly decides before any launch
    out = tmp_path / "p.toml"
    proc, marker = run_advisor(["probe", "-o", str(out), "--plugin", "mpich-cma", "--quick",
                                "--launcher", "/nonexistent/mpiexec -n 2"], timeout=120)
    assert proc.returncode in (0, ExitCode.PARTIAL), proc.stderr
    res = load_profile(out).results[0]
    assert leftovers(marker) == []
    assert res.status in ("failed", "not-applicable")
    assert "/nonexistent/mpiexec" in (res.reason or "")
    assert not [s for rec in res.recommendations for s in rec.settings
                if s.name.endswith("CMA_ENABLE")]


# ------------------------------------------------------------------ in-process runner contract


class _Probe:
    description = "test"

    def __init__(self, name, check=None, measure=None, recommend=None):
        from advisor.models import Advice
        from advisor.probe import Applicability

        self.name = name
        self.check = check or (lambda facts: Applicability(usable=True))
        self.measure = measure or (lambda ctx: [])
        self.recommend = recommend or (lambda ev, facts: Advice())


def _raise(exc):
    def f(*a):
        raise exc
    return f


@pytest.mark.parametrize("probe,word", [
    (_Probe("check-wrong-type", check=lambda f: "yes"), "not Applicability"),
    (_Probe("measure-wrong-type", measure=lambda c: ["x"]), "non-Evidence"),
    (_Probe("recommend-raises", recommend=_raise(ValueError("bad advice"))), "recommend"),
    (_Probe("recommend-wrong", recommend=lambda e, f: {}), "not Advice"),
    (_Probe("check-keyboard", check=_raise(KeyboardInterrupt())), "KeyboardInterrupt"),
    (_Probe("measure-exit", measure=_raise(SystemExit(3))), "SystemExit"),
    (_Probe("check-raises", check=_raise(OSError(13, "Permission denied"))), "Permission denied"),
], ids=lambda v: v.name if isinstance(v, _Probe) else "")
def test_faults_runner_contract_breaches_fail_only_that_probe(probe, word):
    from advisor.models import Facts
    from advisor.runner import partial, run_probes

    healthy = _Probe("healthy")
    prof = run_probes({probe.name: probe, "healthy": healthy}, {}, Facts(hostname="h"),
                      time_budget_s=5)
    res = {r.probe: r for r in prof.results}
    assert res["healthy"].status == "ok"
    assert res[probe.name].status == "failed" and word in res[probe.name].reason
    assert partial(prof)


def test_probe_after_a_step_that_will_not_stop_is_flagged(tmp_path):
    """A step that ignores its deadline and starts no process cannot be killed: it is abandoned,
    keeps running, and the probe measured after it carries a warning saying so."""
    need_fault_plugins()
    out = tmp_path / "p.toml"
    kinds = ["busy", "ok"]  # fault-busy sorts, and so runs, first
    proc, marker = run_advisor(_probe_args(out, kinds, "--time-budget", "2"), faults=kinds,
                               timeout=120)
    try:
        results = _check_partial(proc, out)
        assert results["fault-busy"].status == "failed"
        assert "time budget" in results["fault-busy"].reason
        ok = results["fault-ok"]
        assert ok.status == "ok" and ok.recommendations
        (f,) = [f for f in ok.findings if f.id == "advisor-abandoned-step-running"]
        assert f.severity == "warning" and "fault-busy" in f.message
    finally:
        kill_leftovers(marker)
