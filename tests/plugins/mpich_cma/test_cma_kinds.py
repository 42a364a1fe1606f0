"""Buffer kinds (base pages / THP-backed) and crossover refinement of the mpich-cma advice, on
constructed paired evidence (issue 13 B, C).

Ground truth from background.md §4 (2-core AMD VM, MPICH 5.0.2): crossover 128 KiB for both
kinds; with 4 KiB pages CMA loses at 8-16 MiB, with THP-backed buffers it wins there too
(bandwidth x2.2-3.7); the size of the base-page loss is not recorded, 5 % is assumed.
The constructed machine flips between a fast and a slow state per round
(``test_cma_minimax.paired_evidence``)."""

from __future__ import annotations

import pytest
from cma_support import all_settings
from test_cma_minimax import FACTS_5, KiB, MiB, _library, paired_evidence

from advisor.models import Facts
from advisor.probe import MeasureContext
from advisor_mpich_cma import decision
from advisor_mpich_cma import evidence
from advisor_mpich_cma import kinds
from advisor_mpich_cma import paired
from advisor_mpich_cma import sequential
from advisor_mpich_cma import story
from advisor_mpich_cma import recommend
from advisor_mpich_cma import knobs
from advisor_mpich_cma.crossover import bracket, cma_better, midpoint
from advisor_mpich_cma.evidence import paired_id
from advisor_mpich_cma.pairs import paired_from_evidence

BASE = {8 * KiB: 0.8, 16 * KiB: 0.8, 64 * KiB: 0.9, 128 * KiB: 1.5, 1 * MiB: 2.0,
        8 * MiB: 0.95, 16 * MiB: 0.95}
THP = {8 * KiB: 0.8, 16 * KiB: 0.8, 64 * KiB: 0.9, 128 * KiB: 1.5, 1 * MiB: 2.5,
       8 * MiB: 2.2, 16 * MiB: 3.0}


def _kind(ev, kind: str, thp_bytes: int | None = None):
    vals = {**ev.values, "buffer_pages": kind}
    if thp_bytes is not None:
        vals["thp_backed_bytes_min_rank"] = thp_bytes
    return ev.model_copy(update={"id": paired_id("", kind), "values": vals})


def test_ids_are_stable_and_documented():
    assert paired_id("") == "cma-paired"
    assert paired_id("cross-numa") == "cma-paired.cross-numa"
    assert paired_id("", "thp") == "cma-paired.thp"
    assert paired_id("same-numa", "thp") == "cma-paired.thp.same-numa"
    legacy = paired_evidence(BASE)  # recorded before kinds: no buffer_pages value
    assert evidence.buffer_pages(legacy) == "base"
    assert evidence.buffer_pages(legacy.model_copy(update={"id": "cma-paired.thp.same-numa"})) == "thp"


def test_threshold_is_decided_over_both_kinds_and_says_so():
    base = _kind(paired_evidence(BASE, seed=1), "base")
    thp = _kind(paired_evidence(THP, seed=2), "thp", thp_bytes=32 * MiB)
    adv = recommend.recommend(_library() + [base, thp], FACTS_5)
    assert dict(all_settings(adv))[knobs.CMA_THRESHOLD] == 128 * KiB
    rec = [r for r in adv.recommendations if r.id == "cma-threshold"][0]
    assert "base+thp pages" in rec.title and "THP-backed" in rec.rationale
    assert {"cma-paired", "cma-paired.thp"} <= set(rec.evidence)
    per = [f for f in adv.findings if f.id == "cma-threshold-per-kind"]
    assert per and "THP-backed (2 MiB) pages: threshold 128 KiB" in per[0].message
    # the 8-16 MiB loss is a base-page loss only: the regret left names that kind's sizes
    left = [f for f in adv.findings if f.id == "cma-regret-left"][0].message
    assert "16 MiB" in left and "thp 16 MiB" not in left
    v = decision.kind_values([base, thp], evidence.library_of(_library(), FACTS_5))
    assert v["buffer_kinds"] == "base,thp"
    assert v["advice_threshold_bytes:base"] == v["advice_threshold_bytes:thp"] == 128 * KiB


def test_kinds_with_different_crossovers_get_the_minimax_of_both():
    """THP crossover at 64 KiB, base at 128 KiB: over both kinds 128 KiB loses 10 % (THP at
    64 KiB) while 64 KiB loses 10 % too (base at 64 KiB) — the per-kind decisions differ and both
    are reported; the joint advice is one of the two, never a threshold worse for both."""
    thp_truth = {**THP, 64 * KiB: 1.1}
    base = _kind(paired_evidence(BASE, seed=1), "base")
    thp = _kind(paired_evidence(thp_truth, seed=2), "thp", thp_bytes=32 * MiB)
    lib = evidence.library_of(_library(), FACTS_5)
    v = decision.kind_values([base, thp], lib)
    assert v["advice_threshold_bytes:base"] == 128 * KiB
    assert v["advice_threshold_bytes:thp"] == 64 * KiB
    d = decision.decision_of([base, thp], lib)
    assert d.advice in (64 * KiB, 128 * KiB)
    assert d.worst[d.advice] >= max(d.worst[8 * KiB], d.worst[None])


def test_thp_measurement_without_huge_pages_is_dropped():
    base = _kind(paired_evidence(BASE, seed=1), "base")
    thp = _kind(paired_evidence(THP, seed=2), "thp", thp_bytes=0)
    adv = recommend.recommend(_library() + [base, thp], FACTS_5)
    ids = {f.id for f in adv.findings}
    assert "cma-thp-not-given" in ids and "cma-threshold-per-kind" not in ids
    rec = [r for r in adv.recommendations if r.id == "cma-threshold"][0]
    assert "cma-paired.thp" not in rec.evidence and "(stability" in rec.title
    assert "base pages)" in rec.title


def test_bracket_and_midpoint_bisect_between_differing_verdicts():
    data = [paired_from_evidence(paired_evidence(BASE))]
    better = cma_better(data)
    assert better[64 * KiB] is False and better[128 * KiB] is True
    assert bracket(data, 128 * KiB) == (64 * KiB, 128 * KiB)
    assert bracket(data, 1 * MiB) is None  # verdicts agree at 128 KiB and 1 MiB
    assert bracket(data, None) is None and bracket(data, 8 * KiB) is None
    m = midpoint(64 * KiB, 128 * KiB, 4096)
    assert m == 92 * KiB and m % 4096 == 0  # 2**16.5 = 92681 -> 23 pages
    assert midpoint(4096, 8192, 4096) is None  # nothing between on page multiples
    with pytest.raises(ValueError):
        midpoint(8192, 4096, 4096)


def test_refined_point_moves_the_advice_between_grid_sizes():
    """After bisection the crossover (true: between 64 and 96 KiB here) is measured at 92 KiB
    and the advice moves from the grid point 128 KiB to it: re-decided on all points."""
    truth = {**BASE, 92 * KiB: 1.3}
    coarse = decision.decision_of([paired_evidence(BASE)], evidence.library_of(_library(), FACTS_5))
    fine = decision.decision_of([paired_evidence(truth)], evidence.library_of(_library(), FACTS_5))
    assert coarse.advice == 128 * KiB and fine.advice == 92 * KiB
    assert fine.worst[92 * KiB] > fine.worst[128 * KiB]  # 128 KiB now loses at 92 KiB
    # the next bisection step would go between 64 and 92 KiB
    data = [paired_from_evidence(paired_evidence(truth))]
    assert bracket(data, fine.advice) == (64 * KiB, 92 * KiB)
    assert midpoint(64 * KiB, 92 * KiB, 4096) == 76 * KiB


def test_kinds_and_refinement_caps_follow_the_context():
    ctx = MeasureContext(facts=Facts.model_validate({"memory": {"thp_enabled": "never"}}),
                         deadline=0.0, quick=True)
    assert kinds.page_kinds(ctx) == ["base", "msgbuf"] and paired.refine_steps(ctx) == paired.MAX_REFINE_QUICK
    ctx = MeasureContext(facts=Facts.model_validate({"memory": {"thp_enabled": "madvise"}}),
                         deadline=0.0, quick=False, options={"refine": "0", "traffic": "reused"})
    assert kinds.page_kinds(ctx) == ["base", "thp"] and paired.refine_steps(ctx) == 0
    sizes = [4096, 8192, 65536, 131072, 1 << 20]
    assert kinds.kind_sizes("thp", sizes) == [65536, 131072, 1 << 20]
    assert kinds.kind_sizes("base", sizes) == sizes and kinds.kind_sizes("thp", [4096]) == [4096]
    assert kinds.kind_rounds("base", 32) == 32 and kinds.kind_rounds("thp", 32) == 16
    assert kinds.kind_sizes("msgbuf", sizes + [2 << 20]) == sizes
    assert kinds.kind_rounds("msgbuf", 32) == 16 and paired_id("", "msgbuf") == "cma-paired.msgbuf"
    assert kinds.kind_rounds("thp", 3) == 2


def test_run_paired_bisects_the_crossover_within_the_cap(monkeypatch):
    """The probe's loop with a scripted worker (true crossover 100 KiB, CMA 2x above, 0.8x
    below, steady machine): the grid says 128 KiB; two quick-mode steps measure 92 KiB then
    108 KiB, both kinds, and the evidence records them."""
    import time

    from advisor import measure
    from advisor.models import MpiFacts

    calls = []
    launches = []

    def seen(jobs):
        launches.append([j[0] for j in jobs])
        calls.extend((j[0], j[1]) for j in jobs)

    monkeypatch.setattr(measure, "run_mpi", _scripted_worker(seen))
    facts = Facts.model_validate({"memory": {"thp_enabled": "madvise"},
                                  "mpi": {"implementation": "mpich", "flavour": "upstream",
                                          "version": "5.0.2"}})
    ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 600, quick=True,
                         options={"traffic": "reused"})  # the page kinds alone here
    p = {"sizes": [64 * KiB, 128 * KiB, 1 * MiB], "repeats": 3, "target_s": 0.02}
    evs, why = paired.run_paired(ctx, MpiFacts(implementation="mpich", flavour="upstream",
                                               version="5.0.2"), p, [("", None)])
    assert why == "" and [e.id for e in evs] == ["cma-paired", "cma-paired.thp"]
    for e in evs:
        assert e.values["refine.steps"] == paired.MAX_REFINE_QUICK
        assert e.values["refine.sizes"] == f"{92 * KiB},{108 * KiB}"
        assert e.values["sizes"] == 5
    assert [c for c in calls if c[1] == [92 * KiB]] == [("base", [92 * KiB]), ("thp", [92 * KiB])]
    # both kinds share each launch: the grid, every refinement step and the second launch, one
    # MPI start each; the scripted machine is steady, so two launches make the decision stable
    # and measuring stops there.  The second launch re-measures only where the contenders
    # (advice 108 KiB, the 8 KiB default) route differently, and the first size at or above
    # the largest: 1 MiB and 128 KiB go by CMA under both (decision.decisive_sizes)
    assert launches == [["base", "thp"]] * (1 + paired.MAX_REFINE_QUICK + 1)
    assert calls[-1] == ("thp", [64 * KiB, 92 * KiB, 108 * KiB])
    assert evs[0].values["later_launch_sizes"] == (
        f"base: {64 * KiB},{92 * KiB},{108 * KiB}; thp: {64 * KiB},{92 * KiB},{108 * KiB}")
    for e in evs:
        assert e.values["launches"] == sequential.MIN_LAUNCHES and e.values["stopped"] == paired.STOP_STABLE
        assert {p.label for s in e.series for p in s.points} == {"launch1", "launch2"}
    d = decision.decision_of(evs, evidence.library_of(_library(), FACTS_5))
    assert d.advice == 108 * KiB and d.launches == 2 and d.stability >= 0.8
    # the rationale says how measuring ended (a new user could not tell why launches went on)
    rec = decision.record_of(evs, evidence.library_of(_library(), FACTS_5))
    assert "measuring stopped: stable after 2 launches (stability after launch 2: " in rec.stab()
    assert evs[0].values["machine_states_by_launch"] == "steady"


def test_a_later_launch_that_times_out_keeps_the_launches_before_it(monkeypatch):
    """A loaded machine (a new user's ``make probe``): launch 3 overran its timeout.  The two
    launches before it stand, and the decision says the budget stopped it."""
    import time

    from advisor import measure
    from advisor.measure import LaunchError
    from advisor.models import MpiFacts

    launches = []

    def fake_run_mpi(module, args, **kw):
        a = dict(zip(args[1::2], args[2::2]))
        launches.append(a["--sizes"])
        if len(launches) == 3:
            raise LaunchError("timed out after 21.9 s", argv=["mpiexec"], returncode=None,
                              timed_out=True)
        rounds = int(a["--rounds"])
        rows = []
        for i, n in enumerate(int(x) for x in a["--sizes"].split(",")):
            # CMA 2x from 64 KiB, 0.8x below; the two launches disagree a little
            off = [10e9 * (1 + 0.01 * ((r + len(launches)) % 3)) for r in range(rounds)]
            rho = 2.0 if n >= 64 * KiB else 0.8
            rows.append({"bytes": n, "bw_on_Bps": [x * rho for x in off], "bw_off_Bps": off,
                         "lat_on_s": [n / (x * rho) for x in off],
                         "lat_off_s": [n / x for x in off]})
        return {"sizes": rows, "rounds": rounds, "thresholds": {"on": 1, "off": 1 << 30},
                "pages": "base", "buffer_bytes": 1 << 20, "thp_backed_bytes_per_rank": [0, 0]}

    monkeypatch.setattr(measure, "run_mpi", fake_run_mpi)
    facts = Facts.model_validate({"memory": {"thp_enabled": "never"},
                                  "mpi": {"implementation": "mpich", "flavour": "upstream",
                                          "version": "5.0.2"}})
    # the scripted machine is steady, so two launches would stop as stable: "every launch met
    # one copy state" (with room for more launches in that case) keeps the loop going, and
    # launch 3 runs and times out
    ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 600, quick=True,
                         options={"traffic": "reused", "refine": "0", "launches": "4",
                                  "one_state_launches": "4"})
    p = {"sizes": [16 * KiB, 64 * KiB, 1 * MiB], "repeats": 3, "target_s": 0.02}
    monkeypatch.setattr(paired, "machine_states", lambda evs, n: "one")
    evs, why = paired.run_paired(ctx, MpiFacts(implementation="mpich", flavour="upstream",
                                               version="5.0.2"), p, [("", None)])
    assert why == "" and len(launches) == 3
    (e,) = evs
    assert e.values["launches"] == 2 and e.values["stopped"] == paired.STOP_BUDGET
    assert {pt.label for s in e.series for pt in s.points} == {"launch1", "launch2"}


def _scripted_worker(seen):
    """A stand-in for ``run_mpi`` speaking the paired worker's protocol on the steady scripted
    machine of ``_scripted_rows``: one job (``--pages``, the other options ';'-separated per
    job) -> its result, several -> ``{"kinds": [...]}``; ``seen(jobs)`` gets each launch's
    jobs as ``(pages, sizes, rounds, target seconds)``."""
    def run_mpi(module, args, **kw):
        a = dict(zip(args[1::2], args[2::2]))
        jobs = [(k, [int(x) for x in sz.split(",")], int(r), float(t)) for k, sz, r, t in zip(
            a["--pages"].split(","), a["--sizes"].split(";"), a["--rounds"].split(";"),
            a["--target-s"].split(";"))]
        seen(jobs)
        out = [{"sizes": _scripted_rows(sz, r), "rounds": r, "pages": k,
                "thresholds": {"on": 1, "off": 1 << 30}, "buffer_bytes": 2 * max(sz),
                "thp_backed_bytes_per_rank": [4 << 20] * 2 if k == "thp" else [0, 0]}
               for k, sz, r, _ in jobs]
        return out[0] if len(out) == 1 else {"kinds": out}

    return run_mpi


def _scripted_rows(sizes, rounds: int) -> list[dict]:
    """A steady scripted machine's paired rows: CMA 2x from 100 KiB, 0.8x below."""
    rows = []
    for n in sizes:
        rho = 2.0 if n >= 100 * KiB else 0.8
        off = [10e9 * (1 + 0.001 * i) for i in range(rounds)]
        rows.append({"bytes": n, "bw_on_Bps": [x * rho for x in off], "bw_off_Bps": off,
                     "lat_on_s": [n / (x * rho) for x in off], "lat_off_s": [n / x for x in off]})
    return rows


def test_later_launches_measure_where_the_contenders_differ():
    """``decision.decisive_sizes``: the sizes the tie band, advice, best and default route
    differently, one measured size on each side, and where the default's and the advice's
    worst ratio lies; CMA off in contention makes every size from the smallest contender
    decisive."""
    from types import SimpleNamespace

    grid = [4 * KiB, 8 * KiB, 12 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 1 * MiB, 16 * MiB]
    d = SimpleNamespace(tie=(8 * KiB, 16 * KiB), advice=8 * KiB, best=16 * KiB)
    assert decision.decisive_sizes(d, 8 * KiB, grid) == [4 * KiB, 8 * KiB, 12 * KiB, 16 * KiB]
    alone = SimpleNamespace(tie=(8 * KiB,), advice=8 * KiB, best=8 * KiB)
    assert decision.decisive_sizes(alone, 8 * KiB, grid) == [4 * KiB, 8 * KiB]
    off = SimpleNamespace(tie=(None, 64 * KiB), advice=None, best=64 * KiB)
    assert decision.decisive_sizes(off, None, grid) == [32 * KiB, 64 * KiB, 1 * MiB, 16 * MiB]
    assert decision.decisive_sizes(alone, 8 * KiB, []) == []
    # where the contenders' worst ratio lies is measured again too
    worst = SimpleNamespace(tie=(8 * KiB,), advice=8 * KiB, best=8 * KiB,
                            per_size_default={("", 16 * MiB): 0.6, ("", 8 * KiB): 0.9},
                            per_size_advice={("", 16 * MiB): 0.6})
    assert decision.decisive_sizes(worst, 8 * KiB, grid) == [4 * KiB, 8 * KiB, 16 * MiB]


def test_full_probe_later_launches_measure_every_size_the_rest_with_fewer_rounds(monkeypatch):
    """The full probe's later launches (``later_sizes=light``): the sizes where the contenders
    route alike are still measured in every launch (a launch in another machine state is seen
    there), in the same launch, with ``LIGHT_ROUNDS`` batches of the same length; where the
    contenders differ, with the kind's full rounds."""
    import time

    from advisor import measure
    from advisor.models import MpiFacts

    jobs_seen: list[list[tuple]] = []

    def seen(jobs):
        jobs_seen.append([(k, ",".join(map(str, sz)), r, t) for k, sz, r, t in jobs])

    monkeypatch.setattr(measure, "run_mpi", _scripted_worker(seen))
    facts = Facts.model_validate({"memory": {"thp_enabled": "never"},
                                  "mpi": {"implementation": "mpich", "flavour": "upstream",
                                          "version": "5.0.2"}})
    ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 600, quick=False,
                         options={"traffic": "reused", "refine": "0"})
    grid = [8 * KiB, 16 * KiB, 64 * KiB, 128 * KiB, 1 * MiB, 16 * MiB]
    p = {"sizes": grid, "repeats": 5, "target_s": 0.04}
    (e,), why = paired.run_paired(ctx, MpiFacts(implementation="mpich", flavour="upstream",
                                                version="5.0.2"), p, [("", None)])
    full = paired.FULL_ROUNDS // sequential.MIN_LAUNCHES
    assert why == "" and jobs_seen[0] == [("base", ",".join(map(str, grid)), full,
                                           jobs_seen[0][0][3])]
    # launch 2: one MPI start, two jobs of the base kind: the contenders' sizes (advice
    # 128 KiB, default 8 KiB, one size on each side) at full rounds, the rest light, with the
    # per-batch seconds kept (target seconds scaled by the rounds)
    (heavy, light) = jobs_seen[1]
    assert heavy[:3] == ("base", f"{8 * KiB},{16 * KiB},{64 * KiB},{128 * KiB}", full)
    assert light[:3] == ("base", f"{1 * MiB},{16 * MiB}", paired.LIGHT_ROUNDS)
    assert light[3] / light[2] == pytest.approx(heavy[3] / heavy[2], rel=0.01)
    assert e.values["later_launch_light_sizes"] == f"base: {1 * MiB},{16 * MiB}"
    rounds = {(pt.label, int(pt.x)): len(pt.samples) for s in e.series for pt in s.points}
    assert rounds[("launch2", 16 * MiB)] == paired.LIGHT_ROUNDS
    assert rounds[("launch2", 64 * KiB)] == rounds[("launch1", 16 * MiB)] == full
    assert e.values["launches"] == sequential.MIN_LAUNCHES and e.values["stopped"] == paired.STOP_STABLE


def test_one_copy_state_in_every_launch_stops_at_the_one_state_cap_not_the_launch_cap(
        monkeypatch):
    """A stable decision whose launches all met one state of a two-state copy path stops at
    ``MAX_ONE_STATE_LAUNCHES`` (option ``one_state_launches``), not the launch cap, and the
    profile says why."""
    import time

    from advisor import measure
    from advisor.models import MpiFacts

    launches = []

    monkeypatch.setattr(measure, "run_mpi", _scripted_worker(launches.append))
    monkeypatch.setattr(paired, "machine_states", lambda evs, n: "one")
    facts = Facts.model_validate({"memory": {"thp_enabled": "never"},
                                  "mpi": {"implementation": "mpich", "flavour": "upstream",
                                          "version": "5.0.2"}})
    p = {"sizes": [16 * KiB, 64 * KiB, 1 * MiB], "repeats": 5, "target_s": 0.02}
    mpi = MpiFacts(implementation="mpich", flavour="upstream", version="5.0.2")
    for opts, n in (({}, sequential.MAX_ONE_STATE_LAUNCHES), ({"one_state_launches": "3"}, 3)):
        launches.clear()
        ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 600, quick=False,
                             options={"traffic": "reused", "refine": "0", "later_sizes": "all",
                                      **opts})
        (e,), why = paired.run_paired(ctx, mpi, p, [("", None)])
        assert why == "" and len(launches) == n < sequential.MAX_LAUNCHES_FULL
        assert e.values["stopped"] == paired.STOP_ONE_STATE and e.values["launches"] == n
        assert e.values["machine_states_by_launch"] == ",".join(["one"] * (n - 1))


def test_an_unstable_full_probe_stops_at_its_default_measuring_time_and_names_it(monkeypatch):
    """Without ``--option launches``, the full probe starts no launch expected to end past
    the run's aim (``MeasureContext.aim``; with none, ``FULL_MEASURE_S`` from when ``measure``
    began): an unstable decision stops there as
    "budget", naming which budget; ``--option launches=N`` lifts that default (N launches),
    ``--option budget_s=S`` replaces it."""
    import dataclasses
    import time

    from advisor import measure
    from advisor.models import MpiFacts

    launches = []
    monkeypatch.setattr(measure, "run_mpi", _scripted_worker(launches.append))
    real = paired.record_of

    def unstable(*a, **kw):
        rec = real(*a, **kw)
        return dataclasses.replace(rec, d=dataclasses.replace(rec.d, stability=0.5))

    monkeypatch.setattr(paired, "record_of", unstable)
    facts = Facts.model_validate({"memory": {"thp_enabled": "never"},
                                  "mpi": {"implementation": "mpich", "flavour": "upstream",
                                          "version": "5.0.2"}})
    p = {"sizes": [16 * KiB, 64 * KiB, 1 * MiB], "repeats": 5, "target_s": 0.02}
    mpi = MpiFacts(implementation="mpich", flavour="upstream", version="5.0.2")
    # measure began FULL_MEASURE_S ago: past launch 2 no launch fits the default
    long_ago = time.monotonic() - sequential.FULL_MEASURE_S
    for opts, n, stop in (({}, sequential.MIN_LAUNCHES, paired.STOP_BUDGET),
                          ({"launches": "3"}, 3, paired.STOP_CAP),
                          ({"budget_s": "1000"}, sequential.MAX_LAUNCHES_FULL, paired.STOP_CAP),
                          ({"budget_s": "1", "launches": "3"}, sequential.MIN_LAUNCHES,
                           paired.STOP_BUDGET)):
        launches.clear()
        ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 600, quick=False,
                             options={"traffic": "reused", "refine": "0", **opts})
        (e,), why = paired.run_paired(ctx, mpi, p, [("", None)], started=long_ago)
        assert why == "" and len(launches) == n == e.values["launches"]
        assert e.values["stopped"] == stop
        if stop == paired.STOP_BUDGET and not opts:
            assert f"{sequential.FULL_MEASURE_S:g} s of measuring" in e.values["budget"]
            assert "budget (launch 3 would end past the full probe's" in story.measuring_clause(
                e.values)
        elif stop == paired.STOP_BUDGET:
            assert e.values["budget"] == ("launch 3 would end past 1 s of measuring, "
                                          "--option budget_s")
        else:
            assert "budget" not in e.values
    # started now, the default leaves room for the cap's launches on this instant machine
    launches.clear()
    ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 600, quick=False,
                         options={"traffic": "reused", "refine": "0"})
    (e,), _ = paired.run_paired(ctx, mpi, p, [("", None)])
    assert e.values["launches"] == sequential.MAX_LAUNCHES_FULL
    assert e.values["stopped"] == paired.STOP_CAP
    # in a whole run the run's aim (MeasureContext.aim) replaces the default: earlier probes
    # spent the time, so the minimum is measured and the stop names the aim; budget_s still wins
    for opts, n in (({}, sequential.MIN_LAUNCHES), ({"budget_s": "1000"},
                                                      sequential.MAX_LAUNCHES_FULL)):
        launches.clear()
        ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 600, quick=False,
                             options={"traffic": "reused", "refine": "0", **opts},
                             aim=time.monotonic())
        (e,), _ = paired.run_paired(ctx, mpi, p, [("", None)])
        assert e.values["launches"] == n == len(launches)
        if not opts:
            assert e.values["stopped"] == paired.STOP_BUDGET
            assert "the run's time aim" in e.values["budget"]
            assert "--plugin mpich-cma alone" in story.measuring_clause(e.values)
