"""advisor verify: verdicts, storage in the profile, exit codes.

The measuring probe here is a small real one: it times ``numpy.empty`` of 16 MiB in fresh
processes with and without ``GLIBC_TUNABLES=glibc.malloc.perturb=165``, through the harness
(``run_python``, ``sample``, ``interleave``, ``compare``).  glibc's malloc fills every new chunk
when perturb is set (glibc manual, "Memory Related Tunables": glibc.malloc.perturb), so that
advice is a real, large regression and its inverse (against an environment that has it) a real
improvement.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support import BUILTIN_LIBRARIES, StubProbe, sample_profile

from advisor.models import Evidence, Recommendation, Setting, Verification
from advisor.probe import Applicability
from advisor.baseline import Baseline, all_default
from advisor.verify import has_regression, verify_profile

PERTURB = "glibc.malloc.perturb=165"
WORKER = ("import json, numpy as np\n"
          "from advisor.measure import sample\n"
          "r = sample(lambda: np.empty(16 << 20, np.uint8), min_samples=5, max_time_s=0.1)\n"
          "print(json.dumps({'samples': list(r.samples)}))\n")


class PerturbProbe(StubProbe):
    """A real probe whose advice (fill every malloc'd chunk) is bad for allocation time."""

    name = "perturb-demo"
    description = "glibc malloc perturb (test probe)"


    def verify(self, rec, ctx):
        from advisor.measure import interleave, run_python

        advised = {s.name: str(s.value) for s in rec.settings}
        against_env = ctx.options.get("against") == "env"
        baseline = {} if against_env else {n: None for n in advised}

        def run_one(cfg, rnd):
            env = advised if cfg == "advised" else baseline
            return run_python(["-c", WORKER], env=env, timeout_s=60)["samples"]

        res = interleave(["baseline", "advised"], run_one, repeats=2, deadline=ctx.deadline,
                         max_extra_rounds=0)
        cmp = res.compare("baseline", "advised", higher_is_better=False, seed=ctx.seed)
        verdict = {"better": "confirmed", "worse": "regression",
                   "indistinguishable": "no-effect"}[cmp.verdict]
        ev = Evidence(id="perturb-verify", values=cmp.as_values())
        return Verification(recommendation=rec.id, verdict=verdict, ratio=cmp.ratio,
                            ci_low=cmp.ci_low, ci_high=cmp.ci_high, noise_floor=cmp.noise_floor,
                            evidence=[ev])


class NoVerifyProbe(PerturbProbe):
    name = "no-verify"
    verify = None


def _profile_with(recs, probe="perturb-demo"):
    p = sample_profile()
    res = p.results[0].model_copy(update={"probe": probe, "plugin": probe,
                                          "recommendations": recs})
    return p.model_copy(update={"results": [res]})


def _perturb_rec():
    return Recommendation(id="perturb", title="fill malloc'd memory", rationale="test",
                          confidence="low", verifiable=True, settings=[
                              Setting(library="glibc", name="GLIBC_TUNABLES", value=PERTURB,
                                      type="list", separator=":")])


def _default_rec():
    return Recommendation(id="threshold-default", title="keep the CMA threshold", rationale="x",
                          confidence="high", verifiable=True, settings=[
                              Setting(library="mpich", name="MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
                                      value=8192, default=8192, type="bytes")])


def test_default_setting_is_no_effect_without_measuring():
    prof = _profile_with([_default_rec()])
    assert all_default(prof.results[0].recommendations[0], prof.facts, (), BUILTIN_LIBRARIES)
    calls = []

    class Spy(PerturbProbe):
        def verify(self, rec, ctx):  # must not be reached
            calls.append(rec.id)
            raise AssertionError("measured a default setting")

    updated, out = verify_profile(prof, {"perturb-demo": Spy()}, facts=prof.facts,
                                  time_budget_s=5, libraries=BUILTIN_LIBRARIES)
    assert [o.verdict for o in out] == ["no-effect"] and calls == []
    assert updated.verifications[0].recommendation == "perturb-demo:threshold-default"


def test_regression_is_measured_and_stored():
    prof = _profile_with([_perturb_rec(), _default_rec()])
    updated, out = verify_profile(prof, {"perturb-demo": PerturbProbe()}, facts=prof.facts,
                                  time_budget_s=60, libraries=BUILTIN_LIBRARIES)
    by = {o.recommendation: o for o in out}
    v = by["perturb"].verification
    assert v.verdict == "regression", by["perturb"].to_dict()
    assert v.ratio < 1 and v.ci_high < 1 and v.evidence
    assert by["threshold-default"].verdict == "no-effect"
    assert has_regression(out)
    assert {x.recommendation for x in updated.verifications} == {
        "perturb-demo:perturb", "perturb-demo:threshold-default"}
    # verifying again replaces, never duplicates
    again, _ = verify_profile(updated, {"perturb-demo": PerturbProbe()}, facts=prof.facts,
                              time_budget_s=60, plugins={"nothing-selected"},
                              libraries=BUILTIN_LIBRARIES)
    assert len(again.verifications) == 2


def test_against_env_confirms_removing_a_bad_setting(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", PERTURB)
    rec = _perturb_rec().model_copy(update={"id": "no-perturb", "settings": [
        Setting(library="glibc", name="GLIBC_TUNABLES", value="glibc.malloc.perturb=0",
                type="list", separator=":")]})
    prof = _profile_with([rec])
    _, out = verify_profile(prof, {"perturb-demo": PerturbProbe()}, facts=prof.facts,
                            time_budget_s=60, against=Baseline.ENV, libraries=BUILTIN_LIBRARIES)
    assert out[0].verdict == "confirmed", out[0].to_dict()
    assert out[0].verification.ci_low > 1


def test_not_measurable_reasons():
    rec = _perturb_rec()
    cases = {
        "missing": ({}, "not installed"),
        "no-verify": ({"no-verify": NoVerifyProbe()}, "no verify"),
    }
    for probe, (probes, why) in cases.items():
        _, out = verify_profile(_profile_with([rec], probe=probe), probes,
                                facts=sample_profile().facts, time_budget_s=5,
                                libraries=BUILTIN_LIBRARIES)
        assert out[0].verdict == "not-measurable" and why in out[0].note, out[0]

    class Raises(PerturbProbe):
        def verify(self, rec, ctx):
            raise RuntimeError("boom")

    class Unusable(PerturbProbe):
        def check(self, facts):
            return Applicability(usable=False, reason="blocked here")

    for probe, why in ((Raises(), "boom"), (Unusable(), "blocked here")):
        _, out = verify_profile(_profile_with([rec]), {"perturb-demo": probe},
                                facts=sample_profile().facts, time_budget_s=5,
                                libraries=BUILTIN_LIBRARIES)
        assert out[0].verdict == "not-measurable"
        assert why in (out[0].error or "") + out[0].note
    not_verifiable = rec.model_copy(update={"verifiable": False})
    _, out = verify_profile(_profile_with([not_verifiable]), {"perturb-demo": PerturbProbe()},
                            facts=sample_profile().facts, time_budget_s=5,
                            libraries=BUILTIN_LIBRARIES)
    assert out[0].verdict == "not-measurable"


def test_cli_verify_reports_default_as_no_effect(tmp_path, advisor_home):
    from advisor.profile import load_profile
    from advisor.save import save_profile

    prof = sample_profile()
    res = prof.results[0]
    prof = prof.model_copy(update={"results": [res.model_copy(update={
        "recommendations": [_default_rec()]})]})
    path = save_profile(prof, tmp_path / "p.toml")
    done = subprocess.run([sys.executable, "-m", "advisor", "verify", "--profile", str(path),
                           "--json", "--time-budget", "5"], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(d["recommendation"], d["verdict"]) for d in data["verifications"]] == [
        ("threshold-default", "no-effect")]
    # the joint verdict of a setting at its default is the same, without measuring either
    assert [(d["recommendation"], d["scope"], d["verdict"]) for d in data["joint"]] == [
        ("threshold-default", "joint", "no-effect")]
    assert data["findings"] == []
    assert "no-effect" in done.stderr and "Joint verification" in done.stderr  # the tables
    stored = load_profile(path).verifications
    assert [(v.recommendation, v.verdict) for v in stored] == [
        ("mpich-cma:threshold-default", "no-effect"),
        ("mpich-cma:threshold-default@joint", "no-effect")]
    bad = subprocess.run([sys.executable, "-m", "advisor", "verify", "--profile", str(path),
                          "--plugin", "nope"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "nope" in bad.stderr
