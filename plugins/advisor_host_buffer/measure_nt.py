"""The A/B rounds of the glibc non-temporal threshold (part of stage 4, ``memcpy-sweep``):
after the first default sweep found a cliff, rounds of one default and one tuned process, each
sweeping the follow-up sizes, until the advice is stable (issue 25 item 1).

The tuned threshold is chosen again before every tuned process from *every* default process so
far (``cliff.reproduced_threshold``): a size joins the threshold's range only where each fresh
process finds it slow.  The first sweep alone decided it before, and a 64 MiB copy that is slow
in one process and fast in the next made whole probes advise 0x4000000 in 4 of 10 and
0x8000000 in 6 on the 2-core VM.  When the choice moves, the tuned rounds of the earlier
candidate are set aside (named in ``nt.candidates_set_aside``) and the A/B starts again for the
new one: the advice is always the value the tuned processes ran with (issue 25 item 7).

The stability is the lower of two shares of resamples, each against ``STABLE_SHARE``: the A/B
verdict over the rounds of the candidate (``cliff.ab_stability``) and the candidate's choice
over the default processes (``cliff.candidate_stability``).
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Optional

from advisor.libraries.glibc_tunables import list_tunables
from advisor.measure import STABLE_SHARE, compare, noise_floor_from_aa, summarize
from advisor.measure.launch import child_env
from advisor.models import Point, Series
from advisor.probe import MeasureContext

from . import evidence
from .cliff import (Cliff, ab_stability, candidate_stability, choose_nt_threshold,
                    reproduced_cliff)
from .evidence import NT_NOT_REPRODUCED as NOT_REPRODUCED
from .tunables import merged_tunables

#: Most A/B rounds while the advice is unstable, set-aside rounds of an earlier candidate
#: included (a cost cap: a round is two fresh processes sweeping the follow-up sizes, ~1-3 s on
#: the 2-core VM).
NT_MAX_ROUNDS = 6

#: Fewest A/B rounds of one candidate before its stability is judged: ``ab_stability`` resamples
#: rounds, and one round has nothing to resample.
NT_MIN_ROUNDS = 2

NT_TUNABLE = "glibc.cpu.x86_non_temporal_threshold"


def tuned_env(threshold: int, values: dict[str, Any]) -> dict[str, str]:
    """The environment of a tuned process: ``GLIBC_TUNABLES`` with ``NT_TUNABLE`` set to
    ``threshold`` (bytes, written in hex) and the caller's other tunables kept; into ``values``,
    ``nt_threshold.tuned_bytes`` and, when ``ld.so --list-tunables`` reads it back,
    ``nt_threshold.tuned_effective_bytes`` (glibc ignores a value outside its bounds)."""
    env = {"GLIBC_TUNABLES": merged_tunables(os.environ.get("GLIBC_TUNABLES"), NT_TUNABLE,
                                             hex(threshold))}
    values["nt_threshold.tuned_bytes"] = threshold
    values.pop("nt_threshold.tuned_effective_bytes", None)
    eff = list_tunables(child_env(env)).get(NT_TUNABLE)
    if eff is not None and isinstance(eff.value, int):
        values["nt_threshold.tuned_effective_bytes"] = eff.value
    return env


def ab_values(runs: dict[str, list[list[Point]]], values: dict[str, Any],
              current: Optional[int], seed: int) -> list[Series]:
    """The sweep's series (every run of each configuration pooled per size) and, into
    ``values``, the A/A floors of the default runs and the per-size A/B gains (``gain.<n>``
    with CI, floor and ``affected``)."""
    series = []
    pooled: dict[str, dict[int, list[float]]] = {}
    for cfg, rr in runs.items():
        if not rr:
            continue
        by: dict[int, list[float]] = {}
        per_run: dict[int, list[list[float]]] = {}
        for run in rr:
            for p in run:
                by.setdefault(int(p.x), []).extend(p.samples)
                per_run.setdefault(int(p.x), []).append(p.samples)
        pooled[cfg] = by
        series.append(Series(name=cfg, unit=evidence.BPS, x_name="nbytes", x_unit="bytes", points=[
            Point(x=float(n), label=cfg, samples=s, stats=summarize(s, seed=seed),
                  warmup=[w for run in rr for p in run if int(p.x) == n for w in p.warmup])
            for n, s in sorted(by.items())]))
        if cfg == "default" and len(rr) >= 2:
            floors = {n: noise_floor_from_aa(v) for n, v in per_run.items() if len(v) >= 2}
            for n, f in floors.items():
                values[f"aa_noise_floor.{n}"] = f
            # process-level noise of memcpy here: the A/A floor at the sizes both configurations
            # stream (>= glibc's current threshold), which the tuning does not change.  Inside
            # the cliff the default runs scatter because cached stores of out-of-cache copies
            # are erratic: that scatter is the symptom, not measurement noise.
            plateau = sorted(f for n, f in floors.items() if current is not None and n >= current)
            if plateau:
                values["noise_floor"] = plateau[len(plateau) // 2]
    cliff_range = (int(values["cliff.start_bytes"]), int(current)) if (
        "cliff.start_bytes" in values and current is not None and "noise_floor" in values) else None
    if "tuned" in pooled and pooled["tuned"]:
        for n, tuned_s in pooled["tuned"].items():
            d = pooled["default"].get(n)
            if not d:
                continue
            nf = values.get(f"aa_noise_floor.{n}", 0.0)
            if cliff_range and cliff_range[0] <= n < cliff_range[1]:
                nf = values["noise_floor"]
            c = compare(d, tuned_s, higher_is_better=True, noise_floor=nf, seed=seed)
            values[f"gain.{n}"] = c.ratio
            values[f"gain.{n}.ci_low"] = c.ci_low
            values[f"gain.{n}.ci_high"] = c.ci_high
            values[f"gain.{n}.noise_floor"] = nf
            # glibc changes its code path only for copies in [tuned, current): the others run the
            # same stores in both configurations, so their ratio is drift (a control)
            tuned_b = values.get("nt_threshold.tuned_bytes")
            if tuned_b is not None and current is not None:
                values[f"gain.{n}.affected"] = int(tuned_b) <= n < int(current)
    return series


def _per_run(rr: list[list[Point]]) -> dict[int, list[list[float]]]:
    """bytes -> per-run sample lists of one configuration's runs."""
    out: dict[int, list[list[float]]] = {}
    for run in rr:
        for p in run:
            out.setdefault(int(p.x), []).append(list(p.samples))
    return out




def ab_rounds(ctx: MeasureContext, values: dict[str, Any], first: list[Point], cliff: Cliff,
              current: Optional[int], minimum: Optional[int], *,
              run: Callable[[Optional[dict[str, str]], int], list[Point]]
              ) -> tuple[list[Series], Optional[dict[str, str]]]:
    """The A/B after the first default sweep ``first`` (see the module docstring).

    Each round runs a default process, chooses the threshold from every default process so far,
    then runs a tuned one: ``run(env, seed)``, one fresh process sweeping the follow-up sizes
    under ``env`` (None: the inherited environment) -> its points.  The rounds go on while the
    stability is below ``STABLE_SHARE``, up to ``NT_MAX_ROUNDS`` rounds and while one more round
    fits in half the probe's remaining time (the first round always runs).

    :param values: the sweep evidence's values, completed in place: ``gain.*`` and the floors
        (``ab_values``), ``nt_threshold.tuned_bytes``, ``cliff.reproduced_start_bytes`` (the
        smallest size every default process found slow), ``nt.default_processes``,
        ``nt.candidate_stability``, ``nt.ab_stability``, ``nt.stability`` (the lower of the
        two), ``nt.stability_by_round``, ``nt.candidates_set_aside``, ``nt.stopped`` (stable /
        budget / round cap / ``NOT_REPRODUCED``), ``interleave.rounds`` (tuned rounds of the
        advised candidate), ``ab_round_s``.
    :param cliff: the first sweep's cliff (``cliff.find_cliff``); ``values`` holds its
        threshold (``nt_threshold.tuned_bytes``, ``cliff.choose_nt_threshold``).
    :param current: glibc's threshold in effect (bytes), None when unknown.
    :param minimum: the tunable's minimum from ``ld.so --list-tunables`` (``choose_nt_threshold``).
    :return: the sweep's series (every default process; the tuned processes of the advised
        candidate) and the tuned environment (None when nothing was tuned).
    Raises what ``run`` raises.
    """
    floor = float(values.get("noise_floor.within_run", 0.0))
    deadline = time.monotonic() + ctx.remaining_s() / 2
    defaults = [first]
    side: dict[str, list[list[Point]]] = {"default": [], "tuned": []}
    cand = int(values["nt_threshold.tuned_bytes"])
    env = tuned_env(cand, values)
    set_aside: list[int] = []
    history: list[float] = []
    stopped = "too few rounds"
    n = 0

    def points_of(run: list[Point]) -> list:
        return evidence.sweep_points(Series(name="d", unit=evidence.BPS, points=run))

    while True:
        t0 = time.monotonic()
        n += 1
        a = run(None, ctx.seed + 2 * n)
        defaults.append(a)
        procs = [points_of(r) for r in defaults]
        rc = reproduced_cliff(procs, cliff, noise_floor=floor)
        if rc is None:
            stopped = NOT_REPRODUCED
            break
        values["cliff.reproduced_start_bytes"] = rc.start_bytes
        chosen = choose_nt_threshold(rc, minimum=minimum)
        if chosen != cand:
            ctx.progress(f"non-temporal threshold moves to {hex(chosen)}: not every fresh "
                         f"process finds the copies below it slow", None)
            set_aside.append(cand)
            cand, env = chosen, tuned_env(chosen, values)
            side = {"default": [], "tuned": []}
        side["default"].append(a)
        side["tuned"].append(run(env, ctx.seed + 2 * n + 1))
        values["ab_round_s"] = round_s = time.monotonic() - t0
        fits = time.monotonic() + round_s <= deadline
        if len(side["tuned"]) < NT_MIN_ROUNDS:
            if n >= NT_MAX_ROUNDS or not fits:
                stopped = "round cap" if fits else "budget"
                break
            continue
        ab_values({"default": defaults, "tuned": side["tuned"]}, values, current, ctx.seed)
        ab = ab_stability(values, _per_run(side["default"]), _per_run(side["tuned"]),
                          seed=ctx.seed)
        cs = candidate_stability(procs, cliff, noise_floor=floor, minimum=minimum,
                                 seed=ctx.seed)
        got = min(x for x in (ab, cs) if x is not None) if (ab, cs) != (None, None) else None
        values.update({"nt.ab_stability": ab, "nt.candidate_stability": cs})
        if got is None:
            break
        history.append(got)
        if got >= STABLE_SHARE:
            stopped = "stable"
            break
        if n >= NT_MAX_ROUNDS:
            stopped = "round cap"
            break
        if not fits:
            stopped = "budget"
            break
        ctx.progress(f"one more A/B round: stability {got:.2f} < {STABLE_SHARE}", None)
    tuned_runs = side["tuned"] if stopped != NOT_REPRODUCED else []
    if not tuned_runs:  # no A/B of a reproduced candidate: no gains to read
        for k in [k for k in values if k.startswith("gain.")]:
            del values[k]
    series = ab_values({"default": defaults, "tuned": tuned_runs}, values, current, ctx.seed)
    values.update({"interleave.rounds": len(tuned_runs), "nt.stopped": stopped,
                   "nt.default_processes": len(defaults),
                   "nt.candidates_set_aside": ",".join(hex(c) for c in set_aside),
                   "nt.stability_by_round": ",".join(f"{x:.2f}" for x in history)})
    for k in [k for k, v in values.items() if v is None]:
        del values[k]
    if history and stopped != NOT_REPRODUCED:
        values["nt.stability"] = history[-1]
    return series, (env if tuned_runs else None)
