"""Stages 1 and 3 of the host-buffer probe: the zero-page artefact of copies and transfers.

1. ``zero-page-memcpy`` (:func:`zero_page_memcpy`): copy bandwidth of one large buffer from
   untouched (base pages and MADV_HUGEPAGE: the 4 KiB and the huge zero page), zero-filled and
   random-filled sources, the inflation untouched/random with its bootstrap CI; the random point
   is this run's copy ceiling (``remember_ceiling``: later stages and probes reuse it).
   Untouched points are stored with their label and no bandwidth, the zeros point is judged
   against the ceiling (``checked_point``), and the random copy is timed again into a view of
   its destination 0 mod 4 KiB away, A B A B, judged by ``aliasing_artefact``
   (:mod:`advisor_host_buffer.aliasing`).
3. ``zero-page-opencl`` (:func:`opencl`): OpenCL transfers (:mod:`advisor_host_buffer.ocl`); on a
   CUDA machine with CuPy also ``zero-page-cuda`` (:func:`cuda`, :mod:`advisor_host_buffer.gpu`),
   each labelled against this run's copy ceiling (``zero_page.label_artefacts``).

Both run in the advisor's own process: ``numpy.copyto`` between ``host_buffer`` arrays (numpy
checks shapes before it copies; every array is a private anonymous mapping this process owns)
and driver copies from the same arrays; see :mod:`advisor_host_buffer.measure` for why that is
safe and what a broken driver would do.
"""

from __future__ import annotations

from typing import Any

from advisor.measure import (CEILING_PEAK_KEY, Ceiling, artefact_point, buffer_conditions,
                             checked_point, compare, conditions, placed_pair,
                             placed_pair_with_control, remember_ceiling)
from advisor.models import Evidence, Point, Series
from advisor.probe import MeasureContext

from . import aliasing
from . import evidence
from . import zero_page
from .measure_common import (ceiling_notes, random_buffer_conditions, run_ceiling, sampler,
                             thp_in_effect)


def zero_page_memcpy(ctx: MeasureContext, nbytes: int) -> Evidence:
    """Stage 1 (see module docstring): the ``zero-page-memcpy`` evidence of ``nbytes``-byte
    copies, bytes/s."""
    import numpy as np

    smp = sampler(ctx, ctx.quick)
    points: list[Point] = []
    conds = {}
    notes = {}
    control: dict[str, Any] = {}
    for label, fill, huge in ((evidence.UNTOUCHED, "untouched", False), ("untouched-huge", "untouched", True),
                              (evidence.ZEROS, "zeros", None), (evidence.RANDOM, "random", None)):
        # a fresh placed pair per source: the destination is random-filled (touched) before
        # timing and never a power of two from the source (no 4K aliasing); see placed_pair
        if label == evidence.RANDOM:  # plus the aliasing control (a view of the same destination)
            src, dst, aliased, notes[label] = placed_pair_with_control(nbytes, seed=ctx.seed)
        else:
            src, dst, notes[label] = placed_pair(nbytes, src_fill=fill, dst_fill="random",
                                                 src_hugepages=huge, seed=ctx.seed)
        conds[label] = buffer_conditions(src)
        points.append(smp(lambda src=src, dst=dst: np.copyto(dst, src)).to_point(
            x=float(nbytes), label=label, per_call_bytes=nbytes, seed=ctx.seed))
        if label == evidence.RANDOM:
            control = aliasing.measure_control(smp, src, dst, aliased, points[-1].samples, nbytes,
                                               ctx.seed)
            del aliased
        del src, dst
    by = {p.label: p for p in points}
    ceiling = by[evidence.RANDOM].stats
    # the random-source copy is the ceiling's own kernel (numpy.copyto between a random-filled,
    # touched placed_pair of nbytes): later stages and probes of this run reuse it
    remember_ceiling(Ceiling(ceiling, notes[evidence.RANDOM]), nbytes=nbytes,
                     source=f"host-buffer {evidence.EV_ZERO_MEMCPY}")
    values: dict[str, Any] = {"nbytes": nbytes}
    for label in (evidence.UNTOUCHED, "untouched-huge", evidence.ZEROS):
        c = compare(by[evidence.RANDOM].samples, by[label].samples, higher_is_better=True, seed=ctx.seed)
        key = "copy" if label == evidence.UNTOUCHED else f"copy.{label}"
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
        if p.label.startswith(evidence.UNTOUCHED):
            p = artefact_point(p, evidence.ZERO_PAGE_ARTEFACT)
        elif p.label != evidence.RANDOM:
            p = checked_point(p, ceiling)
        pts.append(p)
    ev = Evidence(
        id=evidence.EV_ZERO_MEMCPY,
        description="numpy.copyto of one buffer from untouched / zero-filled / random-filled "
                    "sources into a random-filled destination",
        series=[Series(name="copy", unit=evidence.BPS, x_name="nbytes", x_unit="bytes", points=pts)],
        conditions=conditions(**{k: v for k, v in conds[evidence.RANDOM].items() if k != "notes"},
                              thp_enabled=thp_in_effect(ctx.facts),
                              notes={**conds[evidence.RANDOM].get("notes", {}), **notes[evidence.RANDOM], **{
                                  f"{label}.placement_near_power_of_two":
                                      n["placement_near_power_of_two"]
                                  for label, n in notes.items() if label != evidence.RANDOM}}),
        values=values,
    )
    return ev


def opencl(ctx: MeasureContext, nbytes: int) -> Evidence:
    """Stage 3: OpenCL transfers, labelled against this run's copy ceiling."""
    from .ocl import measure_opencl

    series, info = measure_opencl(nbytes, sampler(ctx, ctx.quick), seed=ctx.seed)
    ceil = run_ceiling(ctx, nbytes, "zero-page-opencl")
    ceiling = ceil.stats
    h2d = (Evidence(id="x", series=series)).series_named("h2d")
    u, r = (h2d).point(evidence.UNTOUCHED), (h2d).point(evidence.RANDOM)
    values: dict[str, Any] = {"nbytes": nbytes, **info, "ceiling_bytes_per_s": ceiling.median,
                              CEILING_PEAK_KEY: ceiling.max}
    c = compare(r.samples, u.samples, higher_is_better=True, seed=ctx.seed)
    values.update({"h2d.inflation": c.ratio, "h2d.inflation_ci_low": c.ci_low,
                   "h2d.inflation_ci_high": c.ci_high})
    ev = Evidence(
        id=evidence.EV_ZERO_OPENCL,
        description="OpenCL enqueue_copy (blocking) host-to-device and device-to-host from "
                    "untouched / random-filled pageable and pinned (ALLOC_HOST_PTR) host memory; "
                    "'mapped' = map+unmap of a device buffer (zero-copy)",
        series=series,
        conditions=random_buffer_conditions(ctx, {"opencl_platform": info["platform"],
                                                  "opencl_device": info["device"],
                                                  **ceiling_notes(ceil)}),
        values=values,
    )
    return zero_page.label_artefacts(ev, ceiling)


def cuda(ctx: MeasureContext, nbytes: int) -> Evidence:
    """Stage 3b: CuPy transfers on a CUDA device, labelled against this run's copy ceiling."""
    from .gpu import measure_cupy

    series, info = measure_cupy(nbytes, sampler(ctx, ctx.quick), seed=ctx.seed)
    ceil = run_ceiling(ctx, nbytes, "zero-page-cuda")
    ceiling = ceil.stats
    h2d = series[0]
    u, r = (h2d).point(evidence.UNTOUCHED), (h2d).point(evidence.RANDOM)
    c = compare(r.samples, u.samples, higher_is_better=True, seed=ctx.seed)
    ev = Evidence(
        id=evidence.EV_ZERO_CUDA,
        description="CuPy ndarray.set / get (synchronised) from untouched / random-filled "
                    "pageable and pinned (cudaHostAlloc) host memory",
        series=series,
        conditions=random_buffer_conditions(ctx, {"cuda_device": info["device"],
                                                  **ceiling_notes(ceil)}),
        values={"nbytes": nbytes, **info, "ceiling_bytes_per_s": ceiling.median,
                CEILING_PEAK_KEY: ceiling.max, "h2d.inflation": c.ratio,
                "h2d.inflation_ci_low": c.ci_low,
                "h2d.inflation_ci_high": c.ci_high},
    )
    return zero_page.label_artefacts(ev, ceiling)
