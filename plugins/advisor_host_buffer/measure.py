"""Measurements of the host-buffer probe, all through ``advisor.measure``.

Stages, each skipped (and recorded as skipped) when the budget left is short:

1. ``zero-page-memcpy``: copy bandwidth of one large buffer from untouched (base pages and
   MADV_HUGEPAGE: the 4 KiB and the huge zero page), zero-filled and random-filled sources, the
   inflation untouched/random with its bootstrap CI; the random point is this run's copy ceiling.
   Untouched points are stored with their label and no bandwidth, the zeros point is judged
   against the ceiling (``checked_point``), and the random copy is timed again into a view of
   its destination 0 mod 4 KiB away, A B A B, judged by ``aliasing_artefact``
   (:mod:`advisor_host_buffer.aliasing`).
2. ``first-touch``: allocate + first touch + free of a buffer with MADV_NOHUGEPAGE vs
   MADV_HUGEPAGE; page-fault cost per GiB (first use minus a plain rewrite) and the speed-up.
3. ``zero-page-opencl``: OpenCL transfers (see :mod:`advisor_host_buffer.ocl`); on a CUDA
   machine with CuPy also ``zero-page-cuda`` (see :mod:`advisor_host_buffer.gpu`).
4. ``memcpy-sweep``: memcpy across sizes in fresh processes, current GLIBC_TUNABLES vs a tuned
   ``glibc.cpu.x86_non_temporal_threshold`` chosen from the measured cliff (only when there is a
   cliff), runs interleaved A B A B; per-size comparison with an A/A noise floor.  The
   follow-up runs after the first sweep cover only the sizes the tuning affects, one control
   and the plateau (``followup_sizes``).  ``--quick`` stops after the first sweep: the cliff
   and the candidate threshold are recorded (value ``ab_skipped``), but no setting is advised
   from a quick probe, since the A/B needs four fresh processes (two per setting for the A/A
   floor) and a quick sweep does not find the same cliff every time on a noisy VM.  The record
   goes through ``advisor.measure.relabel`` (first touch into the destination, placement),
   never a ceiling: it times the ceiling's own kernel, and its cache-resident sizes are
   legitimately faster than a streaming copy.
5. ``malloc-hugetlb``: first touch of malloc'ed memory with and without
   ``glibc.malloc.hugetlb=1`` (THP madvise mode and glibc >= 2.35 only), fresh processes.
6. ``numa-placement``: with more than one NUMA node, first touch on node 0, copy from each node;
   each copy judged against the ceiling and by where its destination landed (``relabel``).
7. ``reference-bandwidth``: (value, lower, upper, unit) of this machine for ``advisor verify``.

Options (``--option key=value``): ``nbytes`` (bytes of the single-size stages),
``sweep_mib`` (comma-separated sweep sizes in MiB).

Faults (which copies run in the advisor's own process, and why that is safe):

- in a child (``run_python`` -> :mod:`advisor_host_buffer.workers.memory`): the memcpy sweep, glibc
  ``malloc`` + ``memset`` through ctypes (raw pointers), NUMA placement (both nodes' copies in
  one child);
- in-process, stages 1 and 2: ``numpy.copyto`` and numpy slice writes between ``host_buffer``
  arrays.  These cannot fault: numpy checks shapes before it copies (no access outside the
  arrays), every array is a private anonymous mapping this process owns for the whole copy,
  and touched buffers were verified resident (pagemap) before timing.  The page faults they
  take are ordinary demand faults served by the kernel; memory exhaustion (the OOM killer)
  would end a child just the same and is bounded by ``MEMORY_FRACTION``;
- in-process, stage 3 (OpenCL / CuPy transfers): driver copies from the same harness arrays,
  sized by numpy; they do not fault unless the driver is broken.  Not yet moved to a worker
  (a broken driver would take the probe run down; the runner records the probe as failed only
  if Python survives): see docs/internals.md.

Sizes: the default buffer is 256 MiB, the size of the issue's measurements; the sweep
goes from 1 MiB to 512 MiB (4 MiB-256 MiB with ``--quick``), never beyond 1/16 of the memory,
and, when glibc's non-temporal threshold is known, not beyond the first size at or above it
(``plateau_capped``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, Optional

from advisor.measure import (
    CEILING_PEAK_KEY,
    REL_PRECISION,
    Ceiling,
    artefact_point,
    checked_point,
    buffer_conditions,
    compare,
    conditions,
    host_buffer,
    interleave,
    noise_floor_from_aa,
    placed_pair,
    placed_pair_with_control,
    relabel,
    remember_ceiling,
    run_python,
    sample,
    shared_ceiling,
    summarize,
)
from advisor.libraries.glibc_tunables import list_tunables
from advisor.measure.launch import child_env
from advisor.models import Evidence, Facts, Point, Series
from advisor.probe import Applicability, MeasureContext

from . import aliasing as AL
from . import cliff as CL
from . import evidence as E
from . import thp as THP
from . import zero_page as ZP
from .workers import MEMORY

MiB = 1 << 20
GiB = 1 << 30
#: the size of the issue's numpy and PoCL measurements (256 MiB)
DEFAULT_NBYTES = 256 * MiB
#: --quick: half of it (still above the non-temporal threshold glibc picks on the build machine)
QUICK_NBYTES = 128 * MiB
SWEEP_SIZES = [1 << k for k in range(20, 30)]  # 1 MiB .. 512 MiB
QUICK_SWEEP_SIZES = [1 << k for k in range(22, 29)]  # 4 MiB .. 256 MiB
#: Seconds this probe aims to spend (the project's budget for it on a 2-core machine: 30-60 s
#: by default, 10-15 s with --quick); the runner's deadline wins when it is earlier.
TARGET_S = {"default": 50.0, "quick": 13.0}
#: the sweep's largest buffers (two of them) stay below this fraction of physical memory
MEMORY_FRACTION = 16

WORKER = MEMORY


# --------------------------------------------------------------------------- tunables


def tunables_evidence() -> Evidence:
    """``glibc-tunables`` evidence: the current value, min and max of the tunables this plugin
    may advise (bytes or plain numbers), and the inherited GLIBC_TUNABLES value."""
    t = list_tunables()
    values: dict[str, Any] = {}
    for name in ("glibc.cpu.x86_non_temporal_threshold", "glibc.cpu.x86_shared_cache_size",
                 "glibc.malloc.hugetlb"):
        tun = t.get(name)
        for k in ("value", "min", "max"):
            v = getattr(tun, k, None)
            if isinstance(v, int):
                values[f"{name}.{k}"] = v
    if os.environ.get("GLIBC_TUNABLES"):
        values["GLIBC_TUNABLES"] = os.environ["GLIBC_TUNABLES"]
    values["list_tunables_available"] = bool(t)
    return Evidence(id=E.EV_TUNABLES, description="glibc tunables in effect (ld.so --list-tunables)",
                    values=values)


def merged_tunables(existing: Optional[str], item: str, value: str) -> str:
    """``existing`` GLIBC_TUNABLES with ``item=value`` set (replacing an earlier ``item``)."""
    parts = [p for p in (existing or "").split(":") if p and p.split("=", 1)[0] != item]
    return ":".join(parts + [f"{item}={value}"])


# --------------------------------------------------------------------------- helpers


class Budget:
    """Deadline bookkeeping: ``ok(est_s)`` says whether a stage estimated at ``est_s`` seconds
    still fits before ``ctx.deadline``."""

    def __init__(self, ctx: MeasureContext):
        self.ctx = ctx
        self.skipped: list[str] = []

    def ok(self, stage: str, est_s: float) -> bool:
        if self.ctx.remaining_s() >= est_s:
            return True
        self.skipped.append(stage)
        return False


def _sampler(ctx: MeasureContext, quick: bool) -> Callable[[Callable[[], Any]], Any]:
    """``sample`` with this probe's minimum count and time cap, stopping early once the median's
    95 % interval is within ``REL_PRECISION`` (5 %, Jain 1991 section 13.9) of the median."""
    return lambda fn: sample(fn, min_samples=5 if quick else 7,
                             max_time_s=0.15 if quick else 0.6, deadline=ctx.deadline,
                             rel_precision=REL_PRECISION)


def _thp(facts: Facts) -> Optional[str]:
    from advisor.measure import thp_mode

    return THP.thp_mode(facts.memory.thp_enabled) or thp_mode()


def _pmd_bytes(facts: Facts) -> int:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        sizes = [h for h in facts.memory.huge_page_sizes_bytes if h]
        return min(sizes) if sizes else 2 * MiB


# --------------------------------------------------------------------------- stages


def zero_page_memcpy(ctx: MeasureContext, nbytes: int) -> Evidence:
    """Stage 1 (see module docstring)."""
    import numpy as np

    smp = _sampler(ctx, ctx.quick)
    points: list[Point] = []
    conds = {}
    notes = {}
    control: dict[str, Any] = {}
    for label, fill, huge in ((E.UNTOUCHED, "untouched", False), ("untouched-huge", "untouched", True),
                              (E.ZEROS, "zeros", None), (E.RANDOM, "random", None)):
        # a fresh placed pair per source: the destination is random-filled (touched) before
        # timing and never a power of two from the source (no 4K aliasing); see placed_pair
        if label == E.RANDOM:  # plus the aliasing control (a view of the same destination)
            src, dst, aliased, notes[label] = placed_pair_with_control(nbytes, seed=ctx.seed)
        else:
            src, dst, notes[label] = placed_pair(nbytes, src_fill=fill, dst_fill="random",
                                                 src_hugepages=huge, seed=ctx.seed)
        conds[label] = buffer_conditions(src)
        points.append(smp(lambda src=src, dst=dst: np.copyto(dst, src)).to_point(
            x=float(nbytes), label=label, per_call_bytes=nbytes, seed=ctx.seed))
        if label == E.RANDOM:
            control = AL.measure_control(smp, src, dst, aliased, points[-1].samples, nbytes,
                                         ctx.seed)
            del aliased
        del src, dst
    by = {p.label: p for p in points}
    ceiling = by[E.RANDOM].stats
    # the random-source copy is the ceiling's own kernel (numpy.copyto between a random-filled,
    # touched placed_pair of nbytes): later stages and probes of this run reuse it
    remember_ceiling(Ceiling(ceiling, notes[E.RANDOM]), nbytes=nbytes,
                     source=f"host-buffer {E.EV_ZERO_MEMCPY}")
    values: dict[str, Any] = {"nbytes": nbytes}
    for label in (E.UNTOUCHED, "untouched-huge", E.ZEROS):
        c = compare(by[E.RANDOM].samples, by[label].samples, higher_is_better=True, seed=ctx.seed)
        key = "copy" if label == E.UNTOUCHED else f"copy.{label}"
        values[f"{key}.inflation"] = c.ratio
        values[f"{key}.inflation_ci_low"] = c.ci_low
        values[f"{key}.inflation_ci_high"] = c.ci_high
    values["ceiling_bytes_per_s"] = ceiling.median
    values[CEILING_PEAK_KEY] = ceiling.max
    values.update(control)
    # untouched sources read the zero page: stored with the label and no bandwidth (their
    # inflation is recorded above); a zero-filled source is judged against the ceiling
    pts = []
    for p in points:
        if p.label.startswith(E.UNTOUCHED):
            p = artefact_point(p, E.ZERO_PAGE_ARTEFACT)
        elif p.label != E.RANDOM:
            p = checked_point(p, ceiling)
        pts.append(p)
    ev = Evidence(
        id=E.EV_ZERO_MEMCPY,
        description="numpy.copyto of one buffer from untouched / zero-filled / random-filled "
                    "sources into a random-filled destination",
        series=[Series(name="copy", unit=E.BPS, x_name="nbytes", x_unit="bytes", points=pts)],
        conditions=conditions(**{k: v for k, v in conds[E.RANDOM].items() if k != "notes"},
                              thp_enabled=_thp(ctx.facts),
                              notes={**conds[E.RANDOM].get("notes", {}), **notes[E.RANDOM], **{
                                  f"{label}.placement_near_power_of_two":
                                      n["placement_near_power_of_two"]
                                  for label, n in notes.items() if label != E.RANDOM}}),
        values=values,
    )
    return ev


def first_touch(ctx: MeasureContext, nbytes: int) -> Evidence:
    """Stage 2: first use (mmap + madvise + first write of every page + free) per page policy."""
    pmd = _pmd_bytes(ctx.facts)
    quick = ctx.quick
    kw = dict(min_samples=4 if quick else 6, max_time_s=0.4 if quick else 1.0, deadline=ctx.deadline,
              rel_precision=REL_PRECISION)
    res = {}
    for label, huge in (("base", False), ("huge", True)):
        res[label] = sample(lambda: host_buffer(nbytes, fill="zeros", hugepages=huge, align=pmd), **kw)
    resident = host_buffer(nbytes, fill="zeros", align=pmd)
    rewrite = sample(lambda: resident.fill(0), **kw)
    gib = nbytes / GiB
    w = summarize(rewrite.samples).median
    values: dict[str, Any] = {"nbytes": nbytes, "huge_page_bytes": pmd, "rewrite_s": w}
    for label in ("base", "huge"):
        m = summarize(res[label].samples).median
        values[f"first_use_s.{label}"] = m
        values[f"fault_s_per_gib.{label}"] = max(m - w, 0.0) / gib
    c = compare(res["base"].samples, res["huge"].samples, higher_is_better=False, seed=ctx.seed)
    values["huge_speedup"] = c.ratio
    values["huge_speedup.ci_low"] = c.ci_low
    values["huge_speedup.ci_high"] = c.ci_high
    series = Series(name="first-use", unit="s", x_name="nbytes", x_unit="bytes", points=[
        res[label].to_point(x=float(nbytes), label=label, seed=ctx.seed) for label in ("base", "huge")
    ] + [rewrite.to_point(x=float(nbytes), label="rewrite", seed=ctx.seed)])
    return Evidence(
        id=E.EV_FIRST_TOUCH,
        description="first use of a fresh buffer (mmap, madvise, write every page, munmap) with "
                    "MADV_NOHUGEPAGE (base) vs MADV_HUGEPAGE (huge); rewrite = the same write "
                    "on resident pages; fault cost = first use - rewrite",
        series=[series],
        conditions=conditions(thp_enabled=_thp(ctx.facts), buffer_kind="pageable",
                              buffer_fill="zeros", align_bytes=pmd),
        values=values,
    )


def _ceiling(ctx: MeasureContext, nbytes: int, stage: str) -> Ceiling:
    """This run's copy ceiling at ``nbytes``: the zero-page stage's random-source copy when it
    ran (``shared_ceiling`` then returns it, noted ``ceiling_shared_with``), else measured now."""
    return shared_ceiling(nbytes, source=f"host-buffer {stage}", min_samples=5, max_time_s=0.3,
                          deadline=ctx.deadline, seed=ctx.seed)


def _ceiling_notes(ceil: Ceiling) -> dict[str, Any]:
    """``Conditions.notes`` fields telling where the ceiling came from."""
    out: dict[str, Any] = {}
    if "ceiling_shared_with" in ceil.notes:
        out["ceiling_shared_with"] = ceil.notes["ceiling_shared_with"]
    return out


def opencl(ctx: MeasureContext, nbytes: int) -> Evidence:
    """Stage 3: OpenCL transfers, labelled against this run's copy ceiling."""
    from .ocl import measure_opencl

    series, info = measure_opencl(nbytes, _sampler(ctx, ctx.quick), seed=ctx.seed)
    ceil = _ceiling(ctx, nbytes, "zero-page-opencl")
    ceiling = ceil.stats
    h2d = (Evidence(id="x", series=series)).series_named("h2d")
    u, r = (h2d).point(E.UNTOUCHED), (h2d).point(E.RANDOM)
    values: dict[str, Any] = {"nbytes": nbytes, **info, "ceiling_bytes_per_s": ceiling.median,
                              CEILING_PEAK_KEY: ceiling.max}
    c = compare(r.samples, u.samples, higher_is_better=True, seed=ctx.seed)
    values.update({"h2d.inflation": c.ratio, "h2d.inflation_ci_low": c.ci_low,
                   "h2d.inflation_ci_high": c.ci_high})
    ev = Evidence(
        id=E.EV_ZERO_OPENCL,
        description="OpenCL enqueue_copy (blocking) host-to-device and device-to-host from "
                    "untouched / random-filled pageable and pinned (ALLOC_HOST_PTR) host memory; "
                    "'mapped' = map+unmap of a device buffer (zero-copy)",
        series=series,
        conditions=conditions(thp_enabled=_thp(ctx.facts), buffer_kind="pageable",
                              buffer_fill="random", align_bytes=64,
                              notes={"opencl_platform": info["platform"],
                                     "opencl_device": info["device"], **_ceiling_notes(ceil)}),
        values=values,
    )
    return ZP.label_artefacts(ev, ceiling)


def cuda(ctx: MeasureContext, nbytes: int) -> Evidence:
    """Stage 3b: CuPy transfers on a CUDA device, labelled against this run's copy ceiling."""
    from .gpu import measure_cupy

    series, info = measure_cupy(nbytes, _sampler(ctx, ctx.quick), seed=ctx.seed)
    ceil = _ceiling(ctx, nbytes, "zero-page-cuda")
    ceiling = ceil.stats
    h2d = series[0]
    u, r = (h2d).point(E.UNTOUCHED), (h2d).point(E.RANDOM)
    c = compare(r.samples, u.samples, higher_is_better=True, seed=ctx.seed)
    ev = Evidence(
        id=E.EV_ZERO_CUDA,
        description="CuPy ndarray.set / get (synchronised) from untouched / random-filled "
                    "pageable and pinned (cudaHostAlloc) host memory",
        series=series,
        conditions=conditions(thp_enabled=_thp(ctx.facts), buffer_kind="pageable",
                              buffer_fill="random", align_bytes=64,
                              notes={"cuda_device": info["device"], **_ceiling_notes(ceil)}),
        values={"nbytes": nbytes, **info, "ceiling_bytes_per_s": ceiling.median,
                CEILING_PEAK_KEY: ceiling.max, "h2d.inflation": c.ratio,
                "h2d.inflation_ci_low": c.ci_low,
                "h2d.inflation_ci_high": c.ci_high},
    )
    return ZP.label_artefacts(ev, ceiling)


def _sweep_run(sizes: list[int], env: Optional[dict[str, str]], quick: bool, seed: int,
               timeout_s: float, passes_out: Optional[dict] = None,
               notes_out: Optional[dict] = None) -> list[Point]:
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


#: Most A/B rounds of the non-temporal threshold while its verdict is unstable (a cost cap: a
#: round is two fresh processes sweeping the affected sizes, ~1-3 s on the 2-core VM).
NT_MAX_ROUNDS = 6


def within_run_floor(passes: dict) -> Optional[float]:
    """Median over sizes of the A/A noise floor between the passes of one sweep process
    (``noise_floor_from_aa`` of each size's per-pass samples); None without two passes."""
    floors = sorted(noise_floor_from_aa(v) for v in passes.values()
                    if len(v) >= 2 and all(len(r) for r in v))
    return floors[len(floors) // 2] if floors else None


def _ab_values(runs: dict[str, list[list[Point]]], values: dict[str, Any],
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
        series.append(Series(name=cfg, unit=E.BPS, x_name="nbytes", x_unit="bytes", points=[
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


def _until_stable(runs: dict[str, list[list[Point]]], values: dict[str, Any],
                  current: Optional[int], ctx: MeasureContext,
                  run_one: Callable[[str, int], list[float]], deadline: float) -> list[Series]:
    """Sequential A/B (issue 25 item 1): while the "helps" verdict's stability over resamples
    of the rounds (``cliff.ab_stability``) is below ``STABLE_SHARE``, one more round (default,
    then tuned) while it fits before ``deadline`` and fewer than ``NT_MAX_ROUNDS`` ran.  Values
    ``nt.stability``, ``nt.stability_by_round``, ``nt.stopped`` (stable / budget / round cap /
    too few rounds) and ``interleave.rounds``; returns the series of every round."""
    from advisor.measure import STABLE_SHARE

    series = _ab_values(runs, values, current, ctx.seed)
    history: list[float] = []
    while True:
        rounds = min(len(runs["default"]), len(runs["tuned"]))
        got = CL.ab_stability(values, _per_run(runs["default"]), _per_run(runs["tuned"]),
                              seed=ctx.seed)
        if got is None:
            stopped = "too few rounds"
            break
        history.append(got)
        if got >= STABLE_SHARE:
            stopped = "stable"
            break
        if rounds >= NT_MAX_ROUNDS:
            stopped = "round cap"
            break
        t0 = time.monotonic()
        if t0 + values.get("ab_round_s", 0.0) > deadline:
            stopped = "budget"
            break
        ctx.progress(f"one more A/B round: stability {got:.2f} < {STABLE_SHARE}", None)
        run_one("default", rounds)
        run_one("tuned", rounds)
        values["ab_round_s"] = time.monotonic() - t0
        series = _ab_values(runs, values, current, ctx.seed)
    values.update({"interleave.rounds": min(len(runs["default"]), len(runs["tuned"])),
                   "nt.stopped": stopped,
                   "nt.stability_by_round": ",".join(f"{x:.2f}" for x in history)})
    if history:
        values["nt.stability"] = history[-1]
    return series


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
    bad_nt = E.implausible_nt(tun, ctx.facts)
    if bad_nt:
        current = None
    if not opt and current is not None:
        sizes = plateau_capped(sizes, int(current))
    timeout = max(5.0, min(120.0, ctx.remaining_s()))
    t0 = time.monotonic()
    passes: dict = {}
    placement: dict = {}
    runs = {"default": [_sweep_run(sizes, None, ctx.quick, ctx.seed, timeout, passes, placement)]}
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
    cliff = CL.find_cliff(E.sweep_points(Series(name="d", unit=E.BPS, points=first)),
                         noise_floor=floor or 0.0,
                         threshold_bytes=int(current) if current is not None else None)
    env_tuned = None
    if cliff is not None and tun.values.get("list_tunables_available") and current is None:
        values["nt_threshold.unsupported"] = True  # this glibc/arch lists no such tunable
        cliff = None
    if cliff is not None:
        values.update({"cliff.start_bytes": cliff.start_bytes, "cliff.end_bytes": cliff.end_bytes,
                       "cliff.depth": cliff.depth})
        tuned = CL.choose_nt_threshold(
            cliff, minimum=tun.values.get("glibc.cpu.x86_non_temporal_threshold.min"))
        values["nt_threshold.tuned_bytes"] = tuned
        env_tuned = {"GLIBC_TUNABLES": merged_tunables(
            os.environ.get("GLIBC_TUNABLES"), "glibc.cpu.x86_non_temporal_threshold", hex(tuned))}
        eff = list_tunables(child_env(env_tuned)).get("glibc.cpu.x86_non_temporal_threshold")
        if eff is not None and isinstance(eff.value, int):
            values["nt_threshold.tuned_effective_bytes"] = eff.value
    if cliff is not None and ctx.quick:
        values["ab_skipped"] = "quick"  # detection only: the A/B is the full probe's
    elif cliff is not None:
        # A B A B in fresh processes (the first A is the run above), extra rounds while the
        # repeats disagree at the cliff start; the sweep may use half of what is left
        key = cliff.start_bytes
        side: dict[str, list[list[Point]]] = {"default": [], "tuned": []}
        # only the sizes the tuning can change, one control and the plateau (followup_sizes)
        follow = followup_sizes(sizes, tuned, int(current) if current is not None else None)
        if key not in follow:  # a tuned value above the cliff start (glibc's minimum raised it)
            follow = sorted({*follow, key})
        values["followup_bytes"] = ",".join(str(n) for n in follow)

        def run_one(cfg: str, rnd: int) -> list[float]:
            if cfg == "default" and rnd == 0:
                pts = first
            else:
                pts = _sweep_run(follow, env_tuned if cfg == "tuned" else None, ctx.quick,
                                 ctx.seed + 2 * rnd + (cfg == "tuned"), timeout)
            side[cfg].append(pts)
            return next(p.samples for p in pts if int(p.x) == key)

        t_ab = time.monotonic()
        deadline_ab = t_ab + ctx.remaining_s() / 2
        il = interleave(["default", "tuned"], run_one, repeats=2, deadline=deadline_ab,
                        max_extra_rounds=0 if ctx.quick else 1)
        runs = side
        # a later round's seconds: the interleaved rounds' mean, the first default's whole
        # sweep not counted (it is reused, not rerun)
        values["ab_round_s"] = (time.monotonic() - t_ab) / max(1, il.rounds)
        values.update({"interleave.rounds": il.rounds, "interleave.extra_rounds": il.extra_rounds,
                       "interleave.truncated": il.truncated,
                       "interleave.disagreement.default": il.disagreement["default"],
                       "interleave.disagreement.tuned": il.disagreement["tuned"]})
    if runs.get("tuned"):
        series = _until_stable(runs, values, current, ctx, run_one, deadline_ab)
    else:
        series = _ab_values(runs, values, current, ctx.seed)
    # the harness' artefact rules on what this sweep recorded (first_touch_artefact on the
    # destination's fill, the placement's distance): a labelled point keeps no bandwidth.  No
    # ceiling check here: the sweep times the ceiling's own kernel (numpy.copyto between
    # touched, placed buffers), and its small copies run from cache, legitimately above a
    # memory-streaming ceiling
    return relabel(Evidence(
        id=E.EV_SWEEP,
        description="memcpy (numpy.copyto, random-filled 64 B-aligned buffers) across sizes, "
                    "one fresh process per run: current GLIBC_TUNABLES ('default') vs a tuned "
                    "glibc.cpu.x86_non_temporal_threshold ('tuned'), interleaved",
        series=series,
        conditions=conditions(thp_enabled=_thp(ctx.facts), buffer_kind="pageable",
                              buffer_fill="random", align_bytes=64,
                              notes={**placement, **({"tuned_env": env_tuned["GLIBC_TUNABLES"]}
                                                     if env_tuned else {})}),
        values=values,
    ))


def malloc_hugetlb(ctx: MeasureContext, budget: Budget) -> Optional[Evidence]:
    """Stage 5: glibc malloc first touch, default vs glibc.malloc.hugetlb=1 (A B A B).

    The block is ``DEFAULT_NBYTES`` (``QUICK_NBYTES`` with ``quick``, like the other
    single-size stages): both are far above glibc's largest dynamic mmap threshold (32 MiB,
    ``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit, mallopt(3)), so malloc takes the mmap path the
    tunable changes either way, and the quick size halves each round's page faults."""
    nbytes = QUICK_NBYTES if ctx.quick else DEFAULT_NBYTES
    repeats = 4 if ctx.quick else 6
    env_b = {"GLIBC_TUNABLES": merged_tunables(os.environ.get("GLIBC_TUNABLES"),
                                               "glibc.malloc.hugetlb", "1")}
    req = json.dumps({"task": "malloc_touch", "nbytes": nbytes, "repeats": repeats})
    runs: dict[str, list[list[float]]] = {"default": [], "hugetlb": []}
    order = ["default", "hugetlb", "default"] + ([] if ctx.quick else ["hugetlb"])
    for k, cfg in enumerate(order):
        if not budget.ok(f"malloc-hugetlb run {k + 1}", 3.0):
            break
        out = run_python(WORKER, [req], env=env_b if cfg == "hugetlb" else None,
                         timeout_s=max(5.0, min(60.0, ctx.remaining_s())))
        # the first round of a fresh process also pays for the process's first mmaps: warm-up
        runs[cfg].append(out["samples"][1:])
    if not runs["default"] or not runs["hugetlb"]:
        return None
    a = [s for r in runs["default"] for s in r]
    b = [s for r in runs["hugetlb"] for s in r]
    nf = noise_floor_from_aa(runs["default"]) if len(runs["default"]) >= 2 else 0.0
    c = compare(a, b, higher_is_better=False, noise_floor=nf, seed=ctx.seed)
    return Evidence(
        id=E.EV_MALLOC_HUGETLB,
        description="glibc malloc + memset(1) + free of one large block in fresh processes, "
                    "current GLIBC_TUNABLES vs glibc.malloc.hugetlb=1 added",
        series=[Series(name=cfg, unit="s", x_name="nbytes", x_unit="bytes",
                       points=[Point(x=float(nbytes), label=cfg, samples=s,
                                     stats=summarize(s, seed=ctx.seed))])
                for cfg, s in (("default", a), ("hugetlb", b))],
        conditions=conditions(thp_enabled=_thp(ctx.facts), env=env_b,
                              notes={"compared_against": "inherited environment"}),
        values={"nbytes": nbytes, "speedup": c.ratio, "speedup.ci_low": c.ci_low,
                "speedup.ci_high": c.ci_high, "noise_floor_aa": nf, "verdict": c.verdict},
    )


def numa(ctx: MeasureContext, nbytes: int) -> Optional[Evidence]:
    """Stage 6: with >= 2 NUMA nodes, first touch on node 0, copies from node 0 and the last."""
    cpus = ctx.facts.memory.numa_node_cpus
    if len(cpus) < 2:
        return None
    from advisor.facts._util import parse_cpulist  # type: ignore[attr-defined]

    nodes = sorted(cpus, key=int)
    init = sorted(parse_cpulist(cpus[nodes[0]]))[:1]
    values: dict[str, Any] = {"init": f"one thread on cpu {init[0]} (node {nodes[0]})"}
    pts = []
    # one child for both copies (see worker.numa_placement: the same first-touched source,
    # each copying thread pinned to its node): one Python start and one source fill fewer
    runs = [sorted(parse_cpulist(cpus[node]))[:1] for node in (nodes[0], nodes[-1])]
    req = json.dumps({"task": "numa_placement", "nbytes": nbytes, "init_cpus": init,
                      "run_cpus": runs[0], "more_run_cpus": runs[1:], "seed": ctx.seed})
    out = run_python(WORKER, [req], timeout_s=max(5.0, min(60.0, ctx.remaining_s())))
    for k, v in out["pages"].items():
        values[f"pages.{k}"] = v
    # every copy judged against this run's copy ceiling (stage 1's, shared) and by where its
    # destination landed (the worker's placement notes: relabel below)
    ceil = _ceiling(ctx, nbytes, E.EV_NUMA)
    values.update({"ceiling_bytes_per_s": ceil.stats.median, CEILING_PEAK_KEY: ceil.stats.max})
    notes: dict[str, Any] = {}
    places = out.get("placements") or []
    for i, (node, raw) in enumerate(zip((nodes[0], nodes[-1]), out["points"])):
        label = f"run-node{node}"
        p = checked_point(Point.model_validate(raw).model_copy(update={"label": label}),
                          ceil.stats)
        pts.append(p)
        for k, v in (places[i] if i < len(places) else {}).items():
            if k.startswith("placement_"):
                notes[f"{label}.{k}"] = v
        if p.stats is not None:
            values["local_bps" if node == nodes[0] else "remote_bps"] = p.stats.median
    try:
        aff = os.sched_getaffinity(0)
        values["pinned"] = len(aff) < (os.cpu_count() or len(aff)) or bool(
            os.environ.get("OMP_PROC_BIND") or os.environ.get("OMP_PLACES"))
    except OSError:
        pass
    return relabel(Evidence(
        id=E.EV_NUMA, description="first touch by one pinned thread, copies from a thread on "
                                  "the same and on another NUMA node; pages per node from numa_maps",
        series=[Series(name="copy", unit=E.BPS, points=pts)],
        conditions=conditions(thp_enabled=_thp(ctx.facts), buffer_kind="pageable",
                              buffer_fill="random", align_bytes=64,
                              notes={**notes, **_ceiling_notes(ceil)}),
        values=values,
    ))


def reference(evidence: list[Evidence]) -> Optional[Evidence]:
    """Stage 7: ``<name>.value/.lower/.upper/.unit`` = median, p5, p95 of the physical
    (non-artefact) bandwidth points worth re-measuring."""
    values: dict[str, Any] = {}

    def add(name: str, p: Optional[Point]) -> None:
        if p is None or p.artefact or p.stats is None:
            return
        values.update({f"{name}.value": p.stats.median, f"{name}.lower": p.stats.p5,
                       f"{name}.upper": p.stats.p95, f"{name}.unit": E.BPS})

    z = Evidence.find(evidence, E.EV_ZERO_MEMCPY)
    if z is not None:
        add(f"memcpy_{int(z.values['nbytes'])}", (z.series[0]).point(E.RANDOM))
    for ev_id, api in ((E.EV_ZERO_OPENCL, "opencl"), (E.EV_ZERO_CUDA, "cuda")):
        o = Evidence.find(evidence, ev_id)
        if o is None:
            continue
        for d in ("h2d", "d2h"):
            s = (o).series_named(d)
            for label in (E.RANDOM, "pinned"):
                add(f"{api}_{d}_{label}_{int(o.values['nbytes'])}",
                    (s).point(label) if s else None)
    if not values:
        return None
    return Evidence(id=E.EV_REFERENCE, description="reference bandwidths of this machine "
                    "(value = median, lower = p5, upper = p95, bytes/s)", values=values)


def run_all(ctx: MeasureContext, tun: Evidence) -> list[Evidence]:
    """All stages in priority order within ``ctx.deadline`` and this probe's own target
    (``TARGET_S``, or option ``budget_s``); returns the evidence gathered."""
    import dataclasses

    mode = "quick" if ctx.quick else "default"
    target = float(ctx.options.get("budget_s", TARGET_S[mode]))
    ctx = dataclasses.replace(ctx, deadline=min(ctx.deadline, time.monotonic() + target))
    budget = Budget(ctx)
    facts = ctx.facts
    nbytes = int(ctx.options.get("nbytes", 0)) or (QUICK_NBYTES if ctx.quick else DEFAULT_NBYTES)
    if facts.memory.total_bytes:
        nbytes = min(nbytes, facts.memory.total_bytes // MEMORY_FRACTION)
    out: list[Evidence] = []
    # order = priority when the budget is short: the hygiene figure, then the sweep (the one
    # env advice), then OpenCL, first touch, malloc and NUMA.
    # nbytes is copied from a random source twice, here (stage 1) and in the sweep's first
    # child, on purpose: taking stage 1's random point from the sweep (tried for issue 13) was
    # not like for like: the sweep's interleaved short visits ran 7.4-7.9 GB/s against
    # 6.7-6.8 GB/s for a fresh pair sampled as stage 1 samples the other sources, so the
    # zeros/random ratio fell from 1.00-1.01 to 0.91-0.98 (3 runs each, 128 MiB, 2-core VM)
    stages: list[tuple[str, float, Callable[[], Optional[Evidence]]]] = [
        ("zero-page-memcpy", 3.0, lambda: zero_page_memcpy(ctx, nbytes)),
        ("memcpy-sweep", 5.0, lambda: memcpy_sweep(ctx, tun, budget)),
    ]
    from .ocl import platforms

    if platforms():
        stages.append(("zero-page-opencl", 5.0, lambda: opencl(ctx, nbytes)))
    if facts.cuda:
        from .gpu import cupy_available

        if cupy_available():
            stages.append(("zero-page-cuda", 5.0, lambda: cuda(ctx, nbytes)))
    stages.append(("first-touch", 3.0, lambda: first_touch(ctx, nbytes)))
    g = E.glibc_at_least(facts, "2.35")
    if _thp(facts) == "madvise" and g is not False and tun.values.get("list_tunables_available"):
        stages.append(("malloc-hugetlb", 4.0, lambda: malloc_hugetlb(ctx, budget)))
    if len(facts.memory.numa_node_cpus) >= 2:
        stages.append(("numa-placement", 4.0, lambda: numa(ctx, nbytes)))
    for i, (name, est, fn) in enumerate(stages):
        ctx.progress(name, i / len(stages))
        if not budget.ok(name, est):
            continue
        ev = fn()
        if ev is not None:
            out.append(ev)
    ref = reference(out)
    if ref is not None:
        out.append(ref)
    if budget.skipped:
        out.append(Evidence(id="host-buffer-budget", description="stages skipped for lack of budget",
                            values={"skipped": ", ".join(budget.skipped)}))
    ctx.progress("done", 1.0)
    return out


def check(facts: Facts) -> Applicability:
    """The probe's ``check``: usable on Linux (zero page, THP, numa_maps and glibc tunables are
    Linux features), with the ``glibc-tunables`` evidence (current values from
    ``ld.so --list-tunables``) when usable."""
    if not sys.platform.startswith("linux"):
        return Applicability(usable=False, reason=f"needs Linux, this is {sys.platform}")
    try:
        import numpy  # noqa: F401
    except ImportError as exc:  # pragma: no cover - numpy is a dependency
        return Applicability(usable=False, reason=f"numpy missing: {exc}")
    return Applicability(usable=True, evidence=[tunables_evidence()])


def measure(ctx: MeasureContext) -> list[Evidence]:
    """The probe's ``measure``: ``run_all`` with the ``glibc-tunables`` evidence of ``check``
    (read again when ``check`` gave none)."""
    app = ctx.applicability
    tun = Evidence.find(app.evidence, E.EV_TUNABLES) if app else None
    return run_all(ctx, tun or tunables_evidence())
