"""A probe whose pure ``lint``, ``headline`` or ``figures`` raises or exits, through the real
CLI (the fault plugins of tests/reliability/fault_plugins, ``ADVISOR_TEST_FAULT_METHODS``): one
line with the executor's error text, no traceback, and the rest of the command completes.  A
hang of the same methods, with a shortened time limit, is in tests/unit/test_plugin_calls.py."""

from __future__ import annotations

import pytest
from reliability_support import need_fault_plugins, run_advisor
from support import sample_profile

#: The one line each fault gives (``advisor.steps``), ``{step}`` being the method.
TEXT = {"raise": "{step}: RuntimeError: injected fault: {step} raised",
        "exit": "{step}: SystemExit(0) raised by the plugin"}


def _run(args, method: str, how: str, **kw):
    proc, _ = run_advisor(args, faults=["ok"], env={
        "ADVISOR_TEST_FAULT_METHODS": f"{method}:{how}"}, **kw)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _nodes(directory, n: int = 2):
    from fleet_support import write_node

    prof = sample_profile()
    res = prof.results[0].model_copy(update={"probe": "fault-ok", "plugin": "fault-ok"})
    for i in range(1, n + 1):
        write_node(directory, f"node{i}", prof.model_copy(update={"results": [res]}))
    return directory


@pytest.mark.parametrize("how", sorted(TEXT))
def test_lint_fault_is_one_warning(tmp_path, how):
    need_fault_plugins()
    env_file = tmp_path / "a.sh"
    env_file.write_text("export GLIBC_TUNABLES=glibc.malloc.perturb\n")
    proc = _run(["lint", str(env_file), "--plugin", "fault-ok"], "lint", how)
    failed = [line for line in proc.stdout.splitlines() if "[plugin-lint-failed]" in line]
    assert failed == [f"{env_file}: warning: probe fault-ok: "
                      f"{TEXT[how].format(step='lint')} [plugin-lint-failed]"], proc.stdout
    assert "[invalid-value]" in proc.stdout  # the rest of the file is still checked
    assert proc.returncode == 1  # for that error, as without the fault


@pytest.mark.parametrize("how", sorted(TEXT))
def test_headline_fault_is_one_warning_and_the_fleet_report_completes(tmp_path, how):
    need_fault_plugins()
    proc = _run(["fleet", "report", str(_nodes(tmp_path))], "headline", how)
    warned = [line for line in proc.stderr.splitlines() if "headline figures" in line]
    assert warned == ["advisor: warning: fleet: headline figures of fault-ok left out on 2 "
                      f"node(s) (node[1-2]): {TEXT[how].format(step='headline')}"], proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "nodes: 2 ok" in proc.stdout
    assert (tmp_path / "classes").is_dir()  # the class profile is still written


@pytest.mark.parametrize("how", sorted(TEXT))
def test_figures_fault_is_one_warning_and_the_report_completes(tmp_path, how):
    need_fault_plugins()
    pytest.importorskip("matplotlib", reason="the report extra is not installed")
    prof = tmp_path / "node1.toml"
    _nodes(tmp_path, 1)
    out = tmp_path / "r.html"
    proc = _run(["report", "-p", str(prof), "-o", str(out)], "figures", how)
    assert proc.returncode == 0, proc.stderr
    assert (f"advisor: warning: figures of fault-ok left out: "
            f"{TEXT[how].format(step='figures')}") in proc.stderr.splitlines()
    assert "fault-ok" in out.read_text()  # the report holds the probe's results
