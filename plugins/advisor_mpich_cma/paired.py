"""The paired measurement: CMA switched on and off through MPI_T in adjacent batches of one
launch (worker ``paired`` mode), for each buffer kind, launch after launch while the decision
is unstable, the crossover then bisected between grid sizes (``run_paired``).  What it records
(the ``cma-paired`` and ``cma-decision`` evidence) is ``advisor_mpich_cma.records``.
"""

from __future__ import annotations

from typing import Optional

from advisor.measure import STABLE_SHARE
from advisor.models import Evidence, MpiFacts
from advisor.probe import MeasureContext
from advisor.specs.units import format_bytes

from advisor_mpich_cma import minimax
from advisor_mpich_cma.crossover import bracket, midpoint
from advisor_mpich_cma.decision import decisive_sizes, default_candidate, record_of
from advisor_mpich_cma.evidence import KIND_NAMES, ON, library_of, sane_library, usable_kinds
from advisor_mpich_cma.kinds import kind_rounds, kind_sizes, page_kinds
from advisor_mpich_cma.launch import LAUNCH_OVERHEAD_S, PER_SIZE_FACTOR, config_env, launch_estimate
from advisor_mpich_cma.pairs import paired_from_evidence
from advisor_mpich_cma.records import paired_evidence
from advisor_mpich_cma.sequential import (MAX_ONE_STATE_LAUNCHES, MIN_LAUNCHES, machine_states,
                                          max_launches, measure_end, measure_end_text)
from advisor_mpich_cma.story import STOP_BUDGET, STOP_CAP, STOP_ONE_STATE, STOP_STABLE
from advisor_mpich_cma.workers import RANK

#: Rounds of (on, off) batches per size and measure in the paired (MPI_T) mode; at most the
#: worker's MAX_ROUNDS (48, what a profile keeps per point).
FULL_ROUNDS, QUICK_ROUNDS = 32, 16
#: Most bisection steps between grid points per kind (a cap; the budget may stop earlier).
#: The quick grid's widest gap around the crossover is 4x (16 -> 64 KiB): 2 steps bring it to
#: sqrt(2), the full grid's widest (2x) spacing.  The full grid's gaps are 2x: 3 steps bring them
#: to 2**(1/8) ~ 1.09, within the few-% noise of one paired batch, past which the per-size
#: verdicts near a crossover tie (and the minimax is indifferent).
MAX_REFINE_QUICK, MAX_REFINE_FULL = 2, 3
#: Rounds of the sizes where launches 2, 3, ... of the full probe cannot move the decision
#: (``later_sizes=light``: outside ``decision.decisive_sizes``, every contender routes them
#: alike).  They are still measured in every launch, so a launch in another machine state is
#: seen there and the launch bootstrap keeps them, with the rounds the THP and per-message
#: kinds run everywhere (``kind_rounds``: half the base kind's), so only the base kind gets
#: lighter.  The batches keep their length: fewer batches, not shorter ones.  Fewer rounds
#: were tried: with 4, one outlier batch set the median of a quarter of a light size's
#: resamples, the minimax's worst size then scored every candidate alike, and after four
#: launches every candidate, CMA off included, fell in the tie band (2-core VM, a probe whose
#: worst ratios were 0.86 for the advice and 0.25 for CMA off).  On that VM a later launch
#: with full rounds took 6.7 s, the sizes of 1 MiB and up 3.2 s of it.
LIGHT_ROUNDS = 8



def refine_steps(ctx: MeasureContext) -> int:
    """Most bisection steps per kind: ``ctx.options['refine']`` or the mode's cap."""
    cap = MAX_REFINE_QUICK if ctx.quick else MAX_REFINE_FULL
    return max(0, int(ctx.options.get("refine", cap)))


def launch_label(i: int) -> str:
    """Point label of the ``i``-th launch (1-based) of the paired measurement."""
    return f"launch{i}"


def run_paired(ctx: MeasureContext, mpi: MpiFacts, p: dict,
               todo, started: Optional[float] = None) -> tuple[list[Evidence], str]:
    """The paired (MPI_T) measurement for every buffer kind (``page_kinds``) and rank pair:
    ``(cma-paired evidence, "")``, or ``([], reason)`` when MPI_T could not switch the
    threshold (the caller falls back).

    Launch 1 measures the grid; the crossover is then refined per kind by bisection
    (``crossover.bracket`` / ``crossover.midpoint``, each step a launch of its own, counted as part
    of launch 1) while the budget allows, at most ``refine_steps`` steps per kind.  Launches
    2, 3, ... each measure, in one launch per rank pair, every size so far (grid and refined):
    where the candidates in contention after the launches so far route messages differently
    or have their worst ratio (``decision.decisive_sizes``) with the kind's rounds, the others
    with ``LIGHT_ROUNDS`` (``--option later_sizes=light``, the full probe's default; ``all``:
    full rounds everywhere); with ``--quick`` (``decisive``) only the decisive sizes after
    launch 1 (a kind with none is not measured again);
    from launch ``MIN_LAUNCHES`` on, the decision (``decision.record_of``, what ``recommend``
    uses) is taken after each, and measuring stops when its stability reaches
    ``advisor.measure.STABLE_SHARE`` and the launches did not all meet one state of a two-state copy
    path (``machine_states``) ("stable"), when one more launch would not fit the budget by the
    planning estimate or by what the last launch took, or would end past the measuring time
    (``measure_end``: ``--option budget_s`` from ``started``, a ``time.monotonic()`` value,
    default: now; else for the full probe the run's aim, ``ctx.aim``), or a launch times out
    ("budget"), at
    ``max_launches`` ("launch cap"), stable at ``MAX_ONE_STATE_LAUNCHES`` (option
    ``one_state_launches``) with every launch in one state ("one-state cap"), or when a later
    launch fails ("launch <i> failed: ...");
    the launches that completed stand.  Every kind is measured in the same
    launch per rank pair (worker ``--pages base,thp``), one after the other with its own
    buffers and paired rounds, as a launch of its own would; only the MPI start is shared.

    Evidence ids: ``cma-paired[.<pair>]`` for base pages, ``cma-paired.thp[.<pair>]`` for
    THP-backed buffers; one point per size and launch (label ``launch<i>``); values
    ``launches``, ``stopped`` (why), ``budget`` (with "budget": which one, the time budget's
    share or the default measuring time), ``machine_states_by_launch`` (``machine_states`` after
    each launch from the second), ``later_launch_sizes`` (per kind, the sizes launches 2,
    3, ... measured), ``stability_by_launch`` (the decision's stability after
    each launch from the second, comma-separated), ``machine_states`` (steady / both / one:
    with "one" every candidate ties in the decision and the default is advised),
    ``buffer_pages`` ("base"/"msgbuf"/"thp"),
    ``thp_backed_bytes_min_rank``, ``refine.steps`` and ``refine.sizes`` (bytes).

    Raises ``advisor.measure.LaunchError`` when the launch fails for another reason.
    """
    import time

    from advisor.measure import LaunchError, page_size, run_mpi

    started_at = time.monotonic() if started is None else started
    soft_end = measure_end(ctx, started_at)
    sizes, target = p["sizes"], p["target_s"]
    rounds = int(ctx.options.get("rounds", QUICK_ROUNDS if ctx.quick else FULL_ROUNDS))
    per_launch_rounds = max(2, rounds // MIN_LAUNCHES)
    # CMA enabled at init (MPICH's init check still applies); the threshold is switched at run
    # time, so its start value does not matter
    env = config_env(mpi.flavour, ON, 0)
    kinds = page_kinds(ctx)
    ksizes = {k: kind_sizes(k, sizes, ctx.quick) for k in kinds}
    # the kinds share the timed seconds one kind had before, so the probe keeps its duration
    share_of = {k: len(ksizes[k]) / sum(len(v) for v in ksizes.values()) for k in kinds}
    # raw[(kind, pair)][launch label] = that launch's paired result
    raw: dict[tuple[str, str], dict[str, dict]] = {}
    per_batch: dict[tuple[str, str], float] = {}

    def launch(pair, cpus, todo_kinds: dict[str, tuple[list[int], float]],
               light: Optional[dict[str, list[int]]] = None) -> dict[str, dict]:
        """One MPI launch measuring every kind of ``todo_kinds`` (kind -> (sizes, seconds per
        size and measure)) in turn (worker ``--pages k1,k2``): one MPI start instead of one
        per kind.  ``light`` (kind -> sizes): sizes of a kind measured in the same launch
        with ``LIGHT_ROUNDS`` rounds of the same batch length (a job of its own, merged
        into the kind's result).  -> ``{kind: paired result}``, or ``{"": result with
        mpit_error}``."""
        jobs = []  # (kind, sizes, target seconds per size and measure, rounds)
        for k, (szs, t) in todo_kinds.items():
            full = kind_rounds(k, per_launch_rounds)
            few = min(LIGHT_ROUNDS, full)
            lite = [n for n in (light or {}).get(k, ()) if n in szs] if few < full else []
            heavy = [n for n in szs if n not in lite]
            if heavy:
                jobs.append((k, heavy, 2 * t, full))
            if lite:  # the same seconds per batch: fewer batches, not shorter ones
                jobs.append((k, lite, 2 * t * few / full, few))
        args = ["paired", "--pages", ",".join(j[0] for j in jobs),
                "--sizes", ";".join(",".join(map(str, j[1])) for j in jobs),
                "--target-s", ";".join(f"{j[2]:.4f}" for j in jobs),
                "--rounds", ";".join(str(j[3]) for j in jobs)]
        if cpus:
            args += ["--cpus", cpus]
        est = sum(launch_estimate(j[1], j[2]) for j in jobs)
        res = run_mpi(RANK, args, env=env, launcher=ctx.launcher,
                      timeout_s=max(10.0, min(ctx.remaining_s() + 10.0, 20 * est)))
        if res.get("mpit_error") or not (res.get("kinds") or res.get("sizes")):
            return {"": res}
        rows = res.pop("kinds", None) or [res]
        out: dict[str, dict] = {}
        for (k, *_), r in zip(jobs, rows):
            out[k] = merge(out[k], r) if k in out else {**res, **r}
        return out

    def merge(old: dict, new: dict) -> dict:
        rows = {int(r["bytes"]): r for r in old["sizes"] + new["sizes"]}
        return {**old, "sizes": [rows[n] for n in sorted(rows)]}

    first = launch_label(1)
    for idx, (pair, cpus) in enumerate(todo):
        share = ctx.remaining_s() / (len(todo) - idx) / len(kinds) / MIN_LAUNCHES
        ts = {}
        for kind in kinds:
            szs = ksizes[kind]
            # each size runs 2 measures x 2 configs x target_s, plus calibration and warm-up
            budget = max(0.0, share - LAUNCH_OVERHEAD_S) / (len(szs) * 2 * 2 * PER_SIZE_FACTOR)
            ts[kind] = max(min(target * 2 * share_of[kind] / MIN_LAUNCHES, budget),
                           target / 4 / MIN_LAUNCHES)
        ctx.progress(f"paired on/off batches, launch 1 ({', '.join(kinds)} pages)"
                     f"{' ' + pair if pair else ''}", idx / len(todo))
        got = launch(pair, cpus, {k: (ksizes[k], ts[k]) for k in kinds})
        if "" in got or any(not got[k].get("sizes") for k in kinds):
            res = got.get("", {})
            if raw:  # MPI_T worked for an earlier launch: this one is a real failure
                raise LaunchError(f"paired launch ({', '.join(kinds)} pages) returned no "
                                  f"sizes: {res.get('mpit_error', '')}")
            return [], str(res.get("mpit_error") or "no sizes returned")
        for kind in kinds:
            raw[(kind, pair)] = {first: got[kind]}
            per_batch[(kind, pair)] = ts[kind]

    def evidence(refined) -> list[Evidence]:
        return [paired_evidence(pair, cpus, raw[(kind, pair)], env, ctx,
                                 kind_rounds(kind, per_launch_rounds), kind,
                                 refined=refined.get(kind, ()))
                for kind in kinds for pair, cpus in todo]

    # refinement between grid points, per kind (the pairs of a kind share one threshold); the
    # kinds bisect independently, their steps of the same rank share one launch
    lib = library_of(list(ctx.applicability.evidence) if ctx.applicability else [], ctx.facts)
    steps: dict[str, list[int]] = {k: [] for k in kinds}
    active = list(kinds)
    for _ in range(refine_steps(ctx)):
        mids: dict[str, int] = {}
        for kind in active:
            data = [paired_from_evidence(e) for e in evidence(steps)
                    if e.values.get("buffer_pages") == kind]
            try:
                d = minimax.decide(data, default_candidate(lib))
            except ValueError:
                continue
            br = bracket(data, d.best)
            m = midpoint(*br, page_size()) if br else None
            if m is not None:
                mids[kind] = m
        # the kinds that still fit, in order, each step costing its launches' estimate (the
        # later launches measure the refined sizes too: the cost counts them all)
        cost = 0.0
        fit: dict[str, int] = {}
        for kind, m in mids.items():
            c = MIN_LAUNCHES * sum(launch_estimate([m], 2 * per_batch[(kind, pr)])
                                   for pr, _ in todo)
            if cost + c <= ctx.remaining_s() / 2:
                fit[kind] = m
                cost += c
        active = list(fit)
        if not active:
            break
        ctx.progress("refining the crossover: " + "; ".join(
            f"{format_bytes(m)} for {KIND_NAMES.get(k, k)}" for k, m in fit.items()), 1.0)
        failed = False
        for pair, cpus in todo:
            got = launch(pair, cpus, {k: ([m], per_batch[(k, pair)]) for k, m in fit.items()})
            if "" in got or any(not got[k].get("sizes") for k in fit):
                failed = True
                break
            for kind in fit:
                raw[(kind, pair)][first] = merge(raw[(kind, pair)][first], got[kind])
        if failed:
            break
        for kind, m in fit.items():
            steps[kind].append(m)

    # launches 2, 3, ...: every size so far, one launch per rank pair, until stable
    evs = list(ctx.applicability.evidence) if ctx.applicability else []
    lib_sane, bad_thr = sane_library(library_of(evs, ctx.facts), ctx.facts)
    history: list[float] = []
    budget = ""  # which budget stopped the launches (with STOP_BUDGET)
    states: list[str] = []  # machine_states after each launch from the second
    n_launch = 1
    last_s = 0.0  # seconds the last of launches 2, 3, ... took
    # launches 2, 3, ... re-measure every size (full probe) or, with --quick, only where the
    # candidates still in contention after launch 1 route messages differently and where
    # their worst ratio lies (``decision.decisive_sizes``): the largest sizes cost most of a
    # launch (4-16 MiB: 3.7 of 5.7 s of the base kind's timed work on the 2-core VM).  An A/B
    # of 20 full probes there: decisive sizes 7/10 the same advice at a 25 s median, every
    # size 10/10 at 40 s; the full probe keeps the agreement.  ``--option later_sizes=all`` /
    # ``decisive`` chooses either way.
    later = {k: sorted({int(r["bytes"]) for r in raw[(k, todo[0][0])][first]["sizes"]})
             for k in kinds}
    mode = ctx.options.get("later_sizes", "decisive" if ctx.quick else "light")
    light: dict[str, list[int]] = {}  # kind -> sizes the next launch measures with few rounds

    def contest(rec) -> None:
        """Where the decision ``rec`` can still move (``decision.decisive_sizes``): with
        ``decisive`` later launches measure only there; with ``light`` every size, the others
        with ``LIGHT_ROUNDS``."""
        nonlocal later
        if rec is None or mode == "all":
            return
        cut = {k: decisive_sizes(rec.d, default_candidate(lib_sane), v) for k, v in later.items()}
        if mode == "decisive":
            later = {k: v for k, v in cut.items() if v} or later
        else:
            light.clear()
            light.update({k: [n for n in later[k] if n not in cut[k]] for k in later})

    def saved(k: str) -> float:
        """Share of kind ``k``'s later-launch timing its light sizes save (``launch``: they
        run ``LIGHT_ROUNDS`` of the kind's rounds, none lighter where it runs that few)."""
        kr = kind_rounds(k, per_launch_rounds)
        return len(light.get(k, ())) / len(later[k]) * (1 - min(LIGHT_ROUNDS, kr) / kr)

    if mode in ("decisive", "light"):
        contest(record_of(usable_kinds(evidence(steps))[0], lib_sane, bad_thr))
    while True:
        if n_launch >= MIN_LAUNCHES:
            so_far = evidence(steps)
            used, _ = usable_kinds(so_far)
            rec = record_of(used, lib_sane, bad_thr)
            history.append(rec.d.stability if rec else 0.0)
            if mode == "light":  # the contention as the launches so far leave it
                contest(rec)
            states.append(machine_states(so_far, n_launch))
            # stable, and not from one state of a copy path seen to switch between two
            if history[-1] >= STABLE_SHARE and states[-1] != "one":
                stopped = STOP_STABLE
                break
            if n_launch >= max_launches(ctx):
                stopped = STOP_CAP
                break
            if history[-1] >= STABLE_SHARE and n_launch >= int(
                    ctx.options.get("one_state_launches", MAX_ONE_STATE_LAUNCHES)):
                stopped = STOP_ONE_STATE  # stable, every launch in one state: no more chances
                break
        est = sum(launch_estimate(later[k], 2 * per_batch[(k, pr)] * (1 - saved(k)))
                  for k in later for pr, _ in todo)
        # the planning estimate, or what the last launch took when that was longer (a loaded
        # machine: a new user's make probe saw a launch overrun the budget and lose them all)
        nxt = f"launch {n_launch + 1} would end past"
        if n_launch >= MIN_LAUNCHES and max(est, last_s) > ctx.remaining_s():
            stopped, budget = STOP_BUDGET, (
                f"{nxt} this probe's share of the --time-budget (the probes still to run share "
                f"what is left equally), which a larger --time-budget or --plugin mpich-cma "
                f"alone lifts")
            break
        if (n_launch >= MIN_LAUNCHES and soft_end is not None
                and time.monotonic() + max(est, last_s) > soft_end):
            stopped, budget = STOP_BUDGET, f"{nxt} {measure_end_text(ctx, started_at, soft_end)}"
            break
        why_more = ("" if n_launch < MIN_LAUNCHES else
                    f" (stability {history[-1]:.2f})" if history[-1] < STABLE_SHARE else
                    " (the launches so far met one state of a two-state copy path)")
        ctx.progress(f"paired on/off batches, launch {n_launch + 1}{why_more}", 1.0)
        t0 = time.monotonic()
        got_all: dict[tuple[str, str], dict] = {}
        try:
            for pair, cpus in todo:
                got = launch(pair, cpus, {k: (later[k], per_batch[(k, pair)]) for k in later},
                             light)
                if "" in got or any(not got[k].get("sizes") for k in later):
                    raise LaunchError(f"paired launch {n_launch + 1} returned no sizes: "
                                      f"{got.get('', {}).get('mpit_error', '')}")
                got_all.update({(kind, pair): got[kind] for kind in later})
        except LaunchError as exc:
            # the launches so far stand: the decision is taken from them, and says why it
            # stopped (a timeout here is the budget running out under load)
            stopped = (STOP_BUDGET if getattr(exc, "timed_out", False)
                       else f"launch {n_launch + 1} failed: {str(exc)[:160]}")
            budget = "the time budget's share (a launch timed out)"
            break
        n_launch += 1
        last_s = time.monotonic() - t0
        for (kind, pair), res in got_all.items():
            raw[(kind, pair)][launch_label(n_launch)] = res
    final = evidence(steps)
    seq = {"launches": n_launch, "stopped": stopped,
           **({"budget": budget} if stopped == STOP_BUDGET else {}),
           "stability_by_launch": ",".join(f"{x:.2f}" for x in history),
           "machine_states_by_launch": ",".join(states),
           "later_launch_light_sizes": "; ".join(
               f"{k}: " + (",".join(map(str, light[k])) if light.get(k) else "none")
               for k in kinds),
           "later_launch_sizes": "; ".join(f"{k}: " + (",".join(map(str, later[k]))
                                                       if k in later else "none")
                                           for k in kinds),
           "machine_states": machine_states(final, n_launch)}
    return [e.model_copy(update={"values": {**e.values, **seq}}) for e in final], ""
