"""advisor.runtime.configure_cupy: the CuPy pool policy of a profile, applied from Python."""

from __future__ import annotations

import importlib.util

import pytest

from support import case

from advisor.errors import BadInputError
from advisor.models import (CudaDevice, Facts, PluginResult, Profile, Provenance, Recommendation,
                            Setting)
from advisor.profile import load_profile
from advisor.runtime import CupyUnavailable, configure_cupy, cupy_plan, parse_limit
from advisor.save import save_profile
from advisor_memory_pool import recommend
from advisor_memory_pool import workload as wl
from advisor_memory_pool.measure import cupy_available


def profile_with(recs, facts: Facts) -> Profile:
    res = PluginResult(plugin="memory-pool", probe="memory-pool-device", status="ok",
                       recommendations=recs)
    return Profile(provenance=Provenance(advisor_version="0.1.0", command="test",
                                         created="2026-01-01T00:00:00+00:00"),
                   fingerprint=facts.fingerprint(), facts=facts, results=[res])


def advised_profile(options: dict) -> Profile:
    facts = Facts(cuda=[CudaDevice(index=0, name="recorded GPU", total_memory_bytes=96 << 30)],
                  python_packages={"cupy-cuda12x": "13.6.0"})
    adv = recommend.recommend_device([wl.to_evidence(wl.parse_options(options))], facts)
    return profile_with(adv.recommendations, facts)


def test_cupy_limit_oom_plan_from_saved_profile(tmp_path):
    """The cupy-limit-oom limit travels profile file -> cupy_plan as bytes."""
    c = case("cupy-limit-oom")
    limit = c["pool"]["limit_bytes"]
    prof = advised_profile({"alloc-size": "512MiB", "pool-limit": str(limit)})
    path = save_profile(prof, tmp_path / "p.toml")
    plan = cupy_plan(path)
    assert plan.limit_bytes == limit and plan.limit_fraction is None and plan.pool is None
    assert plan.sources["pool_limit"] == "memory-pool-device:cupy-pool-limit"
    assert cupy_plan(load_profile(path)) == plan


def test_plan_share_per_rank():
    plan = cupy_plan(advised_profile({"ranks-per-gpu": "4"}))
    assert plan.limit_fraction == pytest.approx(0.25)


def test_plan_pool_type_and_env_only_limit():
    facts = Facts()
    prof = profile_with([Recommendation(id="r", title="t", rationale="x", confidence="low", settings=[
        Setting(library="cupy", name="pool", value="MemoryAsyncPool", type="enum", kind="config"),
        Setting(library="cupy", name="CUPY_GPU_MEMORY_LIMIT", value="90%")])], facts)
    plan = cupy_plan(prof)
    assert plan.pool == "MemoryAsyncPool" and plan.limit_fraction == pytest.approx(0.9)


@pytest.mark.parametrize("value", ["MemoryPoool", "async"])
def test_plan_bad_pool_name(value):
    prof = profile_with([Recommendation(id="r", title="t", rationale="x", confidence="low", settings=[
        Setting(library="cupy", name="pool", value=value, type="enum", kind="config")])], Facts())
    with pytest.raises(BadInputError, match="pool"):
        cupy_plan(prof)


@pytest.mark.parametrize("text,want", [("1GiB", (1 << 30, None)), ("1073741824", (1 << 30, None)),
                                       ("50%", (None, 0.5))])
def test_parse_limit(text, want):
    assert parse_limit(text) == want


@pytest.mark.parametrize("text", ["", "lots", "0%", "120%", "-5"])
def test_parse_limit_bad(text):
    with pytest.raises(BadInputError):
        parse_limit(text)


def test_configure_cupy_without_cupy():
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    with pytest.raises(CupyUnavailable, match="CuPy"):
        configure_cupy(advised_profile({"ranks-per-gpu": "2"}))


@pytest.mark.gpu
def test_configure_cupy_applies_limit():
    ok, why = cupy_available()
    if not ok:
        pytest.skip(why)
    c = case("cupy-limit-oom")
    limit = c["pool"]["limit_bytes"]
    plan, pool = configure_cupy(advised_profile({"alloc-size": "512MiB", "pool-limit": str(limit)}))
    assert pool.get_limit() == limit
