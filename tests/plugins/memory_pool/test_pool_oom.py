"""The pool model's out-of-memory verdict and the waste of the user's own settings
(constructed workloads; pure ``recommend``)."""

from __future__ import annotations

from advisor.models import CpuFacts, CudaDevice, Facts, MemoryFacts
from advisor_memory_pool import model
from advisor_memory_pool import recommend
from advisor_memory_pool import workload as wl

MiB, GiB = model.MiB, model.GiB


def gpu(total: int) -> Facts:
    return Facts(cuda=[CudaDevice(index=0, name="GPU", total_memory_bytes=total)])


def host(total: int) -> Facts:
    return Facts(cpu=CpuFacts(arch="x86_64"),
                 memory=MemoryFacts(total_bytes=total, thp_enabled="madvise",
                                    thp_pmd_size_bytes=2 * MiB))


def ev(**options):
    return [wl.to_evidence(wl.parse_options({k.replace("_", "-"): v for k, v in options.items()}))]


def ids(adv):
    return {f.id: f for f in adv.findings}


def all_settings(adv):
    return [(s.name, s.value) for r in adv.recommendations for s in r.settings]


def test_device_demand_above_capacity_is_an_oom_verdict_and_no_pool_advice():
    # four 8 GiB buffers live at once on a 16 GiB GPU shared by 2 ranks (8 GiB each)
    adv = recommend.recommend_device(ev(alloc_size="8GiB,8GiB,8GiB,8GiB", ranks_per_gpu="2"),
                                  gpu(16 * GiB))
    f = ids(adv)["pool-oom"]
    assert f.severity == "error" and str(32 * GiB) in f.message and str(8 * GiB) in f.message
    assert not any(r.id.endswith("pool-large-page-blocks") for r in adv.recommendations)
    assert all_settings(adv) == []


def test_host_demand_above_capacity_is_an_oom_verdict():
    adv = recommend.recommend_host(ev(alloc_size="3GiB,3GiB"), host(4 * GiB))
    assert ids(adv)["pool-oom"].severity == "error"
    assert adv.recommendations == []


def test_requests_fit_but_every_pool_configuration_overshoots():
    # a 1 GiB limit: 600 MiB + 300 MiB fit, but the grow-by the limit leaves makes every
    # large-page candidate back them with two 600 MiB blocks (1.26 GB)
    budget = 1 * GiB
    sizes = [600 * MiB, 300 * MiB + 1]
    c = model.choose(sizes, 2 * MiB, budget=budget)
    assert not c.fits and len(c.rejected) == len(c.candidates)
    adv = recommend.recommend_device(ev(alloc_size=",".join(map(str, sizes)), pool_limit=str(budget)),
                                  gpu(80 * GiB))
    f = ids(adv)["pool-oom"]
    assert "every large-page pool configuration reserves more" in f.message
    assert adv.recommendations == []
    assert ids(adv)["device-pool-limit-below-request-plus-grow"].severity == "error"


def test_a_candidate_over_capacity_is_not_even_a_caveat():
    # 1023 MiB under a 1 GiB limit: the compensated block fits exactly, 2 MiB alignment does not
    sizes = [1023 * MiB]
    c = model.choose(sizes, 2 * MiB, budget=GiB)
    assert c.fits and c.best.config.label == "compensated block"
    assert "large-page alignment" in c.rejected
    adv = recommend.recommend_device(ev(alloc_size=str(sizes[0]), pool_limit=str(GiB)), gpu(80 * GiB))
    rec = next(r for r in adv.recommendations if r.id == "device-pool-large-page-blocks")
    assert "set ALIGNMENT_BYTES" not in rec.rationale  # the caveat's alternative does not fit


def test_never_recommends_a_setting_over_capacity():
    for total in (1 * GiB, 2 * GiB, 3 * GiB, 9 * GiB, 80 * GiB):
        for sizes in ("8MiB", "512MiB,512MiB", "1GiB", "2GiB,1GiB", "6GiB"):
            w = wl.parse_options({"alloc-size": sizes})
            adv = recommend.recommend_device(ev(alloc_size=sizes), gpu(total))
            for r in adv.recommendations:
                if r.id != "device-pool-large-page-blocks":
                    continue
                s = {x.name: x.value for x in r.settings if x.library == "umpire"}
                cfg = model.PoolConfig(
                    "umpire", int(s["device.QuickPool.alignment"]),
                    int(s["device.QuickPool.first_minimum_pool_allocation_size"]),
                    int(s["device.QuickPool.next_minimum_pool_allocation_size"]))
                assert model.reserved_at_peak(cfg, w.sizes) <= total, (total, sizes)
            if model.workload_demand(w.sizes) > total:
                assert "pool-oom" in ids(adv)


def test_current_settings_waste_and_their_own_oom():
    # the user's pool: 4 GiB blocks for 8 MiB tiles on a 6 GiB GPU
    adv = recommend.recommend_device(ev(alloc_size="8MiB", pool_first_block="4GiB",
                                     pool_next_block="4GiB"), gpu(6 * GiB))
    f = ids(adv)["device-current-pool-waste"]
    over = 4 * GiB + 16 - 8 * MiB
    assert str(over) in f.message and f.severity == "warning"
    assert "pool-oom-current" not in ids(adv)
    adv2 = recommend.recommend_device(ev(alloc_size="8MiB", pool_first_block="8GiB",
                                      pool_next_block="8GiB"), gpu(6 * GiB))
    assert ids(adv2)["pool-oom-current"].severity == "error"
    assert "pool-oom" not in ids(adv2)  # the workload itself fits: advice is still given
    assert any(r.id == "device-pool-large-page-blocks" for r in adv2.recommendations)


def test_no_current_settings_no_waste_report_and_unknown_capacity_no_verdict():
    adv = recommend.recommend_device(ev(alloc_size="8MiB"), Facts(cuda=[CudaDevice(index=0, name="G")]))
    assert not {"device-current-pool-waste", "pool-oom", "pool-oom-current"} & set(ids(adv))


def test_peak_option_round_trips_and_is_checked():
    w = wl.parse_options({"alloc-size": "512MiB,768MiB", "peak-bytes": "768MiB"})
    assert w.demand_bytes == 768 * MiB
    assert wl.from_evidence([wl.to_evidence(w)]).peak_bytes == 768 * MiB
    import pytest

    from advisor.errors import BadInputError

    with pytest.raises(BadInputError, match="peak-bytes"):
        wl.parse_options({"alloc-size": "1GiB", "peak-bytes": "1MiB"})
