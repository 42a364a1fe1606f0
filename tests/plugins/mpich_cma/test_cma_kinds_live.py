"""The paired worker with both buffer kinds, on the real MPICH (``mpiexec -n 2``).

Structural assertions only (a loaded 2-core build machine of any CPU vendor): the THP part
skips with the reason when THP is 'never' or the kernel gives no huge pages."""

from __future__ import annotations

import pytest

from advisor.measure import run_mpi, thp_mode
from advisor.models import Facts
from advisor.probe import MeasureContext
from advisor_mpich_cma import evidence
from advisor_mpich_cma import launch
from advisor_mpich_cma.workers import RANK
from advisor_mpich_cma import minimax
from advisor_mpich_cma.pairs import paired_from_evidence
from advisor_mpich_cma.records import paired_evidence
from support import tool

pytestmark = pytest.mark.integration

SIZES = (65536, 1 << 20)
ROUNDS = 4


def _run(pages: str) -> dict:
    tool("mpiexec")
    env = launch.config_env("upstream", evidence.ON, 0)
    res = run_mpi(RANK, ["paired", "--sizes", ",".join(map(str, SIZES)), "--target-s",
                             "0.01", "--rounds", str(ROUNDS), "--pages", pages],
                  env=env, timeout_s=60)
    assert "mpit_error" not in res, res.get("mpit_error")
    return res


def test_base_and_thp_kinds_give_paired_evidence_with_the_pages_recorded():
    base = _run("base")
    assert base["pages"] == "base" and base["buffer"]["hugepages"] == "nohuge"
    assert base["thp_backed_bytes_per_rank"] in ([0, 0], [None, None])
    mode = thp_mode()
    if mode in (None, "never"):
        pytest.skip(f"THP mode is {mode!r}: no THP-backed buffers to measure")
    thp = _run("thp")
    got = thp["thp_backed_bytes_per_rank"]
    if not got or None in got or min(got) == 0:
        pytest.skip(f"the kernel gave no huge pages to MADV_HUGEPAGE buffers ({got})")
    assert thp["buffer"]["hugepages"] == "huge" and min(got) > 0
    ctx = MeasureContext(facts=Facts(), deadline=0.0)
    env = launch.config_env("upstream", evidence.ON, 0)
    evs = [paired_evidence("", None, {"launch1": base}, env, ctx, ROUNDS, "base"),
           paired_evidence("", None, {"launch1": thp}, env, ctx, ROUNDS, "thp",
                            refined=[92 << 10])]
    assert [e.id for e in evs] == ["cma-paired", "cma-paired.thp"]
    assert evs[1].values["thp_backed_bytes_min_rank"] == min(got)
    assert evs[1].values["refine.sizes"] == str(92 << 10) and evs[1].values["refine.steps"] == 1
    assert evs[1].conditions.notes["buffer_pages"] == "thp"
    assert isinstance(evs[0].values["state.bimodal"], bool)
    assert "machine_state" in evs[0].conditions.notes
    data = [paired_from_evidence(e) for e in evs]
    assert [p.name for p in data] == ["", "thp"] and all(p.sizes == SIZES for p in data)
    d = minimax.decide(data, 8192)
    assert 0 <= d.stability <= 1 and {p for p, _ in d.per_size_advice} == {"", "thp"}


def test_the_per_message_pattern_sends_a_window_from_distinct_buffers():
    """``msgbuf``: base pages and room for one buffer per message of a window (64 KiB x 64,
    1 MiB x 64: the 64 MiB cap), measured and decided beside the reused buffer."""
    res = _run("msgbuf")
    assert res["pages"] == "msgbuf" and res["buffer"]["hugepages"] == "nohuge"
    assert res["buffer_bytes"] >= 2 * 64 * (1 << 20)  # send and receive: a window of 1 MiB
    assert all(len(r["bw_on_Bps"]) == ROUNDS and min(r["bw_off_Bps"]) > 0 for r in res["sizes"])
    ctx = MeasureContext(facts=Facts(), deadline=0.0)
    env = launch.config_env("upstream", evidence.ON, 0)
    ev = paired_evidence("", None, {"launch1": res}, env, ctx, ROUNDS, "msgbuf")
    assert ev.id == "cma-paired.msgbuf" and evidence.buffer_pages(ev) == "msgbuf"
    base = paired_evidence("", None, {"launch1": _run("base")}, env, ctx, ROUNDS, "base")
    d = minimax.decide([paired_from_evidence(e) for e in (base, ev)], 8192)
    assert {p for p, _ in d.per_size_advice} == {"", "msgbuf"}
