"""Every call into plugin code goes through the one executor (``advisor.steps``): a probe whose
``lint``, ``figures``, ``headline``, pooled ``recommend`` or re-derived ``recommend`` hangs,
raises or exits is reported like a probe step that does: one line with the step's error text,
a time limit (the grace period, shortened here as in tests/verify/test_verify_steps.py), and
the rest of the command completes.
"""

from __future__ import annotations

import threading
import time

import pytest
from support import BUILTIN_LIBRARIES, StubProbe, sample_profile

from advisor.models import Advice, Finding

#: Seconds a pure plugin method may run in these tests (instead of ``advisor.steps.GRACE_S``).
SHORT_GRACE_S = 0.3

FAULTS = ["hang", "raise", "exit"]
#: The one line each fault gives, as ``advisor probe`` records it (``<step>`` substituted).
EXPECTED = {"hang": "{step}: exceeded its time budget: did not return within 0.3 s",
            "raise": "{step}: RuntimeError: injected fault",
            "exit": "{step}: SystemExit(3) raised by the plugin"}


@pytest.fixture(autouse=True)
def short_grace(monkeypatch):
    import advisor.steps

    monkeypatch.setattr(advisor.steps, "GRACE_S", SHORT_GRACE_S)


def _fault(kind: str, release: threading.Event):
    def hang(*_):
        release.wait(60)

    def raises(*_):
        raise RuntimeError("injected fault\nsecond line")

    def exits(*_):
        raise SystemExit(3)

    return {"hang": hang, "raise": raises, "exit": exits}[kind]


def _faulty(name: str, method: str, kind: str, release: threading.Event):
    probe = StubProbe()
    probe.name = name
    setattr(probe, method, _fault(kind, release))
    return probe


class _Fine(StubProbe):
    name = "fine"

    def lint(self, env, facts):
        return [Finding(id="fine-lint", severity="info", message="checked by fine")]

    def headline(self, evidence):
        return {"bw_bytes_per_s": 1.0}

    def figures(self, evidence, facts):
        return []

    def recommend(self, evidence, facts):
        return Advice(findings=[Finding(id="fine-advice", severity="info", message="ok")])


def _timed(fn):
    t0 = time.monotonic()
    out = fn()
    return out, time.monotonic() - t0


@pytest.mark.parametrize("kind", FAULTS)
def test_lint_fault_is_one_warning_and_the_rest_is_linted(kind, release):
    from advisor.lint import lint_entries, parse_env_text

    entries = parse_env_text("export GLIBC_TUNABLES=glibc.malloc.perturb\n", path="a.sh")
    probes = {"bad": _faulty("bad", "lint", kind, release), "fine": _Fine()}
    found, took = _timed(lambda: lint_entries(entries, facts=sample_profile().facts,
                                              probes=probes, libraries=BUILTIN_LIBRARIES))
    failed = [f for f in found if f.finding.id == "plugin-lint-failed"]
    assert [f.finding.message for f in failed] == [
        "probe bad: " + EXPECTED[kind].format(step="lint")]
    assert failed[0].severity == "warning" and failed[0].path == "a.sh"
    assert any(f.finding.id == "fine-lint" for f in found)  # the other probe still lints
    assert any(f.finding.id == "invalid-value" for f in found)  # and the generic checks ran
    assert took < 5


@pytest.mark.parametrize("kind", FAULTS)
def test_figures_fault_is_one_warning_and_the_report_completes(kind, release):
    from advisor.report.collect import collect_figures

    prof = sample_profile()
    prof = prof.model_copy(update={"verifications": []})
    figs, took = _timed(lambda: collect_figures(
        prof, {"mpich-cma": _faulty("mpich-cma", "figures", kind, release)}))
    assert figs.warnings == ["figures of mpich-cma left out: "
                             + EXPECTED[kind].format(step="figures")]
    assert figs.by_probe == {} and took < 5


def _fleet(tmp_path, n: int = 3):
    from fleet_support import write_node

    for i in range(1, n + 1):
        write_node(tmp_path, f"node{i}", sample_profile())
    return tmp_path


@pytest.mark.parametrize("kind", FAULTS)
def test_headline_fault_is_one_warning_and_the_fleet_report_completes(kind, release,
                                                                       tmp_path):
    from advisor.fleet.report import build_report

    probes = {"mpich-cma": _faulty("mpich-cma", "headline", kind, release)}
    rep, took = _timed(lambda: build_report(_fleet(tmp_path), probes=probes,
                                            write_profiles=False))
    text = EXPECTED[kind].format(step="headline")
    assert rep.warnings == [f"headline figures of mpich-cma left out on 3 node(s) "
                            f"(node[1-3]): {text}"]
    assert [n.state for n in rep.nodes] == ["ok"] * 3  # the nodes are still reported
    assert len(rep.classes) == 1 and rep.classes[0].error is None
    # one hung headline is waited for once, not once per node
    assert took < 3


def test_a_healthy_headline_gives_no_warning(tmp_path):
    from advisor.fleet.report import build_report

    probes = {"mpich-cma": _Fine()}
    rep = build_report(_fleet(tmp_path, 2), probes=probes, write_profiles=False)
    assert rep.warnings == []
    assert {f.figure for f in rep.flags} <= {"mpich-cma:bw_bytes_per_s"}


@pytest.mark.parametrize("kind", FAULTS)
def test_pooled_recommend_fault_fails_that_result_only(kind, release):
    from advisor.fleet.pool import class_profile

    probe = _faulty("mpich-cma", "recommend", kind, release)
    prof = class_profile("c", [sample_profile(), sample_profile()], {"mpich-cma": probe},
                         n_nodes=2, hostlist="node[1-2]")
    (res,) = prof.results
    assert res.status == "failed"
    assert res.reason == EXPECTED[kind].format(step="recommend") + " (on the pooled evidence)"


@pytest.mark.parametrize("kind", FAULTS)
def test_rerecommend_fault_fails_that_result_and_rederives_the_others(kind, release):
    from advisor.runner import rerecommend

    prof = sample_profile()
    other = prof.results[0].model_copy(update={"probe": "fine", "plugin": "fine"})
    prof = prof.model_copy(update={"results": [prof.results[0], other]})
    probes = {"mpich-cma": _faulty("mpich-cma", "recommend", kind, release), "fine": _Fine()}
    again, took = _timed(lambda: rerecommend(prof, probes))
    bad, fine = again.results
    assert (bad.status, bad.reason, bad.recommendations) == (
        "failed", EXPECTED[kind].format(step="recommend"), [])
    assert fine.status == "ok" and fine.recommendations == []  # _Fine advises nothing
    assert took < 5


def test_a_hung_pure_call_is_not_started_again_while_it_runs(release):
    from advisor.steps import StepRunner

    calls = []

    def hangs():
        calls.append(1)
        release.wait(60)

    first = StepRunner(reap=False).call(hangs, step="headline", owner="p-still-running")
    again = StepRunner(reap=False).call(hangs, step="headline", owner="p-still-running")
    assert first.kind == again.kind == "timeout" and len(calls) == 1
    assert again.error == ("headline: not run: an earlier call is still running past its "
                           "time budget")
    other = StepRunner(reap=False).call(lambda: 1, step="figures", owner="p-still-running")
    assert other.ok and other.value == 1  # another method of the same probe still runs
    release.set()
    first.thread.join(5)
    done = StepRunner(reap=False).call(lambda: 2, step="headline", owner="p-still-running")
    assert done.ok and done.value == 2  # once it returned, it is called again
