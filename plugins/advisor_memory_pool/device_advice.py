"""What the device memory-pool probe reads from its own measurements (pure): the first-use
penalty of buffers that are not large-page multiples (``device-first-use``,
``device-first-use-penalty``, ``model.classify_first_use``) and communication-buffer churn, free
device memory falling faster than the buffers grow because MPI's IPC cache keeps each freed
allocation (``device-comm-buffer-churn``, ``device-persistent-comm-pool``).

Evidence read: ``DEVICE_FIRST_USE`` and ``DEVICE_FREE`` (:mod:`advisor_memory_pool.evidence`).
"""

from __future__ import annotations

import statistics
from typing import Optional

from advisor.models import Evidence, Finding, Recommendation

from . import model
from .evidence import DEVICE_FREE


def first_use_finding(ev: Evidence, lp: int) -> tuple[Optional[Finding], bool]:
    """The first-use finding of ``ev`` against the large page ``lp`` (bytes) and whether it
    found a penalty; (None, False) when no point has warm-up samples."""
    pts = [(p.x, p.warmup, p.samples) for s in ev.series for p in s.points
           if p.x is not None and p.warmup]
    if not pts:
        return None, False
    cls = model.classify_first_use(pts, lp)
    bad = sorted(int(x) for x, c in cls.items() if c == "misaligned")
    if not bad:
        return Finding(id="device-first-use", severity="info", evidence=[ev.id],
                       message=f"first use of every measured buffer size within "
                               f"{model.FIRST_USE_PENALTY_FACTOR:g}x of large-page multiples"), False
    ref = [v for x, f, _ in pts if model.is_multiple(int(x), lp) for v in f]
    ref_med = statistics.median(ref) if ref else None
    worst = max(min(f) for x, f, _ in pts if int(x) in bad)
    ratio = f" (up to {worst / ref_med:.3g}x the first use of large-page multiples)" if ref_med else ""
    return Finding(
        id="device-first-use-penalty", severity="warning", evidence=[ev.id],
        message=(f"buffers of {', '.join(str(b) for b in bad)} B (not multiples of {lp} B) are "
                 f"slow on first use{ratio}; later uses are equally fast, so the penalty hits the "
                 f"first use of each new backing block"),
        remedy="make pool backing blocks large-page multiples"), True


def comm_buffer_churn(ev: Optional[Evidence]) -> Optional[dict]:
    """Communication-buffer churn from free device memory per iteration: drop, buffers and
    bytes per iteration, the largest buffer and the iteration out of memory is expected at;
    None when memory falls no faster than the buffers grow."""
    if ev is None:
        return None
    pts = sorted(((p.x, p.median()) for s in ev.series for p in s.points
                  if p.x is not None and p.median() is not None), key=lambda t: t[0])
    if len(pts) < 2:
        return None
    (x0, f0), (x1, f1) = pts[0], pts[-1]
    if x1 <= x0:
        return None
    drop = (f0 - f1) / (x1 - x0)
    growth = int(ev.values.get("growth_per_iteration_bytes", 0))
    first = int(ev.values.get("first_alloc_bytes", 0))
    if drop <= growth or first <= 0:
        return None
    iters = int(x1) - int(x0)
    return {
        "drop_per_iteration": drop,
        "buffers_per_iteration": drop / first,
        "first_alloc_bytes": first,
        "growth_per_iteration_bytes": growth,
        "largest_bytes": first + growth * iters,
        "oom_iteration": int(x1) + int(f1 // drop) + 1,
    }


def churn_advice(churn: dict, choice: model.Choice, lp: int) -> tuple[Finding, Recommendation]:
    """The ``device-comm-buffer-churn`` finding and ``device-persistent-comm-pool``
    recommendation for ``churn`` (as ``comm_buffer_churn`` returns it), the chosen pool and the
    large page ``lp`` (bytes)."""
    finding = Finding(
        id="device-comm-buffer-churn", severity="warning",
        message=(f"free device memory falls by {churn['drop_per_iteration']:.4g} B per iteration "
                 f"(~{churn['buffers_per_iteration']:.2g} communication buffers of "
                 f"{churn['first_alloc_bytes']} B), more than the buffers grow "
                 f"({churn['growth_per_iteration_bytes']} B/iteration): freed buffers are not "
                 f"given back (MPI IPC caches each freed allocation); out of memory expected at "
                 f"iteration {churn['oom_iteration']}"),
        remedy=("allocate large communication buffers from a persistent pool and reuse them; "
                "as a diagnostic only, MPICH_GPU_IPC_ENABLED=0 (Cray MPICH) keeps memory flat "
                "but costs intra-node GPU transfer performance"),
        evidence=[DEVICE_FREE])
    cfg = choice.best.config
    return finding, Recommendation(
        id="device-persistent-comm-pool",
        title="persistent pool for large communication buffers",
        rationale=(f"Re-allocating a {churn['first_alloc_bytes']} B communication buffer every "
                   f"iteration leaks one IPC-cached allocation per iteration. Keep a persistent "
                   f"pool instead: long-lived backing blocks (block {cfg.next_block_bytes} B + "
                   f"alignment {cfg.alignment_bytes} B, a multiple of {lp} B), grow by "
                   f"{choice.grow.bytes} B (>= 1 GiB unless the budget forbids it), and buffer "
                   f"sizes rounded up to multiples of {lp} B so a buffer that grows by "
                   f"{churn['growth_per_iteration_bytes']} B reuses freed pool memory instead "
                   f"of new device allocations."),
        confidence="high", evidence=[DEVICE_FREE])
