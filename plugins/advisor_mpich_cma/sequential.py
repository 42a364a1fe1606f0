"""How many paired launches the CMA probe measures (issue 25 item 1): at least two, then one at
a time while the decision is unstable, up to a cap and within a measuring time; and the reading
of the copy path's machine states that decides whether a stable decision may stop.  Pure: the
launches themselves are ``advisor_mpich_cma.paired.run_paired``.
"""

from __future__ import annotations

from typing import Optional

from advisor.probe import AIM_OUTSIDE_S, FULL_AIM_S, MeasureContext

from advisor_mpich_cma.evidence import BASE

#: Launches of the paired measurement.  The best threshold moves with the machine's state
#: between launches (issue 25: the winner at 8-32 KiB changed from one launch to the next on the
#: 2-core AMD VM while each launch agreed with itself), so the decision takes at least
#: ``MIN_LAUNCHES``, each with ``1/MIN_LAUNCHES`` of the rounds and seconds one launch had (the
#: probe's duration stays), and resamples them.  More launches follow, one at a time, while the
#: decision's stability is below ``advisor.measure.STABLE_SHARE`` and one more fits the budget,
#: up to the mode's cap (a cap on cost: each launch adds ~1/MIN_LAUNCHES of the sweep's time).
MIN_LAUNCHES = 2
MAX_LAUNCHES_QUICK, MAX_LAUNCHES_FULL = 4, 6
#: The full probe adds no launch that would end past the run's aim (``MeasureContext.aim``:
#: ``advisor.probe.FULL_AIM_S``, 30 s for the whole ``advisor probe``, from the run's start, or
#: the ``--time-budget``), beyond ``MIN_LAUNCHES``; a caller that sets no aim gets
#: ``FULL_MEASURE_S`` from the start of ``measure``: the aim of a probe run alone.  On the
#: 2-core AMD VM a later launch took 6.3-7.6 s and launch 1 with the crossover refined
#: 8.0-10.0 s, so run alone a third launch fits and a fourth does not; after the host-buffer and
#: memory-pool probes (9-12 s) two launches fit.  Launches 3-6 bought little: of 37 recorded
#: full probes (issue 25), re-decided from their first 2 launches, 35 gave the final advice
#: (21 re-decided from 3: 20), while the stability figure rose slowly (0.35, 0.38, 0.54, 0.84
#: after launches 2-5 of one probe, its advice the same throughout).  ``--option budget_s=S``
#: sets another figure (as the host-buffer probe's own target); ``--option launches=N`` alone
#: lifts it (N launches, within the ``--time-budget``); ``--quick`` has none (its later launches
#: measure only the decisive sizes, 1.3-1.5 s each there, and its cap bounds it).
FULL_MEASURE_S = FULL_AIM_S - AIM_OUTSIDE_S
#: The rarer state of a two-state copy path (``advisor_mpich_cma.states``) counts as met when
#: it holds at least this share of one launch's worth of base-kind batches (half a launch):
#: on the 2-core VM the probes whose launches all met the fast-copy state advised 16 KiB,
#: those that met both kept the 8 KiB default (2 of 6 full probes, issue 25).
MIN_STATE_LAUNCH_SHARE = 0.5
#: Most launches a stable decision is measured on while every launch met one state of a
#: two-state copy path (``machine_states`` "one"); further launches would only be chances to
#: meet the other state (until one does, the decision is the default, every candidate tied:
#: ``minimax.decide(one_state=)``).  None beyond ``MIN_LAUNCHES``: on the 2-core VM three
#: probes went on for this reason to 5-6 launches (15-21 s each) and none met the other state
#: (two ended at the cap of 6 still "one", one "steady" once the stray batches no longer formed
#: a group); one more launch cost 5.2 s of a 36 s whole probe (issue 25's target: 30 s).
#: ``--option one_state_launches=N`` takes up to N.
MAX_ONE_STATE_LAUNCHES = MIN_LAUNCHES


def machine_states(evs, launches: int) -> str:
    """"steady" (the base kind's copy path showed one state), "both" (two states, each met by
    at least ``MIN_STATE_LAUNCH_SHARE`` of a launch's batches) or "one" (two states, but every
    launch met the same one, the other only in stray batches)."""
    base = [e for e in evs if e.values.get("buffer_pages", BASE) == BASE]
    v = base[0].values if base else {}
    if not v.get("state.bimodal"):
        return "steady"
    rare = min(float(v.get("state.low_share", 0.0)), float(v.get("state.high_share", 1.0)))
    return "one" if rare < MIN_STATE_LAUNCH_SHARE / max(1, launches) else "both"


def measure_end(ctx: MeasureContext, started: float) -> Optional[float]:
    """The ``time.monotonic()`` by which further launches should end: ``started`` (when
    ``measure`` began) plus ``--option budget_s`` seconds, else for the full probe the run's
    aim (``ctx.aim``; with none, ``started`` plus ``FULL_MEASURE_S``); None with ``--quick``
    or ``--option launches=N`` and no ``budget_s`` (the launch cap and the time budget bound
    them)."""
    if "budget_s" in ctx.options:
        return started + float(ctx.options["budget_s"])
    if ctx.quick or "launches" in ctx.options:
        return None
    return ctx.aim if ctx.aim is not None else started + FULL_MEASURE_S


def measure_end_text(ctx: MeasureContext, started: float, end: float) -> str:
    """Which end ``measure_end`` gave (``end``, for ``started``), and what lifts it: the stop
    reason's words after "launch N would end past"."""
    if "budget_s" in ctx.options:
        return f"{end - started:g} s of measuring, --option budget_s"
    if ctx.aim is not None:
        return (f"the run's time aim (advisor probe: {FULL_AIM_S:g} s in all, or its "
                f"--time-budget), which --plugin mpich-cma alone, --option budget_s=S or "
                f"launches=N lifts, within this probe's share of the --time-budget")
    return (f"the full probe's {FULL_MEASURE_S:g} s of measuring, which --option budget_s=S or "
            f"launches=N lifts")


def max_launches(ctx: MeasureContext) -> int:
    """Most launches: ``ctx.options['launches']`` (at least ``MIN_LAUNCHES``) or the mode's cap."""
    cap = MAX_LAUNCHES_QUICK if ctx.quick else MAX_LAUNCHES_FULL
    return max(MIN_LAUNCHES, int(ctx.options.get("launches", cap)))
