"""The pool model counts every live allocation (issue 25, item 10): sizes with counts, the
user's settings checked against the rounded demand of all live allocations, and an allocation
trace (``--option trace=PATH``) whose fragmentation is modelled per rounding unit (constructed
workloads and traces; pure ``recommend``)."""

from __future__ import annotations

import json

import pytest

from advisor.errors import BadInputError
from advisor.models import CpuFacts, CudaDevice, Facts, MemoryFacts
from advisor_memory_pool import model
from advisor_memory_pool import recommend
from advisor_memory_pool import trace
from advisor_memory_pool import workload as wl

MiB, GiB = model.MiB, model.GiB


def host(total: int) -> Facts:
    return Facts(cpu=CpuFacts(arch="x86_64"),
                 memory=MemoryFacts(total_bytes=total, thp_enabled="madvise",
                                    thp_pmd_size_bytes=2 * MiB))


def gpu(total: int) -> Facts:
    return Facts(cuda=[CudaDevice(index=0, name="GPU", total_memory_bytes=total)])


def ids(adv):
    return {f.id: f for f in adv.findings}


def _csv(tmp_path, rows, name="trace.csv"):
    p = tmp_path / name
    p.write_text("# a test trace\nsize_bytes,alloc_time,free_time\n"
                 + "".join(f"{s},{a},{'' if f is None else f}\n" for s, a, f in rows))
    return p


# --------------------------------------------------------------------------- counts


def test_counts_round_every_live_allocation_not_each_distinct_size():
    w = wl.parse_options({"alloc-size": "5MiB*100,1GiB", "pool-alignment": "2MiB"})
    assert len(w.sizes) == 101 and w.sizes.count(5 * MiB) == 100
    rep = model.evaluate(model.PoolConfig("umpire", 2 * MiB, GiB, GiB), w.sizes, 2 * MiB)
    assert rep.waste_bytes == 100 * MiB  # 100 x (6 MiB - 5 MiB), the 1 GiB rounds to itself
    assert w.rounded_demand(w.current) == 100 * 6 * MiB + GiB
    # the evidence keeps every allocation, written once per size
    ev = wl.to_evidence(w)
    assert ev.values["alloc_sizes_bytes"] == f"{5 * MiB}*100,{GiB}"
    assert wl.from_evidence([ev]).sizes == w.sizes
    # tile-count: 400 live tiles of 1024^2 doubles
    t = wl.parse_options({"tile": "1024x1024", "tile-count": "400"})
    assert t.sizes == (8 * MiB,) * 400 and t.demand_bytes == 400 * 8 * MiB
    with pytest.raises(BadInputError, match="alloc-size"):
        wl.parse_options({"alloc-size": "8MiB*0"})


def test_alignment_waste_is_summed_over_live_allocations():
    adv = recommend.recommend_device(
        [wl.to_evidence(wl.parse_options({"alloc-size": "3MiB*64"}))], gpu(80 * GiB))
    f = ids(adv).get("device-alignment-waste")
    assert f is not None and "64 live allocation(s) (1 distinct size(s))" in f.message
    assert f"{64 * MiB} B over all of them" in f.message  # 64 x (4 MiB - 3 MiB)


def test_current_settings_checked_against_the_rounded_demand_of_all_allocations():
    # 300 live allocations of 2 MiB + 1 B: 600 MiB requested fits 1 GiB, but rounded to the
    # user's 2 MiB alignment each takes 4 MiB: 1200 MiB
    opts = {"alloc-size": f"{2 * MiB + 1}*300", "pool-alignment": "2MiB",
            "pool-first-block": "64MiB", "pool-next-block": "64MiB"}
    adv = recommend.recommend_host([wl.to_evidence(wl.parse_options(opts))], host(GiB))
    f = ids(adv)["pool-oom-current"]
    assert f.severity == "error" and f"rounded demand of its 300 live allocation(s) is " \
        f"{300 * 4 * MiB} B" in f.message and f"{300 * (2 * MiB + 1)} B requested" in f.message
    assert "each allocation rounded up to 2097152 B" in f.message and str(GiB) in f.message
    # DLA-Future's defaults, assumed when no setting is given, are checked too and said so
    adv2 = recommend.recommend_host([wl.to_evidence(wl.parse_options({"alloc-size": "600MiB"}))],
                                    host(GiB))
    g = ids(adv2)["pool-oom-current"]  # a 1 GiB first block + 16 B on a 1 GiB host
    assert "assumed" in g.message and f"reserves {GiB + 16} B" in g.message
    assert "pool-oom" not in ids(adv2)


# --------------------------------------------------------------------------- trace


ROWS = [(3 * MiB, 0.0, 2.0), (3 * MiB, 1.0, None), (1 * MiB, 2.0, 3.0), (5 * MiB, 2.5, None)]


def test_trace_peaks_by_hand():
    allocs = trace.parse_trace("size_bytes,alloc_time,free_time\n" + "".join(
        f"{s},{a},{'' if f is None else f}\n" for s, a, f in ROWS))
    # requested: t=1: 6 MiB; t=2: the first is freed before the 1 MiB arrives: 4 MiB;
    # t=2.5: 3 + 1 + 5 = 9 MiB, the peak
    p1 = trace.peak(allocs)
    assert (p1.rounded_bytes, p1.requested_bytes, p1.time) == (9 * MiB, 9 * MiB, 2.5)
    assert sorted(p1.live) == [1 * MiB, 3 * MiB, 5 * MiB]
    p2 = trace.peak(allocs, 2 * MiB)  # 4 + 2 + 6 MiB at t=2.5
    assert (p2.rounded_bytes, p2.requested_bytes) == (12 * MiB, 9 * MiB)
    assert p2.waste_ratio == pytest.approx(1 / 3)
    # JSON gives the same allocations
    js = json.dumps([{"size_bytes": s, "alloc_time": a, "free_time": f} for s, a, f in ROWS])
    assert trace.parse_trace(js) == allocs
    assert trace.parse_trace(json.dumps({"allocations": json.loads(js)})) == allocs


@pytest.mark.parametrize("text, match", [
    ("size,alloc_time\n1,0\n", "header must name"),
    ("size_bytes,alloc_time,free_time\n0,0,\n", "line 2: 'size_bytes'"),
    ("size_bytes,alloc_time,free_time\n8,1,0.5\n", "line 2: 'free_time' 0.5 is before"),
    ("size_bytes,alloc_time,free_time\n8,nan,\n", "not a finite number"),
    ("size_bytes,alloc_time,free_time\n", "no allocation"),
    ('[{"size_bytes": 8}]', "record 0: 'alloc_time' is missing"),
    ("[1, 2]", "record 0: not an object"),
])
def test_bad_traces_name_the_file_and_line(text, match):
    with pytest.raises(BadInputError, match=match):
        trace.parse_trace(text, source="t.csv")


def test_trace_option_round_trips_through_the_evidence(tmp_path):
    path = _csv(tmp_path, ROWS)
    w = wl.parse_options({"trace": str(path), "pool-alignment": "1MiB"})
    assert w.source == f"trace:{path}" and sorted(w.sizes) == [1 * MiB, 3 * MiB, 5 * MiB]
    ev = wl.to_evidence(w, units=(2 * MiB,))
    v = ev.values
    assert v["trace.allocations"] == 4 and v["trace.peak_requested_bytes"] == 9 * MiB
    assert v[f"trace.unit_{2 * MiB}.peak_rounded_bytes"] == 12 * MiB
    assert v["trace.unit_16.peak_rounded_bytes"] == 9 * MiB  # MiB multiples: no waste at 16 B
    back = wl.from_evidence([ev])
    assert back.rounded_demand(model.PoolConfig("umpire", 2 * MiB, GiB, GiB)) == 12 * MiB
    assert back.trace_allocations == 4
    with pytest.raises(BadInputError, match="trace alone"):
        wl.parse_options({"trace": str(path), "alloc-size": "8MiB"})
    with pytest.raises(BadInputError, match="no such allocation trace"):
        wl.parse_options({"trace": str(tmp_path / "missing.csv")})


def test_trace_whose_rounded_demand_exceeds_memory_gives_the_oom_verdict(tmp_path):
    # 200 buffers of 2 MiB + 4 KiB live together (402 MiB requested) and 100 freed earlier:
    # with the user's 2 MiB alignment each takes 4 MiB at the peak: 800 MiB > 512 MiB of memory
    rows = [(2 * MiB, float(i), float(i) + 0.5) for i in range(100)]
    rows += [(2 * MiB + 4096, 200.0 + i, None) for i in range(200)]
    path = _csv(tmp_path, rows)
    w = wl.parse_options({"trace": str(path), "pool-alignment": "2MiB",
                          "pool-first-block": "32MiB", "pool-next-block": "32MiB"})
    adv = recommend.recommend_host([wl.to_evidence(w, units=(2 * MiB,))], host(512 * MiB))
    f = ids(adv)["pool-oom-current"]
    assert f.severity == "error"
    assert f"rounded demand at the trace's peak is {200 * 4 * MiB} B" in f.message
    assert f"{200 * (2 * MiB + 4096)} B requested" in f.message and "300 allocations" in f.message
    assert str(512 * MiB) in f.message
    assert "pool-oom" not in ids(adv) or "every large-page" in ids(adv)["pool-oom"].message
    # the fragmentation finding names the peak per unit, the large page among them
    frag = ids(adv)["host-trace-fragmentation"]
    assert f"at most {200 * (2 * MiB + 4096)} B requested" in frag.message
    assert f"{2 * MiB} B (the large page): {800 * MiB} B" in frag.message
    # no recommendation whose rounded peak exceeds the memory
    for r in adv.recommendations:
        align = next((s.value for s in r.settings if s.name.endswith("QuickPool.alignment")), None)
        if align is not None:
            assert model.round_up(2 * MiB + 4096, int(align)) * 200 <= 512 * MiB


def test_trace_that_fits_gives_no_oom_and_a_fragmentation_finding(tmp_path):
    path = _csv(tmp_path, ROWS)
    w = wl.parse_options({"trace": str(path)})
    adv = recommend.recommend_device([wl.to_evidence(w, units=(2 * MiB,))], gpu(80 * GiB))
    assert not {"pool-oom", "pool-oom-current"} & set(ids(adv))
    assert "12582912 B" in ids(adv)["device-trace-fragmentation"].message
