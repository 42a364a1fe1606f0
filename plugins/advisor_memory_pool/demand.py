"""The demand of a workload against the memory it may use: the out-of-memory verdicts, the
waste of the user's own pool settings, and what an allocation trace's peaks say (all pure).

Every live allocation counts: the workload's sizes are one entry per live allocation
(``8MiB*400`` is 400 of them), each rounded up to the pool's alignment on its own, and a trace
is judged at its own worst moment per rounding unit (``advisor_memory_pool.trace.peak``).
"""

from __future__ import annotations

from typing import Optional

from advisor.models import Finding

from . import model
from .workload import Workload


def _capacity_text(side: str, budget: int, w: Workload) -> str:
    what = "device memory" if side == "device" else "host memory"
    parts = []
    if w.pool_limit_bytes is not None or w.pool_limit_fraction is not None:
        parts.append("the pool limit")
    if w.ranks_per_gpu > 1 and side == "device":
        parts.append(f"{what} shared by {w.ranks_per_gpu} ranks")
    return f"{budget} B ({', '.join(parts) or what})"


def _settings_text(w: Workload) -> str:
    c = w.current
    who = ("your settings" if c.label == "current"
           else f"the {c.label} settings (assumed: no pool-alignment/-block option given)")
    return (f"{who} (alignment {c.alignment_bytes} B, first block {c.first_block_bytes} B, "
            f"next block {c.next_block_bytes} B)")


def _rounded_text(w: Workload) -> str:
    """What the current settings' rounded demand is made of, with its figures."""
    unit = w.current.alignment_bytes
    rounded = w.rounded_demand(w.current)
    trace = {u: (r, q) for u, r, q in w.trace_peaks}
    if unit in trace:
        return (f"the rounded demand at the trace's peak is {rounded} B ({trace[unit][1]} B "
                f"requested by the allocations live then, each rounded up to {unit} B; "
                f"{w.trace_allocations} allocations in the trace)")
    if w.peak_bytes is not None:
        return (f"the rounded demand is at least {rounded} B (the {w.peak_bytes} B peak rounded "
                f"up to {unit} B once: which allocations are live at the peak is not known)")
    return (f"the rounded demand of its {len(w.sizes)} live allocation(s) is {rounded} B "
            f"({w.demand_bytes} B requested, each allocation rounded up to {unit} B)")


def oom_findings(side: str, w: Workload, choice: model.Choice, large_page: int,
                 budget: Optional[int], ev_ids: list[str]) -> list[Finding]:
    """The out-of-memory verdicts (``pool-oom``, ``pool-oom-current``) and the waste of the
    user's own settings (``<side>-current-pool-waste``), all pure.

    ``pool-oom`` (error): the workload's requests, all live at once, exceed the capacity
    (``budget``, bytes: device or host memory per rank, or the pool limit), or every candidate
    configuration reserves more than it.  ``pool-oom-current`` (error): the current settings
    (the user's ``--option pool-alignment/pool-first-block/pool-next-block``, else DLA-Future's
    defaults, said to be assumed) need more than the capacity: the rounded demand of all live
    allocations (``Workload.rounded_demand``: each rounded up to the alignment, or a trace's
    peak for it) or the blocks they reserve (``model.reserved_at_peak``), with the figures.
    For assumed defaults it is left out when ``pool-oom`` already says no setting fits.
    ``<side>-current-pool-waste``: what the user's settings reserve beyond the requests
    (warning when that is more than the recommended configuration reserves beyond them, else
    info).  No capacity known -> no OOM verdict.
    """
    out: list[Finding] = []
    demand = w.demand_bytes
    cur = model.evaluate(w.current, w.sizes, large_page)
    cur_need = model.reserved_at_peak(w.current, w.sizes, w.peak_bytes)
    cur_rounded = w.rounded_demand(w.current)
    live = "at its peak" if w.peak_bytes is not None or w.trace_peaks else "live at once"
    given = w.current.label == "current"
    if budget is not None:
        cap = _capacity_text(side, budget, w)
        if model.fits(demand, budget) is False:
            out.append(Finding(
                id="pool-oom", severity="error", evidence=ev_ids,
                message=(f"{side} pool: out of memory: the workload's {len(w.sizes)} "
                         f"allocation(s) need {demand} B {live}, more than the capacity "
                         f"of {cap}, whatever the pool settings"),
                remedy=("use fewer or smaller allocations per rank, fewer ranks per GPU, or a "
                        "larger pool limit / more memory")))
        elif not choice.fits:
            out.append(Finding(
                id="pool-oom", severity="error", evidence=ev_ids,
                message=(f"{side} pool: out of memory: the requests ({demand} B) fit the "
                         f"capacity of {cap}, but every large-page pool configuration reserves "
                         f"more ({'; '.join(f'{k}: {v}' for k, v in choice.rejected.items())}); "
                         "no pool setting is recommended"),
                remedy=("raise the capacity or lower the demand; a pool cannot hold this "
                        "workload with large-page blocks")))
        over = max(cur_rounded, cur_need)
        if (given or not out) and model.fits(over, budget) is False:
            out.append(Finding(
                id="pool-oom-current", severity="error", evidence=ev_ids,
                message=(f"{side} pool: {_settings_text(w)}: out of memory: "
                         f"{_rounded_text(w)}, and the pool reserves {cur_need} B {live} "
                         f"(its blocks, each + alignment), more than the capacity of {cap}"),
                remedy="lower the block sizes or the alignment (see this plugin's "
                       "recommendation, if any), or raise the capacity"))
    if given:
        over = model.overhead_bytes(cur)
        best = choice.best
        usable = choice.fits and model.fits(demand, budget) is not False
        heavy = usable and over > model.overhead_bytes(best)
        cmp_txt = ("" if not usable
                   else f"; the recommended '{best.config.label}' reserves {best.reserved_bytes} B "
                        f"({model.overhead_bytes(best)} B beyond the requests)")
        out.append(Finding(
            id=f"{side}-current-pool-waste", severity="warning" if heavy else "info",
            evidence=ev_ids,
            message=(f"{side} pool with your settings (alignment {w.current.alignment_bytes} B, "
                     f"first block {w.current.first_block_bytes} B, next block "
                     f"{w.current.next_block_bytes} B): reserves {cur.reserved_bytes} B for "
                     f"{demand} B of requests: {over} B beyond them ({over / demand:.2%}), of "
                     f"which {cur.waste_bytes} B is rounding to the alignment"
                     + (f"; {over / budget:.1%} of the capacity" if budget else "") + cmp_txt)))
    return out


def trace_findings(side: str, w: Workload, choice: model.Choice, large_page: int,
                   ev_ids: list[str]) -> list[Finding]:
    """``<side>-trace-fragmentation`` (info) when the workload came from an allocation trace:
    its peak live requested bytes against its peak live rounded bytes per rounding unit (the
    recorded ``trace.unit_<U>`` figures), the recommended configuration's unit named."""
    if not w.trace_peaks:
        return []
    best = choice.best.config.alignment_bytes
    requested = max(q for _, _, q in w.trace_peaks)
    parts = []
    for unit, rounded, at in w.trace_peaks:
        what = (" (the large page)" if unit == large_page else
                " (CuPy)" if unit == model.CUPY_ROUND_BYTES else
                " (yours)" if unit == w.current.alignment_bytes and w.current.label == "current"
                else "")
        parts.append(f"{unit} B{what}: {rounded} B, {rounded / at - 1:+.2%} over the "
                     f"{at} B live then" if at else f"{unit} B{what}: {rounded} B")
    rec = (f"; the recommended '{choice.best.config.label}' rounds to {best} B"
           if choice.fits else "")
    return [Finding(
        id=f"{side}-trace-fragmentation", severity="info", evidence=ev_ids,
        message=(f"{side} pool, allocation trace ({w.source.partition(':')[2] or 'recorded'}, "
                 f"{w.trace_allocations} allocations): at most {requested} B requested live at "
                 f"once; the most live at once with each allocation rounded up to the unit: "
                 + "; ".join(parts) + rec))]
