"""Is the MPI_T run-time switch of the CMA threshold trusted here (issue 25 item 5)?

The paired measurement (``advisor_mpich_cma.paired``) writes the threshold CVAR through MPI_T
between batches of one launch.  That a library takes the write (it reads back) does not show
that its shared-memory path follows it: on the MPICH 4.3.2 wheel a run-time threshold of 1024
did not route 1 KiB messages through CMA (issue 25; traced here: a written 1024 or 16384 sends
messages of that size by the copy path, while 1 and 2**30 switch).

First check, before any paired launch (``run_trace_check``): one launch of the worker's
``route`` mode under ``strace -f`` writes each threshold of ``trace_phases`` through MPI_T and
counts the CMA calls of messages at it and one byte below (``trace_verdict``); a phase that
routes otherwise than its threshold says makes the switch untrusted.  ``advisor verify``
traces the two thresholds it would write the same way.  Where strace is missing or cannot
trace, the second check runs after the paired rounds: it compares them with fresh launches at
a few sizes (``check_sizes``): the threshold CVAR set in the
environment to the two values the paired rounds write (1 byte and 2**30, CMA enabled in
both), two launches each (on off off on), the A/A floor from each configuration's two
launches (``advisor.measure.noise_floor_from_aa``).

Rule (``switch_agrees``, pure): the fresh launches' bandwidth ratio ``r_env`` = on/off (> 1:
CMA faster).  Within the A/A floor the check says nothing (trusted, "inconclusive").  Beyond
it, the switch is trusted unless it changed nothing measurable: the paired median ratio within
the floor of 1, or its bootstrap CI holding 1.  How far the two ratios lie apart is not the
test: the VM's copy path switches between a fast and a slow state (background.md §4) that
moves the CMA/copy ratio itself (seen at 16 KiB: paired rounds x0.81-x2.08, fresh launches
x0.72 and x1.74 in two probes), so a size-by-size match failed working switches; a switch that
does nothing keeps every round near 1.  It compares only the extremes, which MPICH 4.3.2 does
switch, so it trusts that release: that is why the trace runs first.  An untrusted switch:
the paired rounds are not used, the probe falls back to interleaved launches (the environment
form, which is also the form ``emit`` writes) and says why.

Evidence ``cma-switch-check``: values ``sizes_bytes`` (the sizes checked, ``check_sizes``),
per size ``ratio_env:<n>`` / ``ratio_mpit:<n>`` (bandwidth on/off), ``aa_floor:<n>``,
``trusted:<n>``, ``inconclusive:<n>``; overall ``trusted`` (every size) and ``why``; series
``bandwidth:cma-on`` / ``bandwidth:cma-off`` (one point per size and launch, bytes/s).  From
the trace instead: ``method`` "strace", ``phases`` ("T:N=calls,..."), ``messages_per_phase``,
``trusted``, ``why``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Sequence

from advisor.models import Evidence, Finding, MpiFacts, Point, Series

from advisor_mpich_cma.evidence import BW, OFF, ON

if TYPE_CHECKING:  # pragma: no cover
    from advisor.probe import MeasureContext

SWITCH_CHECK = "cma-switch-check"
#: The size checked: the largest measured size up to this (bytes).  Above the crossover the
#: two paths differ most (CMA's single copy against two copies: 2-4x from 64 KiB in
#: background.md §4); 1 MiB keeps the four launches short (one osu_bw window of 64 KiB
#: messages fills MAX_WINDOW_BYTES).
CHECK_MAX_BYTES = 1 << 20
#: The middle size checked: the measured size nearest MPICH 4.3's default CMA threshold and
#: shared-memory cell size, 16 KiB (``mpivars`` of the 4.3.2 wheel), where thresholds decide.
MIDDLE_BYTES = 16 << 10
#: Order of the fresh launches: ABBA, so a drift falls on both configurations alike.
ORDER = (ON, OFF, OFF, ON)


def switch_agrees(ratio_mpit: float, env_on: Sequence[float], env_off: Sequence[float],
                  mpit_ci: Optional[tuple[float, float]] = None
                  ) -> tuple[bool, bool, float, float, str]:
    """``(trusted, inconclusive, ratio_env, aa_floor, why)`` (module docstring).

    :param ratio_mpit: paired bandwidth ratio on/off at the size (median over rounds).
    :param env_on, env_off: per-launch median bandwidths (bytes/s) of the fresh launches.
    :param mpit_ci: the 95 % bootstrap CI of ``ratio_mpit``; a switch whose CI holds 1 changed
        nothing measurable.
    :raises ValueError: no launches, or non-positive values.
    """
    import numpy as np

    from advisor.measure import noise_floor_from_aa

    floor = max(noise_floor_from_aa(list(env_on)), noise_floor_from_aa(list(env_off)))
    r_env = float(np.median(env_on) / np.median(env_off))
    if ratio_mpit <= 0:
        raise ValueError("the paired ratio must be positive")
    le, lm = math.log(r_env), math.log(ratio_mpit)
    if abs(le) <= math.log1p(floor):
        return True, True, r_env, floor, (
            f"fresh launches do not tell the paths apart here (x{r_env:.2f}, A/A floor "
            f"{floor:.0%}): nothing contradicts the run-time switch")
    ci = f", 95 % CI [{mpit_ci[0]:.2f}, {mpit_ci[1]:.2f}]" if mpit_ci else ""
    noop = abs(lm) <= math.log1p(floor) or (mpit_ci is not None and mpit_ci[0] <= 1 <= mpit_ci[1])
    if not noop:
        return True, False, r_env, floor, (
            f"the run-time switch moves the path here (x{ratio_mpit:.2f}{ci}) as the setting "
            f"in the environment does (x{r_env:.2f}, A/A floor {floor:.0%}); by how much "
            f"moves with the copy state")
    return False, False, r_env, floor, (
        f"the run-time switch changed nothing measurable (CMA on/off bandwidth "
        f"x{ratio_mpit:.2f}{ci}) where fresh launches with the setting in the environment gave "
        f"x{r_env:.2f} (A/A floor {floor:.0%}): this library does not route messages by a "
        f"threshold written through MPI_T after init")


def paired_ratio_at(paired: Sequence[Evidence], nbytes: int
                    ) -> Optional[tuple[float, float, float]]:
    """``(median, CI low, CI high)`` bandwidth ratio on/off over the rounds of every launch
    at ``nbytes`` (95 % percentile-bootstrap CI of the median) in the base-page paired evidence (first rank pair); None when it has none
    there."""
    import numpy as np

    from advisor_mpich_cma.pairs import paired_from_evidence

    base = [e for e in paired if e.values.get("buffer_pages", "base") == "base"]
    if not base:
        return None
    p = paired_from_evidence(base[0])
    if nbytes not in p.sizes:
        return None
    from advisor.measure import bootstrap_median_ci

    _, bw = p.pair_ratios(p.sizes.index(nbytes))
    if not bw:
        return None
    lo, hi = bootstrap_median_ci(bw)
    return float(np.median(bw)), float(lo), float(hi)


def check_sizes(paired: Sequence[Evidence]) -> list[int]:
    """The sizes checked (bytes): the smallest base-page paired size (where MPICH 4.3.2's
    run-time threshold failed to route 1 KiB messages, issue 25), the one nearest
    ``MIDDLE_BYTES`` and the largest up to ``CHECK_MAX_BYTES`` (where the paths differ most)."""
    sizes = sorted({int(pt.x) for e in paired if e.values.get("buffer_pages", "base") == "base"
                    for s in e.series for pt in s.points if pt.x is not None})
    if not sizes:
        return []
    below = [n for n in sizes if n <= CHECK_MAX_BYTES] or sizes[:1]
    middle = min(sizes, key=lambda n: (abs(math.log(n / MIDDLE_BYTES)), n))
    return sorted({sizes[0], middle, max(below)})


def run_check(ctx: "MeasureContext", mpi: MpiFacts, paired: Sequence[Evidence], target_s: float,
              cpus: Optional[str] = None) -> Optional[Evidence]:
    """Four fresh launches (``ORDER``) timing every size of ``check_sizes``, and the verdict
    per size, as the ``cma-switch-check`` evidence: trusted when every size is; None when the
    paired evidence has no ratio to check.

    :raises advisor.measure.LaunchError: a launch fails.
    """
    from advisor.measure import run_mpi
    from advisor.measure.mpi.loops import THRESHOLD_OFF, THRESHOLD_ON

    from advisor_mpich_cma.launch import config_env
    from advisor_mpich_cma.workers import RANK

    # the same CVAR and values the paired rounds write, set in the environment instead: CMA
    # enabled in both, the threshold 1 byte (on) or 2**30 (off).  Disabling CMA instead would
    # compare another copy path (measured: x6.9 vs x2.0 at 1 MiB on the 2-core VM)
    envs = {ON: config_env(mpi.flavour, ON, THRESHOLD_ON),
            OFF: config_env(mpi.flavour, ON, THRESHOLD_OFF)}
    ratios = {n: paired_ratio_at(paired, n) for n in check_sizes(paired)}
    ratios = {n: r for n, r in ratios.items() if r is not None and r[0] > 0}
    if not ratios:
        return None
    sizes = sorted(ratios)
    args = ["sweep", "--sizes", ",".join(map(str, sizes)), "--target-s", f"{target_s:.4f}"]
    if cpus:
        args += ["--cpus", cpus]
    got: dict[tuple[str, int], list[float]] = {}
    points: dict[str, list[Point]] = {ON: [], OFF: []}
    ctx.progress(f"checking the MPI_T switch at {', '.join(map(str, sizes))} bytes against "
                 "fresh launches", None)
    for i, cfg in enumerate(ORDER):
        res = run_mpi(RANK, args, env=envs[cfg], launcher=ctx.launcher,
                      timeout_s=max(20.0, min(ctx.remaining_s() + 10.0, 60.0)))
        for row in res["sizes"]:
            n = int(row["bytes"])
            bw = [n * row["window"] / t for t in row["bw_window_s"] if t > 0]
            points[cfg].append(Point(x=n, label=f"run{i}", samples=bw))
            got.setdefault((cfg, n), []).append(sorted(bw)[len(bw) // 2])
    values: dict = {"sizes_bytes": ",".join(map(str, sizes))}
    failed: list[str] = []
    notes: list[str] = []
    for n in sizes:
        med, lo, hi = ratios[n]
        ok, inconclusive, r_env, floor, why = switch_agrees(med, got[(ON, n)], got[(OFF, n)],
                                                            (lo, hi))
        values.update({f"ratio_env:{n}": r_env, f"ratio_mpit:{n}": med,
                       f"ratio_mpit_ci:{n}": f"{lo:.3f}-{hi:.3f}",
                       f"aa_floor:{n}": floor, f"trusted:{n}": ok,
                       f"inconclusive:{n}": inconclusive})
        (notes if ok else failed).append(f"at {n} bytes {why}")
    values.update({"trusted": not failed, "why": "; ".join(failed or notes)})
    return Evidence(
        id=SWITCH_CHECK, description="the MPI_T run-time threshold switch checked against "
        "fresh launches with the same threshold values in the environment, at a few sizes",
        series=[Series(name=f"{BW}:{cfg}", unit="bytes/s", x_name="message size",
                       x_unit="bytes", points=points[cfg]) for cfg in (ON, OFF)],
        values=values)


#: The written thresholds whose routing the traced check tests (bytes): 1 KiB, where MPICH
#: 4.3.2's run-time threshold failed (issue 25), and ``MIDDLE_BYTES``.
TRACE_THRESHOLDS = (1 << 10, MIDDLE_BYTES)


def trace_phases(thresholds: Sequence[int] = TRACE_THRESHOLDS) -> list[tuple[int, int]]:
    """The ``(threshold, bytes)`` phases of the traced check: the two extremes the paired
    rounds write, at ``MIDDLE_BYTES``, then each of ``thresholds`` (bytes; those from 2 up to
    below the off extreme) at itself and one byte below."""
    from advisor.measure.mpi.loops import THRESHOLD_OFF, THRESHOLD_ON

    out = [(THRESHOLD_ON, MIDDLE_BYTES), (THRESHOLD_OFF, MIDDLE_BYTES)]
    for t in sorted({int(t) for t in thresholds if 2 <= int(t) < THRESHOLD_OFF}):
        out += [(t, t), (t, t - 1)]
    return out


def trace_verdict(counts: dict[tuple[int, int], int], messages: int,
                  phases: Optional[Sequence[tuple[int, int]]] = None) -> tuple[bool, str]:
    """``(trusted, why)`` from ``emitted.phase_counts``: a phase routes by CMA when it made at
    least one call per message (``messages``, both directions).  Trusted when every phase of
    ``phases`` (default ``trace_phases()``) routes as the threshold says
    (``bytes >= threshold``).  Pure.

    :raises KeyError: a phase of ``phases`` is missing from ``counts``.
    """
    phases = list(phases) if phases is not None else trace_phases()
    wrong = []
    for t, n in phases:
        routed = counts[(t, n)] >= messages
        if routed != (n >= t):
            wrong.append(f"threshold {t} written through MPI_T sent {n}-byte messages by "
                         f"{'CMA' if routed else 'the copy path'} ({counts[(t, n)]} "
                         f"process_vm_readv/writev calls for {messages} messages)")
    if wrong:
        return False, ("the run-time switch does not route as the threshold says: "
                       + "; ".join(wrong))
    shown = ", ".join(f"{t} at {n} B: {counts[(t, n)]}" for t, n in phases)
    return True, (f"every threshold written through MPI_T routed as it says (CMA calls per "
                  f"phase of {messages} messages: {shown})")


def run_trace_check(ctx: "MeasureContext", mpi: MpiFacts,
                    thresholds: Sequence[int] = TRACE_THRESHOLDS,
                    env_threshold: Optional[int] = None) -> Optional[Evidence]:
    """One launch of the ``route`` mode under ``strace -f`` (``trace_phases(thresholds)``, each
    threshold written through MPI_T; ``emitted.traced_route``), as the ``cma-switch-check``
    evidence with ``method`` "strace": values ``phases`` ("T:N=calls,..."), ``messages_per_phase``,
    ``trusted``, ``why``.  None when it could not be counted here (no ``strace`` or launcher,
    MPI_T refused, strace unable to trace): the caller then checks the switch by bandwidth
    (``run_check``).  Never raises for a failing launch.

    ``env_threshold`` (bytes, >= 2; the library default): the launch starts with it in the
    environment, and before any MPI_T write its phases check it in the form emit writes
    (``emitted.env_phases``, labelled ``emitted.ENV_LABEL``), as ``emitted.run_route_check``
    would in a launch of its own; values ``env_form.<key>``: the ``cma-emitted-route`` values
    (``emitted.route_values``), so a probe whose advice is that threshold needs no second
    traced launch (``measure.emitted_evidence``)."""
    from advisor_mpich_cma.emitted import ENV_LABEL, env_phases, route_values, traced_route
    from advisor_mpich_cma.launch import config_env

    phases = trace_phases(thresholds)
    first = env_phases(env_threshold, ENV_LABEL) if env_threshold and env_threshold >= 2 else []
    ctx.progress("tracing the MPI_T switch: which path each written threshold sends by", None)
    counts, messages, _ = traced_route(ctx, config_env(mpi.flavour, ON, env_threshold or 0),
                                       first + phases, write=True, env_phases=len(first))
    if counts is None:
        return None
    trusted, why = trace_verdict(counts, messages, phases)
    env_form = ({f"env_form.{k}": v for k, v in route_values(
        int(env_threshold), counts, first, how="the MPI_T switch check's launch").items()}
        if first else {})
    return Evidence(
        id=SWITCH_CHECK, description="the MPI_T run-time threshold switch traced: "
        "process_vm_readv/writev calls per written threshold and message size, one launch",
        values={"trusted": trusted, "why": why, "method": "strace",
                "phases": ",".join(f"{t}:{n}={counts[(t, n)]}" for t, n in phases),
                "messages_per_phase": messages, **env_form})


def check_findings(evidence: Sequence[Evidence]) -> list[Finding]:
    """``cma-mpit-untrusted`` (warning) when the check failed: the advice comes from separate
    launches, and why; ``cma-mpit-checked`` (info) with the check's figures when it passed."""
    ev = Evidence.find(evidence, SWITCH_CHECK)
    if ev is None:
        return []
    if ev.values.get("trusted", True):
        how = ("traced" if ev.values.get("method") == "strace" else
               "checked against fresh launches")
        return [Finding(id="cma-mpit-checked", severity="info", evidence=[SWITCH_CHECK],
                        message=f"the MPI_T run-time switch was {how}: "
                                f"{ev.values.get('why')}")]
    return [Finding(
        id="cma-mpit-untrusted", severity="warning", evidence=[SWITCH_CHECK],
        message=(f"paired MPI_T rounds not used: {ev.values.get('why')}; the threshold is "
                 f"decided from interleaved launches with each setting in the environment, "
                 f"the form advisor emits"),
        remedy="nothing to change on the machine; MPICH releases that apply the threshold "
               "CVAR at run time let the probe pair its rounds inside one launch")]
