"""advisor verify records the machine class it measured on (issue 25, item 4).

A verdict stores ``Facts.class_fingerprint()`` of the machine verify ran on.  Taken on another
class than the profile's, it is stored as such, its note says so, it does not replace the
verdict of the profile's class, and it vetoes nothing in emit (``advisor.emit.veto``).  The
probe is a stub that returns fixed figures: what is tested is where the verdict goes, and the
host's rule on those figures: whatever a probe calls it, a CI wholly below 1 beyond the noise
floor is stored as a regression.
"""

from __future__ import annotations

from support import BUILTIN_LIBRARIES, StubProbe, recorded_facts, sample_profile

from advisor.emit.veto import vetoes
from advisor.models import Recommendation, Setting, Verification
from advisor.verify import verify_profile


class _Fixed(StubProbe):
    """Returns a regression: CI wholly below 1 beyond a 1 % floor."""

    name = "mpich-cma"

    def verify(self, rec, ctx):
        return Verification(recommendation=rec.id, verdict="regression", ratio=0.8,
                            ci_low=0.75, ci_high=0.85, noise_floor=0.01)


def _profile():
    prof = sample_profile()
    res = prof.results[0]
    rec = res.recommendations[0].model_copy(update={"verifiable": True})
    return prof.model_copy(update={"results": [res.model_copy(update={
        "recommendations": [rec]})]})


def test_a_verdict_on_the_profiles_class_vetoes_and_is_replaced_there():
    prof = _profile()
    here = prof.facts
    updated, out = verify_profile(prof, {"mpich-cma": _Fixed()}, facts=here, time_budget_s=10,
                                  libraries=BUILTIN_LIBRARIES)
    (v,) = updated.verifications
    assert v.class_fingerprint == here.class_fingerprint() and v.verdict == "regression"
    assert "not the profile's" not in out[0].note
    assert ("mpich-cma", "cma-threshold") in vetoes(updated)
    again, _ = verify_profile(updated, {"mpich-cma": _Fixed()}, facts=here, time_budget_s=10,
                              libraries=BUILTIN_LIBRARIES)
    assert len(again.verifications) == 1  # replaced, one per recommendation and class


def test_a_verdict_from_another_class_is_kept_apart_and_vetoes_nothing():
    prof = _profile()
    other = recorded_facts()
    assert other.class_fingerprint() != prof.facts.class_fingerprint()
    ours, _ = verify_profile(prof, {"mpich-cma": _Fixed()}, facts=prof.facts, time_budget_s=10,
                             libraries=BUILTIN_LIBRARIES)
    elsewhere, out = verify_profile(prof, {"mpich-cma": _Fixed()}, facts=other,
                                    time_budget_s=10, libraries=BUILTIN_LIBRARIES)
    (v,) = elsewhere.verifications
    assert v.class_fingerprint == other.class_fingerprint()
    assert "not the profile's" in out[0].note and "leaves nothing out" in out[0].note
    assert vetoes(elsewhere) == {}
    # measured elsewhere after a verdict here: both are kept, the profile class's still vetoes
    both, _ = verify_profile(ours, {"mpich-cma": _Fixed()}, facts=other, time_budget_s=10,
                             libraries=BUILTIN_LIBRARIES)
    assert sorted(x.class_fingerprint for x in both.verifications) == sorted(
        [prof.facts.class_fingerprint(), other.class_fingerprint()])
    assert ("mpich-cma", "cma-threshold") in vetoes(both)


class _LabelProbe(StubProbe):
    """Returns a fixed verification: the host's rule is about its figures, not a measurement."""

    name = "label-demo"

    def verify(self, rec, ctx):
        return Verification(recommendation=rec.id, verdict="no-effect", ratio=0.64,
                            ci_low=0.57, ci_high=0.90, noise_floor=0.05)


def test_host_stores_a_ci_wholly_below_the_band_as_regression():
    rec = Recommendation(id="r", title="t", rationale="r", confidence="low", verifiable=True,
                         settings=[Setting(library="glibc", name="GLIBC_TUNABLES",
                                           value="glibc.malloc.perturb=165", separator=":")])
    prof = sample_profile()
    res = prof.results[0].model_copy(update={"probe": "label-demo", "recommendations": [rec]})
    prof = prof.model_copy(update={"results": [res]})
    facts = recorded_facts()
    updated, out = verify_profile(prof, {"label-demo": _LabelProbe()}, facts=facts,
                                  time_budget_s=10, libraries=BUILTIN_LIBRARIES)
    assert out[0].verdict == "regression" and "wholly below 1" in out[0].note
    stored = updated.verifications[0]
    assert stored.verdict == "regression"
    assert stored.class_fingerprint == facts.class_fingerprint()
