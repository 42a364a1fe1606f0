"""advisor verify with the real mpich-cma probe: MPICH from the wheel, ``mpiexec -n 2``.

* The recommendation the plugin derives from its recorded 5.0.2 sweep keeps the library default
  (threshold 8192, CMA on): verify reports "no-effect" without measuring.
* A threshold recommendation that differs from the default (the 4.3.x default threshold from the
  plugin's knob record, as a profile made with MPICH 4.3 would carry) is re-measured here against
  the 5.0.2 defaults: whatever the verdict, it comes with a ratio, its CI and the noise floor, and
  the verdict agrees with them.
"""

from __future__ import annotations

import sys

import pytest
from support import BUILTIN_LIBRARIES, DATA, need_cma_usable, recorded_facts, sample_profile, tool

from advisor.models import Evidence, Recommendation, Setting
from advisor.verify import verify_profile

pytestmark = pytest.mark.integration


def _probe_and_facts():
    from advisor.facts import detect
    from advisor.plugins import load

    reg = load(only_probes=["mpich-cma"])
    probe = reg.probes.get("mpich-cma")
    if probe is None or not callable(getattr(probe, "verify", None)):
        pytest.skip("the mpich-cma probe exposes no verify() in this checkout")
    return reg, detect(reg.fact_detectors, opencl=False)


def _profile(recs, facts):
    p = sample_profile()
    res = p.results[0].model_copy(update={"recommendations": recs})
    return p.model_copy(update={"results": [res], "facts": facts,
                                "fingerprint": facts.fingerprint()})


def test_verify_mpich_cma_recorded_advice_is_no_effect():
    import json

    from advisor_mpich_cma import recommend

    reg, facts = _probe_and_facts()
    path = DATA / "mpich_cma" / "sweep-5.0.2.json"
    if not path.exists():
        pytest.skip("recorded sweep not present")
    ev = [Evidence.model_validate(e) for e in json.loads(path.read_text())]
    # the advice of the recording (MPICH 5.0.2, security unknown), not of this host's Yama
    recs = recommend.recommend(ev, recorded_facts()).recommendations
    assert recs, "the recorded sweep gives a recommendation"
    _, out = verify_profile(_profile(recs, facts), reg.probes, facts=facts, knobs=reg.knobs,
                            time_budget_s=5, libraries=BUILTIN_LIBRARIES)
    by = {o.recommendation: o for o in out}
    assert by["cma-threshold"].verdict == "no-effect"
    assert "default" in by["cma-threshold"].note


def test_verify_mpich_cma_threshold_with_ci():
    tool("mpiexec")
    need_cma_usable()
    from advisor_mpich_cma import knobs

    reg, facts = _probe_and_facts()
    if facts.mpi.implementation != "mpich" or facts.mpi.flavour != "upstream":
        pytest.skip(f"needs upstream MPICH, found {facts.mpi.implementation} {facts.mpi.flavour}")
    knob = knobs.knob(knobs.CMA_THRESHOLD)
    old = int(knob.default_for("4.3.2"))
    here = knob.default_for(facts.mpi.version)
    if here is None or int(here) == old:
        pytest.skip(f"MPICH {facts.mpi.version}: its default threshold equals the 4.3 one")
    rec = Recommendation(
        id="cma-threshold", title=f"Use CMA from {old} bytes", rationale="MPICH 4.3-era advice",
        confidence="medium", verifiable=True, settings=[
            Setting(library="mpich", flavour="upstream", name=knobs.CMA_ENABLE, value=1, type="int",
                    default=1, is_default=True),
            Setting(library="mpich", flavour="upstream", name=knobs.CMA_THRESHOLD, value=old,
                    type="bytes", unit="bytes", default=int(here))])
    prof = _profile([rec], facts)
    updated, out = verify_profile(prof, reg.probes, facts=facts, knobs=reg.knobs,
                                  time_budget_s=45, seed=1, libraries=BUILTIN_LIBRARIES)
    o = out[0]
    v = o.verification
    sys.stderr.write(f"verify mpich-cma threshold {old} vs {here}: {o.to_dict()}\n")
    assert not o.error, o.error
    assert v.verdict in ("confirmed", "no-effect", "regression")
    assert v.ratio is not None and v.ci_low <= v.ratio <= v.ci_high
    assert v.noise_floor is not None and v.noise_floor >= 0
    if v.verdict == "confirmed":
        assert v.ci_low > 1 + v.noise_floor
    elif v.verdict == "regression":
        assert v.ci_high < 1 / (1 + v.noise_floor)
    ev = v.evidence[0]
    sizes = sorted({int(p.x) for s in ev.series for p in s.points})
    assert sizes[0] <= min(old, int(here)) * 1.0 and sizes[-1] >= max(old, int(here))
    assert ev.values.get("decided_by")
    assert updated.verifications[0].recommendation == "mpich-cma:cma-threshold"


def test_verify_sizes_are_where_the_configurations_differ():
    V = pytest.importorskip("advisor_mpich_cma.verify")
    # both on, thresholds 8192 and 16384: from the lower threshold, one between, one above both
    sizes = V.sizes_between((True, 16384), (True, 8192))
    assert sizes[0] == 8192 and any(8192 < s < 16384 for s in sizes) and sizes[-1] > 16384
    assert V.sizes_between((True, 8192), (True, 8192)) == []  # same: nothing to measure
    assert V.sizes_between((False, 8192), (False, 0)) == []
    one_sided = V.sizes_between((False, None), (True, 8192))  # advice disables CMA
    assert one_sided[0] == 8192 and max(one_sided) <= V.MAX_BYTES
    assert len(V.sizes_between((True, 16384), (True, 8192), quick=True)) < len(sizes)


def test_verify_mpich_cma_joint_runs_the_sweep_under_the_other_plugins_settings():
    """Joint verification: the mpich-cma sweep is re-run with host-buffer's
    ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1`` in the advised environment (background.md section
    4: that tunable changes which pages MPICH's buffers get) and removed from the baseline."""
    tool("mpiexec")
    need_cma_usable()
    from advisor_mpich_cma import knobs

    from advisor.models import PluginResult

    reg, facts = _probe_and_facts()
    if facts.mpi.implementation != "mpich" or facts.mpi.flavour != "upstream":
        pytest.skip(f"needs upstream MPICH, found {facts.mpi.implementation} {facts.mpi.flavour}")
    here = knobs.knob(knobs.CMA_THRESHOLD).default_for(facts.mpi.version)
    if here is None:
        pytest.skip(f"MPICH {facts.mpi.version}: no known default threshold")
    rec = Recommendation(
        id="cma-threshold", title="Use CMA from 4x the default", rationale="test", confidence="medium",
        verifiable=True, settings=[Setting(library="mpich", flavour="upstream",
                                           name=knobs.CMA_THRESHOLD, value=4 * int(here),
                                           type="bytes", unit="bytes", default=int(here))])
    hugetlb = Recommendation(
        id="glibc-malloc-hugetlb", title="huge pages for malloc", rationale="test",
        confidence="high", verifiable=True, settings=[Setting(
            library="glibc", name="GLIBC_TUNABLES", value="glibc.malloc.hugetlb=1", type="list",
            separator=":")])
    prof = _profile([rec], facts)
    prof = prof.model_copy(update={"results": [*prof.results, PluginResult(
        plugin="host-buffer", probe="host-buffer", status="ok", duration_s=1.0,
        recommendations=[hugetlb])]})
    _, out = verify_profile(prof, {"mpich-cma": reg.probes["mpich-cma"]}, facts=facts,
                            knobs=reg.knobs, plugins={"mpich-cma"}, time_budget_s=40,
                            quick=True, joint=True, seed=1, libraries=BUILTIN_LIBRARIES)
    joint = next(o for o in out if o.scope == "joint")
    v = joint.verification
    sys.stderr.write(f"joint mpich-cma: {joint.to_dict()}\n")
    assert not joint.error, joint.error
    assert v.recommendation == "mpich-cma:cma-threshold@joint"
    assert v.verdict in ("confirmed", "no-effect", "regression"), joint.note
    values = v.evidence[0].values
    assert "GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in values["advised_env"]
    assert f"{knobs.CMA_THRESHOLD}={4 * int(here)}" in values["advised_env"]
    assert values["baseline"].startswith("joint emitted environment")
    if v.verdict == "confirmed":
        assert v.ci_low > 1
    elif v.verdict == "regression":
        assert v.ci_high < 1
