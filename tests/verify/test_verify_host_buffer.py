"""advisor verify with the real host-buffer probe: glibc.malloc.hugetlb=1 in fresh processes.

Where THP is in madvise mode and glibc >= 2.35, ``glibc.malloc.hugetlb=1`` makes malloc ask for
huge pages (glibc manual, Memory Related Tunables); the verification re-measures first touch of
a large malloc'ed block, advised vs the library default, and must come with a CI and a verdict
that agrees with it.
"""

from __future__ import annotations

import pytest
from support import BUILTIN_LIBRARIES, sample_profile

from advisor.models import Recommendation, Setting
from advisor.verify import verify_profile

pytestmark = pytest.mark.integration


def test_verify_host_buffer_malloc_hugetlb_with_ci():
    from advisor.facts import detect
    from advisor.knobs import version_in
    from advisor.plugins import load

    reg = load(only_probes=["host-buffer"])
    probe = reg.probes.get("host-buffer")
    if probe is None or not callable(getattr(probe, "verify", None)):
        pytest.skip("the host-buffer probe exposes no verify() in this checkout")
    facts = detect(reg.fact_detectors, opencl=False)
    glibc = facts.kernel.glibc_version
    if not glibc or not version_in(glibc, ">=2.35"):
        pytest.skip(f"glibc {glibc} has no glibc.malloc.hugetlb (needs 2.35)")
    rec = Recommendation(
        id="glibc-malloc-hugetlb", title="malloc huge pages", rationale="test",
        confidence="medium", verifiable=True, settings=[
            Setting(library="glibc", name="GLIBC_TUNABLES", value="glibc.malloc.hugetlb=1",
                    default="glibc.malloc.hugetlb=0", type="list", separator=":")])
    p = sample_profile()
    res = p.results[0].model_copy(update={"probe": "host-buffer", "plugin": "host-buffer",
                                          "recommendations": [rec]})
    prof = p.model_copy(update={"results": [res]})
    _, out = verify_profile(prof, reg.probes, facts=facts, knobs=reg.knobs, time_budget_s=40,
                            quick=True, libraries=BUILTIN_LIBRARIES)
    o = out[0]
    v = o.verification
    assert not o.error, o.error
    assert v.verdict in ("confirmed", "no-effect", "regression")
    assert v.ratio is not None and v.ci_low <= v.ratio <= v.ci_high
    if v.verdict == "confirmed":
        assert v.ci_low > 1 + v.noise_floor
    elif v.verdict == "regression":
        assert v.ci_high < 1 / (1 + v.noise_floor)


def test_verify_host_pool_hugepages_has_a_measured_floor():
    """The huge-page pool advice is re-measured in one process; its verdict is judged against
    an A/A floor from the halves of each configuration's samples, not against 0 (a new user
    saw 'noise floor 0.000')."""
    from advisor.facts import detect
    from advisor.plugins import load
    from advisor_host_buffer.verify import halves_floor

    reg = load(only_probes=["host-buffer"])
    facts = detect(reg.fact_detectors, opencl=False)
    from advisor_host_buffer.thp import thp_mode

    if thp_mode(facts.memory.thp_enabled) in ("never", None):
        pytest.skip("THP is 'never' here: no huge pages to compare")
    rec = Recommendation(id="host-pool-hugepages", title="huge pages", rationale="test",
                         confidence="medium", verifiable=True, settings=[
                             Setting(library="umpire", name="madvise", value="MADV_HUGEPAGE",
                                     kind="config")])
    p = sample_profile()
    res = p.results[0].model_copy(update={"probe": "host-buffer", "plugin": "host-buffer",
                                          "recommendations": [rec]})
    _, out = verify_profile(p.model_copy(update={"results": [res]}), reg.probes, facts=facts,
                            knobs=reg.knobs, time_budget_s=30, quick=True,
                            libraries=BUILTIN_LIBRARIES)
    v = out[0].verification
    assert not out[0].error, out[0].error
    assert v.noise_floor is not None and v.noise_floor > 0
    if v.verdict == "confirmed":
        assert v.ci_low > 1 + v.noise_floor
    elif v.verdict == "regression":
        assert v.ci_high < 1 / (1 + v.noise_floor)
    assert halves_floor([1.0, 1.0, 2.0, 2.0]) == 1.0 and halves_floor([1.0, 2.0]) is None
