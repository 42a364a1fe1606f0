"""Stage 4 of the host-buffer probe, ``memcpy-sweep``: glibc's memcpy cliff below its
non-temporal threshold, and the A/B of a tuned threshold.

memcpy across sizes in fresh processes (:mod:`advisor_host_buffer.workers.memory`, ``sweep``),
current GLIBC_TUNABLES vs a tuned ``glibc.cpu.x86_non_temporal_threshold`` chosen from the
measured cliff (``cliff.choose_nt_threshold``; only when there is a cliff), runs interleaved
A B A B; per-size comparison with an A/A noise floor.  The follow-up runs after the first sweep
cover only the sizes the tuning affects, one control and the plateau (:func:`followup_sizes`),
and the first sweep's cliff; the threshold is chosen again from every default process, with
more rounds while the advice is unstable (:mod:`advisor_host_buffer.measure_nt`, issue 25
item 1).  ``--quick``
stops after the first sweep: the cliff and the candidate threshold are recorded (value
``ab_skipped``), but no setting is advised from a quick probe, since the A/B needs four fresh
processes (two per setting for the A/A floor) and a quick sweep does not find the same cliff
every time on a noisy VM.  The record goes through ``advisor.measure.relabel`` (first touch into
the destination, placement), never a ceiling: it times the ceiling's own kernel, and its
cache-resident sizes are legitimately faster than a streaming copy.

Sizes: from 1 MiB to 512 MiB (4 MiB-256 MiB with ``--quick``; option ``sweep_mib`` overrides),
never beyond 1/16 of the memory (``MEMORY_FRACTION``), and, when glibc's non-temporal threshold
is known, not beyond the first size at or above it (:func:`plateau_capped`).
"""

from __future__ import annotations

import json
import time
from typing import Any, Optional

from advisor.measure import REL_PRECISION, noise_floor_from_aa, relabel, run_python
from advisor.models import Evidence, Point, Series
from advisor.probe import MeasureContext

from .cliff import choose_nt_threshold, find_cliff
from . import evidence
from .measure_common import MEMORY_FRACTION, WORKER, Budget, MiB, random_buffer_conditions
from .measure_nt import ab_rounds, ab_values, tuned_env

SWEEP_SIZES = [1 << k for k in range(20, 30)]  # 1 MiB .. 512 MiB
QUICK_SWEEP_SIZES = [1 << k for k in range(22, 29)]  # 4 MiB .. 256 MiB


def sweep_run(sizes: list[int], env: Optional[dict[str, str]], quick: bool, seed: int,
               timeout_s: float, passes_out: Optional[dict] = None,
               notes_out: Optional[dict] = None) -> list[Point]:
    """One fresh process sweeping ``sizes`` (bytes) under ``env`` (None: the inherited one);
    the points (bytes/s per size), with the per-pass samples into ``passes_out`` and the
    placement notes into ``notes_out`` when given.  Raises what ``run_python`` raises."""
    req = {"task": "sweep", "sizes_bytes": sizes, "min_samples": 3 if quick else 4,
           "max_time_s": 0.1 if quick else 0.2, "seed": seed, "passes": 2,
           "rel_precision": REL_PRECISION}
    out = run_python(WORKER, [json.dumps(req)], env=env, timeout_s=timeout_s)
    if passes_out is not None:
        passes_out.update(out.get("passes", {}))
    if notes_out is not None:
        notes_out.update(out.get("notes", {}))
    return [Point.model_validate(p) for p in out["points"]]


def plateau_capped(sizes: list[int], current: int) -> list[int]:
    """``sizes`` (bytes) without those above the first one at or above glibc's non-temporal
    threshold ``current``.

    glibc streams every copy at or above the threshold (non-temporal stores,
    sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S): those sizes are all the one plateau
    ``cliff.find_cliff`` compares the cliff with, and the tuning does not change them.  The
    first such size stands for it; a larger one adds nothing the advice reads but its buffer
    fill and copy time (512 MiB was 0.65 s of a 1.9 s default sweep on the 2-core VM, its
    median within 2 % of 256 MiB's, two sweeps).  Unchanged when no size reaches ``current``."""
    srt = sorted(sizes)
    above = [n for n in srt if n >= current]
    if not above:
        return list(sizes)
    return [n for n in sizes if n <= above[0]]


def followup_sizes(sizes: list[int], tuned: int, current: Optional[int]) -> list[int]:
    """Sizes (bytes) of the tuned-vs-default follow-up sweeps, out of the first sweep's ``sizes``.

    glibc's memmove switches to non-temporal stores at ``x86_non_temporal_threshold``
    (sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S), so moving the threshold from
    ``current`` down to ``tuned`` changes the code path only for copies in ``[tuned, current)``;
    every other size runs the same stores in both configurations.  The follow-ups keep those
    sizes (the comparison the advice rests on, ``gain.<n>.affected``), the largest size below
    them (a control: its ratio is drift) and the first size at or above ``current`` (the
    plateau, whose A/A repeats give ``noise_floor``).  The rest (the small, cache-resident
    copies and the largest buffers, which dominate fill and copy time) were measured once in the
    first sweep, which is what the cliff is found on.  All of ``sizes`` when ``current`` is
    unknown (no affected range to name)."""
    if current is None:
        return list(sizes)
    srt = sorted(sizes)
    keep = {n for n in srt if tuned <= n < current}
    below = [n for n in srt if n < tuned]
    above = [n for n in srt if n >= current]
    if below:
        keep.add(below[-1])
    if above:
        keep.add(above[0])
    return [n for n in sizes if n in keep]


def within_run_floor(passes: dict) -> Optional[float]:
    """Median over sizes of the A/A noise floor between the passes of one sweep process
    (``noise_floor_from_aa`` of each size's per-pass samples); None without two passes."""
    floors = sorted(noise_floor_from_aa(v) for v in passes.values()
                    if len(v) >= 2 and all(len(r) for r in v))
    return floors[len(floors) // 2] if floors else None




def memcpy_sweep(ctx: MeasureContext, tun: Evidence, budget: Budget) -> Optional[Evidence]:
    """Stage 4 (see module docstring).  Returns None when not even one sweep fits."""
    opt = ctx.options.get("sweep_mib")
    sizes = ([int(float(v) * MiB) for v in opt.split(",") if v.strip()] if opt
             else list(QUICK_SWEEP_SIZES if ctx.quick else SWEEP_SIZES))
    total = ctx.facts.memory.total_bytes
    if total:
        sizes = [s for s in sizes if 2 * s <= total // MEMORY_FRACTION]
    current = tun.values.get("glibc.cpu.x86_non_temporal_threshold.value")
    # a threshold glibc lists below a page or above the memory is not one this machine can
    # have: flagged (value nt_threshold.implausible, a finding in recommend) and not used
    bad_nt = evidence.implausible_nt(tun, ctx.facts)
    if bad_nt:
        current = None
    if not opt and current is not None:
        sizes = plateau_capped(sizes, int(current))
    timeout = max(5.0, min(120.0, ctx.remaining_s()))
    t0 = time.monotonic()
    passes: dict = {}
    placement: dict = {}
    runs = {"default": [sweep_run(sizes, None, ctx.quick, ctx.seed, timeout, passes, placement)]}
    one_run_s = time.monotonic() - t0
    first = runs["default"][0]
    values: dict[str, Any] = {"sweep_run_s": one_run_s}
    if bad_nt:
        values["nt_threshold.implausible"] = bad_nt
    floor = within_run_floor(passes)
    if floor is not None:
        values["noise_floor.within_run"] = floor
    if current is not None:
        values["nt_threshold.default_bytes"] = current
    cliff = find_cliff(evidence.sweep_points(Series(name="d", unit=evidence.BPS, points=first)),
                         noise_floor=floor or 0.0,
                         threshold_bytes=int(current) if current is not None else None)
    env_tuned = None
    if cliff is not None and tun.values.get("list_tunables_available") and current is None:
        values["nt_threshold.unsupported"] = True  # this glibc/arch lists no such tunable
        cliff = None
    minimum = tun.values.get("glibc.cpu.x86_non_temporal_threshold.min")
    if cliff is not None:
        values.update({"cliff.start_bytes": cliff.start_bytes, "cliff.end_bytes": cliff.end_bytes,
                       "cliff.depth": cliff.depth})
        values["nt_threshold.tuned_bytes"] = choose_nt_threshold(cliff, minimum=minimum)
    if cliff is not None and ctx.quick:
        values["ab_skipped"] = "quick"  # detection only: the A/B is the full probe's
        env_tuned = tuned_env(int(values["nt_threshold.tuned_bytes"]), values)
        series = ab_values(runs, values, current, ctx.seed)
    elif cliff is not None:
        # A B A B in fresh processes after the first A (measure_nt.ab_rounds): the sizes the
        # tuning can change, one control and the plateau (followup_sizes), and the whole cliff
        # with the size below it, so every default process can say where its own cliff starts
        tuned = int(values["nt_threshold.tuned_bytes"])
        follow = set(followup_sizes(sizes, tuned, int(current) if current is not None else None))
        follow |= {n for n in sizes if cliff.start_bytes <= n <= cliff.end_bytes}
        if cliff.last_fast_bytes in sizes:
            follow.add(cliff.last_fast_bytes)
        follow_l = sorted(follow)
        values["followup_bytes"] = ",".join(str(n) for n in follow_l)
        series, env_tuned = ab_rounds(
            ctx, values, first, cliff, int(current) if current is not None else None,
            int(minimum) if minimum is not None else None,
            run=lambda env, seed: sweep_run(follow_l, env, False, seed, timeout))
    else:
        series = ab_values(runs, values, current, ctx.seed)
    # the harness' artefact rules on what this sweep recorded (first_touch_artefact on the
    # destination's fill, the placement's distance): a labelled point keeps no bandwidth.  No
    # ceiling check here: the sweep times the ceiling's own kernel (numpy.copyto between
    # touched, placed buffers), and its small copies run from cache, legitimately above a
    # memory-streaming ceiling
    return relabel(Evidence(
        id=evidence.EV_SWEEP,
        description="memcpy (numpy.copyto, random-filled 64 B-aligned buffers) across sizes, "
                    "one fresh process per run: current GLIBC_TUNABLES ('default')" + (
                        " vs a tuned glibc.cpu.x86_non_temporal_threshold ('tuned'), interleaved"
                        if any(x.name == "tuned" for x in series) else
                        " only (no A/B: " + (values.get("nt.stopped") or values.get("ab_skipped")
                                             or "no cliff") + ")"),
        series=series,
        conditions=random_buffer_conditions(ctx, {
            **placement, **({"tuned_env": env_tuned["GLIBC_TUNABLES"]} if env_tuned else {})}),
        values=values,
    ))



def headline_sweep(ctx: MeasureContext, recorded: list[Evidence]) -> list[Evidence]:
    """The probe's ``measure_headline`` (``advisor check``, ``advisor.specs.headline``): the
    memcpy headline measured again, briefly, the way the recorded sweep measured it.

    One fresh process (:func:`sweep_run`: the same worker, random-filled buffer pair, placement
    and two passes as a probe's sweep; ``ctx.quick`` chooses the per-visit sampling, as for the
    sweep: ``advisor check`` asks for the quick one, 3 copies per visit, that a ``--quick``
    fleet probe also takes) copies only the largest size of the recorded ``default`` series
    (``recorded``: the class profile's ``memcpy-sweep``), the size the headline is read at.  The other sizes are left out: the worker fills one buffer pair
    of the largest size and visits each size in turn, and a copy of a size far beyond the
    last-level cache streams from memory whatever was copied before it, so the largest size's
    bandwidth is the same alone.  Returns ``[]`` without a recorded sweep, or when that size no
    longer fits this node's memory (``MEMORY_FRACTION``, as the sweep)."""
    ev = Evidence.find(recorded, evidence.EV_SWEEP)
    series = ev.series_named("default") if ev is not None else None
    xs = [p.x for p in series.points if p.x is not None and not p.artefact] if series else []
    total = ctx.facts.memory.total_bytes
    if not xs or (total and 2 * max(xs) > total // MEMORY_FRACTION):
        return []
    size = int(max(xs))
    timeout = max(1.0, ctx.remaining_s())
    placement: dict = {}
    points = sweep_run([size], None, ctx.quick, ctx.seed, timeout, notes_out=placement)
    return [relabel(Evidence(
        id=evidence.EV_SWEEP,
        description="memcpy (numpy.copyto, random-filled 64 B-aligned buffers) at the recorded "
                    "sweep's largest size only, one fresh process, current GLIBC_TUNABLES",
        series=[Series(name="default", unit=evidence.BPS, x_name="nbytes", x_unit="bytes",
                       points=[p.model_copy(update={"label": "default"}) for p in points])],
        conditions=random_buffer_conditions(ctx, placement),
        values={"headline_only": True}))]
