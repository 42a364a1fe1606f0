"""Field cases of the host-buffer plugin: each test loads its case file and takes the expected
values from it (tests/cases/<id>.toml)."""

from __future__ import annotations

import re

import pytest
from support import case

from advisor.models import Evidence, Facts, KernelFacts, MemoryFacts, Point, Series
from advisor_host_buffer import evidence
from advisor_host_buffer import thp
from advisor_host_buffer import zero_page
from advisor_host_buffer.recommend import recommend

GB = 1e9  # the cases report decimal GB/s
GiB = 1 << 30
#: x86-64 PMD size: the THP huge page size of the machines these cases come from
PMD_BYTES = 2 << 20

#: case vocabulary -> the point labels of this plugin (fill of the source buffer)
STATE = {"untouched": evidence.UNTOUCHED, "touched_nonzero": evidence.RANDOM}


def _evidence(c):
    """The ``evidence`` array: it follows the ``[case]`` header in these files, so TOML puts it
    inside the ``case`` table."""
    return c["evidence"] if "evidence" in c else c["case"]["evidence"]


def _by_id(items, prefix):
    return [x for x in items if x.id.startswith(prefix)]


# --------------------------------------------------------------------------- clpeak-zero-page


def _clpeak_evidence(c) -> Evidence:
    series: dict[str, list[Point]] = {}
    for direction, state, gbps in _evidence(c):
        series.setdefault(direction, []).append(
            Point(label=STATE[state], samples=[gbps * GB]))
    return Evidence(id=evidence.EV_ZERO_OPENCL, series=[
        Series(name=d, unit=evidence.BPS, points=pts) for d, pts in series.items()])


def test_clpeak_zero_page_inflation_and_artefact():
    c = case("clpeak-zero-page")
    ev = _clpeak_evidence(c)
    inf = zero_page.zero_page_inflation(ev, "h2d")
    assert inf is not None
    assert inf.ratio == pytest.approx(c["expect"]["inflation"], abs=0.005)
    assert inf.significant()
    # the untouched h2d figure is a zero-page artefact, never a bandwidth
    labelled = zero_page.label_artefacts(ev, ceiling=None)
    h2d = (labelled).series_named("h2d")
    assert "zero-page" in (h2d).point(evidence.UNTOUCHED).artefact
    assert (h2d).point(evidence.RANDOM).artefact is None
    assert all(p.artefact is None for p in (labelled).series_named("d2h").points)
    advice = recommend([labelled], Facts())
    (f,) = _by_id(advice.findings, "zero-page-inflation-opencl")
    assert f.severity == "warning"
    assert f"{c['expect']['inflation']:.2f}x" in f.message
    # own measurements: non-zero pseudo-random fill, alignment, fill recorded
    assert "non-zero pseudo-random" in f.remedy and "64 B" in f.remedy and "record the fill" in f.remedy
    # the artefact is not reported as a transfer bandwidth
    (bw,) = _by_id(advice.findings, "opencl-transfer-bandwidth")
    assert "untouched" not in bw.message


def test_clpeak_zero_page_no_inflation_kind():
    """Same kind, other input: equal figures give no warning."""
    c = case("clpeak-zero-page")
    touched = [row for row in _evidence(c) if row[1] == "touched_nonzero" and row[0] == "h2d"][0]
    ev = Evidence(id=evidence.EV_ZERO_OPENCL, series=[Series(name="h2d", unit=evidence.BPS, points=[
        Point(label=evidence.UNTOUCHED, samples=[touched[2] * GB]),
        Point(label=evidence.RANDOM, samples=[touched[2] * GB])])])
    advice = recommend([ev], Facts())
    assert not _by_id(advice.findings, "zero-page-inflation")
    assert _by_id(advice.findings, "zero-page-no-inflation-opencl")


# --------------------------------------------------------------------------- first-touch-rising


def _runs_evidence(rows) -> Evidence:
    return Evidence(id=evidence.EV_FIRST_USE, series=[Series(
        name="runs", unit=evidence.BPS, x_name="run",
        points=[Point(x=float(run), samples=[gbps * GB]) for run, gbps in rows])])


def test_first_touch_rising():
    c = case("first-touch-rising")
    advice = recommend([_runs_evidence(_evidence(c))], Facts())
    (f,) = _by_id(advice.findings, "first-touch-not-done")
    settles = int(re.search(r"settles after (\d+) runs", c["expect"]["classify_series"]).group(1))
    assert f"settle after {settles} runs" in f.message
    assert f"{c['expect']['steady_state_GBps']:.2f} GB/s" in f.message
    assert "non-zero" in f.remedy and "every page" in f.remedy and "page size" in f.remedy
    if c["expect"]["zero_fill_is_insufficient"]:
        assert "memset(0)" in f.remedy and "calloc" in f.remedy


def test_first_touch_rising_kind_steady_series_is_quiet():
    c = case("first-touch-rising")
    steady = _evidence(c)[-1][1]
    rows = [[i, steady] for i in range(1, len(_evidence(c)) + 1)]
    advice = recommend([_runs_evidence(rows)], Facts())
    assert not _by_id(advice.findings, "first-touch-not-done")


# --------------------------------------------------------------------------- numa-first-touch


def _numa_facts(c) -> Facts:
    nodes = {str(k): v for k, v in c["facts"]["numa_nodes"].items()}
    return Facts(memory=MemoryFacts(numa_nodes=len(nodes), numa_node_cpus=nodes))


@pytest.mark.parametrize("pinned", [False, True])
def test_numa_first_touch(pinned):
    c = case("numa-first-touch")
    b = c["benchmark"]
    ev = Evidence(id=evidence.EV_NUMA, values={
        "init": b["init"], "threads": b["threads"], "pinned": pinned,
        "pages.node0": 1000, "pages.node1": 0})
    advice = recommend([ev], _numa_facts(c))
    (f,) = _by_id(advice.findings, "numa-first-touch")
    assert "same pinned threads" in f.remedy and "bind memory explicitly" in f.remedy
    assert "numa_maps" in f.remedy  # record the per-node placement achieved
    assert "node0=1000" in f.message and b["init"] in f.message
    assert (f.severity == "warning") is (not pinned)
    assert ("pinning is not set" in f.message) is (not pinned)


def test_numa_first_touch_single_node_is_quiet():
    c = case("numa-first-touch")
    one = dict(list(c["facts"]["numa_nodes"].items())[:1])
    facts = Facts(memory=MemoryFacts(numa_nodes=1, numa_node_cpus={str(k): v for k, v in one.items()}))
    assert not _by_id(recommend([], facts).findings, "numa-first-touch")


# --------------------------------------------------------------------------- thp-madvise


def _thp_evidence(c) -> Evidence:
    ev = c["evidence"]
    gib = ev["bytes"] / GiB
    return Evidence(id=evidence.EV_FIRST_TOUCH, values={
        "fault_s_per_gib.base": ev["register_seconds"]["madvise_off"] / gib,
        "fault_s_per_gib.huge": ev["register_seconds"]["madvise_on"] / gib,
    })


def _thp_facts(c, enabled: str) -> Facts:
    return Facts(memory=MemoryFacts(thp_enabled=enabled, thp_defrag=c["facts"]["thp_defrag"],
                                    huge_page_sizes_bytes=[PMD_BYTES]),
                 kernel=KernelFacts(glibc_version="2.36"))


def _with_mode(raw: str, mode: str) -> str:
    """The sysfs line of the case with ``mode`` selected instead."""
    return " ".join(f"[{m}]" if m == mode else m for m in raw.replace("[", "").replace("]", "").split())


def test_thp_madvise_mode_recommends_aligned_pool():
    c = case("thp-madvise")
    assert thp.thp_mode(c["facts"]["thp_enabled"]) == "madvise"
    advice = recommend([_thp_evidence(c)], _thp_facts(c, c["facts"]["thp_enabled"]))
    (rec,) = [r for r in advice.recommendations if r.id == "host-pool-hugepages"]
    vals = {s.name: s.value for s in rec.settings}
    assert vals["chunk_alignment"] == PMD_BYTES and vals["madvise"] == "MADV_HUGEPAGE"
    assert all(s.kind == "config" for s in rec.settings)
    r = c["evidence"]["register_seconds"]
    assert f"{r['madvise_off'] / r['madvise_on']:.2f}x" in rec.rationale
    assert "before the first write" in rec.rationale
    (f,) = _by_id(advice.findings, "thp-madvise")
    assert "MADV_HUGEPAGE" in f.message


def test_thp_madvise_never_mode_says_no_effect():
    c = case("thp-madvise")
    advice = recommend([_thp_evidence(c)], _thp_facts(c, _with_mode(c["facts"]["thp_enabled"], "never")))
    assert not advice.recommendations
    (f,) = _by_id(advice.findings, "thp-never")
    assert "no effect" in f.message


def test_thp_madvise_always_mode_no_hint_needed():
    c = case("thp-madvise")
    advice = recommend([_thp_evidence(c)], _thp_facts(c, _with_mode(c["facts"]["thp_enabled"], "always")))
    assert not advice.recommendations
    (f,) = _by_id(advice.findings, "thp-always")
    assert "no madvise is needed" in f.message
    assert "compaction" in f.message and "khugepaged" in f.message


def test_thp_madvise_no_gain_no_recommendation():
    """Kind of fault: advice only where measured to help."""
    c = case("thp-madvise")
    ev = _thp_evidence(c)
    same = ev.values["fault_s_per_gib.base"]
    ev = ev.model_copy(update={"values": {"fault_s_per_gib.base": same, "fault_s_per_gib.huge": same}})
    advice = recommend([ev], _thp_facts(c, c["facts"]["thp_enabled"]))
    assert not advice.recommendations
