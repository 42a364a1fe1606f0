"""The memory-pool field cases (tests/cases), expected values read from the case files.

Each case is mapped onto the project's own models: the case's evidence becomes Evidence series,
its pool settings become the ``workload`` options the CLI would pass (``--option KEY=VALUE``).
"""

from __future__ import annotations

import re

from support import case

from advisor.models import CudaDevice, Evidence, Facts, KernelFacts, MemoryFacts, Point, Series
from advisor_memory_pool import model
from advisor_memory_pool import evidence
from advisor_memory_pool import recommend
from advisor_memory_pool import workload as wl
from advisor_memory_pool.plugin import DevicePoolProbe, HostPoolProbe

def cased(name: str) -> dict:
    """The case file with its [case] table's keys (evidence, sizes, summary) lifted to the top:
    in TOML, keys written after ``[case]`` belong to that table."""
    c = case(name)
    return {**c["case"], **c}


GB = 10 ** 9  # the churn case reports free memory in decimal GB (of gpu_memory_bytes = 102.0 GB)


def gpu_facts(total: int | None = None, **packages: str) -> Facts:
    """Facts of a node with one CUDA device (the pool cases were all recorded on GPU nodes)."""
    return Facts(cuda=[CudaDevice(index=0, name="recorded GPU", total_memory_bytes=total)],
                 python_packages=dict(packages))


def texts(adv) -> str:
    parts = [f.message + " " + (f.remedy or "") for f in adv.findings]
    parts += [r.title + " " + r.rationale for r in adv.recommendations]
    return "\n".join(parts)


def settings_by_name(rec) -> dict:
    return {s.name: s.value for s in rec.settings}


# --------------------------------------------------------------------------- pool-overalloc-first-send


def overalloc_evidence(c: dict) -> list[Evidence]:
    up = c["umpire_pool"]
    w = wl.parse_options({
        "pool-alignment": str(up["alignment"]),
        "pool-first-block": str(up["first_minimum_pool_allocation_size"]),
        "pool-next-block": str(up["next_minimum_pool_allocation_size"]),
    })
    pts = [Point(x=c["base_bytes"] + off, warmup=[fmin, fmax], samples=[later])
           for off, fmin, fmax, later in c["evidence"]]
    fu = Evidence(id=evidence.DEVICE_FIRST_USE, series=[Series(name="first-use", unit="s",
                                                             x_name="alloc", x_unit="bytes", points=pts)])
    return [wl.to_evidence(w), fu]


def test_pool_overalloc_first_send_backing_block():
    c = cased("pool-overalloc-first-send")
    up, exp = c["umpire_pool"], c["expect"]
    cfg = model.PoolConfig("umpire", up["alignment"], up["first_minimum_pool_allocation_size"],
                           up["next_minimum_pool_allocation_size"])
    backing = model.backing_blocks(cfg, [c["base_bytes"] // 2])
    assert backing == [exp["backing_block_bytes"]]
    assert not model.is_multiple(backing[0], exp["flag_backing_not_multiple_of"])


def test_pool_overalloc_first_send_classify():
    c = cased("pool-overalloc-first-send")
    exp = c["expect"]
    pts = [(c["base_bytes"] + off, [fmin, fmax], [later]) for off, fmin, fmax, later in c["evidence"]]
    got = model.classify_first_use(pts, exp["flag_backing_not_multiple_of"])
    want = {c["base_bytes"] + int(k): v for k, v in exp["classify"].items()}
    assert got == want


def test_pool_overalloc_first_send_recommend():
    c = cased("pool-overalloc-first-send")
    exp = c["expect"]
    lp = exp["flag_backing_not_multiple_of"]
    adv = recommend.recommend_device(overalloc_evidence(c), gpu_facts())
    by_id = {f.id: f for f in adv.findings}
    flag = by_id["device-backing-not-large-page-multiple"]
    assert flag.severity == "warning"
    assert str(exp["backing_block_bytes"]) in flag.message and str(lp) in flag.message
    pen = by_id["device-first-use-penalty"]
    misaligned = [c["base_bytes"] + int(k) for k, v in exp["classify"].items() if v == "misaligned"]
    assert all(str(b) in pen.message for b in misaligned)
    rec = next(r for r in adv.recommendations if r.id == "device-pool-large-page-blocks")
    s = settings_by_name(rec)
    align = s["DLAF_UMPIRE_DEVICE_MEMORY_POOL_ALIGNMENT_BYTES"]
    for block_name in ("DLAF_UMPIRE_DEVICE_MEMORY_POOL_INITIAL_BLOCK_BYTES",
                       "DLAF_UMPIRE_DEVICE_MEMORY_POOL_NEXT_BLOCK_BYTES"):
        assert (s[block_name] + align) % lp == 0          # backing blocks are large-page multiples
        assert s[block_name] + align >= c["base_bytes"]   # and >= 1 GiB
    u = {k: v for k, v in s.items() if k.startswith("device.QuickPool.")}
    assert (u["device.QuickPool.next_minimum_pool_allocation_size"] + u["device.QuickPool.alignment"]) % lp == 0
    assert "first use of each new block" in rec.rationale
    assert rec.confidence == "high"  # the first-use evidence shows the penalty
    assert all(st.versions == ">=0.7" for st in rec.settings if st.library == "dla-future")


# --------------------------------------------------------------------------- pool-churn-ipc-cache


def churn_evidence(c: dict) -> Evidence:
    pts = [Point(x=it, samples=[free_gb * GB]) for it, free_gb in c["evidence"]]
    return Evidence(id=evidence.DEVICE_FREE, series=[Series(name="free", unit="bytes", x_name="iteration",
                                                          points=pts)],
                    values={"first_alloc_bytes": c["first_alloc_bytes"],
                            "growth_per_iteration_bytes": c["growth_per_iteration_bytes"]})


def test_pool_churn_ipc_cache():
    c = cased("pool-churn-ipc-cache")
    adv = recommend.recommend_device([churn_evidence(c)], gpu_facts(c["gpu_memory_bytes"]))
    by_id = {f.id: f for f in adv.findings}
    churn = by_id["device-comm-buffer-churn"]
    assert churn.severity == "warning"
    oom_at = re.search(r"iteration (\d+)", c["summary"]).group(1)  # "out-of-memory error at iteration N"
    assert f"iteration {oom_at}" in churn.message
    rec = next(r for r in adv.recommendations if r.id == "device-persistent-comm-pool")
    assert "persistent pool" in rec.rationale
    pool = next(r for r in adv.recommendations if r.id == "device-pool-large-page-blocks")
    s = settings_by_name(pool)
    lp = model.NVIDIA_DEVICE_LARGE_PAGE_BYTES
    nxt = s["DLAF_UMPIRE_DEVICE_MEMORY_POOL_NEXT_BLOCK_BYTES"]
    assert (nxt + s["DLAF_UMPIRE_DEVICE_MEMORY_POOL_ALIGNMENT_BYTES"]) % lp == 0
    assert nxt >= model.GROW_BY_MIN_BYTES
    assert nxt >= c["first_alloc_bytes"]  # the communication buffer fits one long-lived block
    # diagnostic only: MPICH_GPU_IPC_ENABLED is mentioned with its cost, never emitted as a setting
    assert "MPICH_GPU_IPC_ENABLED=0" in churn.remedy and "performance" in churn.remedy
    assert not any(st.name == "MPICH_GPU_IPC_ENABLED" for r in adv.recommendations for st in r.settings)


def test_pool_churn_ipc_cache_flat_memory_is_no_churn():
    c = cased("pool-churn-ipc-cache")
    first_free = c["evidence"][0][1]
    flat = [[it, first_free] for it, _ in c["evidence"]]  # "with GPU IPC disabled, memory stayed flat"
    adv = recommend.recommend_device([churn_evidence({**c, "evidence": flat})],
                                  gpu_facts(c["gpu_memory_bytes"]))
    assert "device-comm-buffer-churn" not in {f.id for f in adv.findings}


# --------------------------------------------------------------------------- cupy-limit-oom


def trace_peak(trace: list[str]) -> int:
    """Most bytes live at once in an alloc/free trace ('free' frees the latest live block)."""
    live: list[int] = []
    peak = 0
    for t in trace:
        if t.startswith("alloc"):
            live.append(int(t.split()[1]))
            peak = max(peak, sum(live))
        elif t == "free" and live:
            live.pop()
    return peak


def cupy_workload(c: dict) -> Evidence:
    sizes = [t.split()[1] for t in c["pool"]["trace"] if t.startswith("alloc")]
    # the trace frees the first block before the second allocation: its peak is what is live
    return wl.to_evidence(wl.parse_options({"alloc-size": ",".join(sizes),
                                            "peak-bytes": str(trace_peak(c["pool"]["trace"])),
                                            "pool-limit": str(c["pool"]["limit_bytes"])}))


def test_cupy_limit_oom_version_gate():
    c = case("cupy-limit-oom")
    assert c["pool"]["allocator"] == "MemoryPool"
    before = recommend.recommend_device([cupy_workload(c)], gpu_facts(**{"cupy-cuda12x": "12.1.0"}))
    bug = {f.id: f for f in before.findings}["cupy-pool-limit-bug"]
    assert bug.severity == "warning" and "7678" in bug.message
    after = recommend.recommend_device([cupy_workload(c)], gpu_facts(**{"cupy-cuda12x": "13.6.0"}))
    assert "cupy-pool-limit-bug" not in {f.id for f in after.findings}
    none = recommend.recommend_device([cupy_workload(c)], gpu_facts())
    assert "cupy-pool-limit-bug" not in {f.id for f in none.findings}


def test_cupy_limit_oom_limit_check():
    c = case("cupy-limit-oom")
    limit = c["pool"]["limit_bytes"]
    largest = max(int(t.split()[1]) for t in c["pool"]["trace"] if t.startswith("alloc"))
    adv = recommend.recommend_device([cupy_workload(c)], gpu_facts(**{"cupy": "12.1.0"}))
    by_id = {f.id: f for f in adv.findings}
    f = by_id["device-pool-limit-below-request-plus-grow"]
    assert "lowered" in f.message  # says why the grow-by is lower
    rec = next(r for r in adv.recommendations if r.id == "device-pool-large-page-blocks")
    assert "lowered" in rec.rationale
    s = settings_by_name(rec)
    grow = s["DLAF_UMPIRE_DEVICE_MEMORY_POOL_NEXT_BLOCK_BYTES"] + s["DLAF_UMPIRE_DEVICE_MEMORY_POOL_ALIGNMENT_BYTES"]
    g = model.choose_grow_by(largest, model.NVIDIA_DEVICE_LARGE_PAGE_BYTES, limit)
    assert g.limited and g.feasible and largest + g.bytes <= limit
    assert grow <= limit  # one backing block fits the limit
    cupy_rec = next(r for r in adv.recommendations if r.id == "cupy-pool-limit")
    assert settings_by_name(cupy_rec)["CUPY_GPU_MEMORY_LIMIT"] == str(limit)


def test_cupy_limit_oom_no_overclaim():
    c = case("cupy-limit-oom")
    adv = recommend.recommend_device([cupy_workload(c)], gpu_facts(**{"cupy": "12.1.0"}))
    txt = texts(adv).lower()
    for line in txt.splitlines():
        if "async" in line or "cudamallocasync" in line:
            assert not re.search(r"(remov|eliminat|no |avoid|prevent)\w*\s+\w*\s*fragment", line)


def test_cupy_limit_oom_impossible_limit_is_an_error():
    c = case("cupy-limit-oom")
    largest = max(int(t.split()[1]) for t in c["pool"]["trace"] if t.startswith("alloc"))
    tight = {**c, "pool": {**c["pool"], "limit_bytes": largest}}
    adv = recommend.recommend_device([cupy_workload(tight)], gpu_facts())
    f = {f.id: f for f in adv.findings}["device-pool-limit-below-request-plus-grow"]
    assert f.severity == "error"


# --------------------------------------------------------------------------- thp-madvise


def thp_facts(c: dict, mode_line: str | None = None) -> Facts:
    f = c["facts"]
    return Facts(memory=MemoryFacts(thp_enabled=model.parse_thp_mode(mode_line or f["thp_enabled"]),
                                    thp_defrag=model.parse_thp_mode(f["thp_defrag"]),
                                    huge_page_sizes_bytes=[]),
                 kernel=KernelFacts(glibc_version="2.36"))


def thp_evidence(c: dict) -> Evidence:
    e = c["evidence"]
    rs = e["register_seconds"]
    return Evidence(id=evidence.HOST_FIRST_TOUCH, series=[Series(name="register", unit="s", points=[
        Point(x=e["bytes"], label="nohuge", samples=[rs["madvise_off"]]),
        Point(x=e["bytes"], label="huge", samples=[rs["madvise_on"]])])])


def test_thp_madvise_mode():
    c = case("thp-madvise")
    adv = recommend.recommend_host([thp_evidence(c)], thp_facts(c))
    assert "host-thp-madvise" in {f.id for f in adv.findings}
    rec = next(r for r in adv.recommendations if r.id == "host-pool-large-page-blocks")
    s = settings_by_name(rec)
    lp = model.X86_64_PMD_BYTES
    assert (s["DLAF_UMPIRE_HOST_MEMORY_POOL_NEXT_BLOCK_BYTES"]
            + s["DLAF_UMPIRE_HOST_MEMORY_POOL_ALIGNMENT_BYTES"]) % lp == 0
    assert "MADV_HUGEPAGE" in rec.rationale and "before first touch" in rec.rationale
    assert "2 MiB-aligned" in rec.rationale
    assert "glibc.malloc.hugetlb=1" in rec.rationale  # owned (and measured) by host-buffer
    assert "GLIBC_TUNABLES" not in s
    rs = c["evidence"]["register_seconds"]
    assert f"{rs['madvise_off'] / rs['madvise_on']:.3g}x" in rec.rationale  # the recorded gain


def test_thp_madvise_never_mode():
    c = case("thp-madvise")
    adv = recommend.recommend_host([thp_evidence(c)], thp_facts(c, "always madvise [never]"))
    assert not adv.recommendations
    assert "no effect" in {f.id: f for f in adv.findings}["host-thp-never"].message


def test_thp_madvise_always_mode():
    c = case("thp-madvise")
    adv = recommend.recommend_host([thp_evidence(c)], thp_facts(c, "[always] madvise never"))
    f = {f.id: f for f in adv.findings}["host-thp-always"]
    assert "no hint needed" in f.message and "defrag" in f.message and "khugepaged" in f.message
    assert "defrag" in adv.recommendations[0].rationale


# --------------------------------------------------------------------------- no GPU


def test_device_not_applicable_without_gpu():
    facts = Facts()
    app = DevicePoolProbe().check(facts)
    assert not app.usable and "no CUDA device" in app.reason
    adv = DevicePoolProbe().recommend(app.evidence, facts)
    assert not adv.recommendations
    assert [f.id for f in adv.findings] == ["device-pool-not-applicable"]
    assert "no CUDA device" in adv.findings[0].message
    assert HostPoolProbe().check(facts).usable
