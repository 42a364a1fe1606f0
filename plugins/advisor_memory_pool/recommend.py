"""The pure ``recommend`` of the two memory-pool probes: (evidence, facts) -> Advice.

No I/O, no clock, no environment: everything comes from the evidence (the ``workload`` item and
measured series) and the facts, so the advice can be re-derived from a recorded profile.

Evidence ids read (all optional) are described in ``advisor_memory_pool.evidence``.

Here: the two entry points, ``recommend_host`` (with the THP mode and the measured huge-page
first touch) and ``recommend_device``.  The advice they share on pool settings is in
:mod:`advisor_memory_pool.pool_advice`, the out-of-memory and trace verdicts in
:mod:`advisor_memory_pool.demand`, the device's own measurements (first-use penalty,
communication-buffer churn) in :mod:`advisor_memory_pool.device_advice` and CuPy's in
:mod:`advisor_memory_pool.cupy_advice`.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

from advisor.knobs import version_in
from advisor.measure import STABLE_SHARE
from advisor.models import Advice, Evidence, Facts, Finding, Recommendation
from advisor.specs.units import format_seconds

from . import model
from .cupy_advice import cupy_findings, cupy_recommendation
from .demand import oom_findings, trace_findings
from .device_advice import churn_advice, comm_buffer_churn, first_use_finding
from .evidence import (DEVICE_ALLOC, DEVICE_FIRST_USE, DEVICE_FREE, HOST_FIRST_TOUCH,
                       device_large_page, host_large_page)
from .pool_advice import grow_findings, pool_findings, pool_recommendation
from .workload import WORKLOAD_ID, Workload, from_evidence

#: glibc malloc asks for THP on its own mappings with this tunable since glibc 2.35 (glibc NEWS 2.35).
GLIBC_HUGETLB_SINCE = "2.35"


def host_choice(evidence: Sequence[Evidence], facts: Facts) -> tuple[Workload, int, model.Choice]:
    """The recorded workload, the host large page (bytes) and the model's choice of host pool
    configuration for them (budget: the host memory, or the workload's pool limit)."""
    w = from_evidence(evidence)
    lp, _ = host_large_page(facts)
    limit = w.pool_limit_bytes
    if limit is None and w.pool_limit_fraction is not None and facts.memory.total_bytes:
        limit = int(facts.memory.total_bytes * w.pool_limit_fraction)
    budget = model.memory_budget(device_total=facts.memory.total_bytes, pool_limit=limit)
    return w, lp, model.choose(w.sizes, lp, budget=budget, peak=w.peak_bytes,
                               rounded={u: r for u, r, _ in w.trace_peaks})


def recommend_host(evidence: Sequence[Evidence], facts: Facts) -> Advice:
    """Host pool advice: THP mode, measured huge vs base page first touch, pool blocks."""
    w, _, choice = host_choice(evidence, facts)
    lp, lp_src = host_large_page(facts)
    mode = model.parse_thp_mode(facts.memory.thp_enabled)
    ev_ids = [e.id for e in evidence if e.id in (WORKLOAD_ID, HOST_FIRST_TOUCH)]
    findings: list[Finding] = []
    recs: list[Recommendation] = []

    measured, speedup_txt, real = _host_speedup(Evidence.find(evidence, HOST_FIRST_TOUCH))
    if measured:
        findings.append(Finding(id="host-hugepage-first-touch", severity="info",
                                message=speedup_txt, evidence=[HOST_FIRST_TOUCH]))

    budget = choice.grow.budget_bytes
    oom = oom_findings("host", w, choice, lp, budget, ev_ids)
    findings += oom + trace_findings("host", w, choice, lp, ev_ids)
    nothing_fits = any(f.id == "pool-oom" for f in oom)

    if mode == "never":
        findings.append(Finding(
            id="host-thp-never", severity="info",
            message="THP is 'never': MADV_HUGEPAGE has no effect, host pool chunks get base pages "
                    "whatever their alignment",
            remedy="ask the administrator for THP 'madvise' (or a hugetlb pool) if host-pool "
                   "first touch or registration cost matters"))
        return Advice(recommendations=recs, findings=findings)

    findings += (grow_findings("host", choice, ev_ids) if nothing_fits else
                 pool_findings("host", w, choice, lp, budget, ev_ids))

    if mode == "madvise":
        note = (" THP 'madvise': use 2 MiB-aligned host pool chunks with MADV_HUGEPAGE "
                "requested before first touch.")
        glibc = facts.kernel.glibc_version
        if glibc and version_in(glibc, f">={GLIBC_HUGETLB_SINCE}"):
            # the host-buffer plugin owns and measures GLIBC_TUNABLES=glibc.malloc.hugetlb=1
            note += (" For a malloc-backed pool (Umpire's host pool), glibc.malloc.hugetlb=1 makes "
                     "malloc request it: see host-buffer's glibc-malloc-hugetlb advice.")
        else:
            note += (" This glibc cannot be asked to madvise its mappings (needs glibc >= 2.35); "
                     "the program must call madvise(MADV_HUGEPAGE) on its pool blocks itself.")
        findings.append(Finding(
            id="host-thp-madvise", severity="info",
            message="THP is 'madvise': 2 MiB pages only for regions that ask with "
                    "madvise(MADV_HUGEPAGE) before first touch",
            remedy="2 MiB-aligned host pool chunks with MADV_HUGEPAGE before first touch"))
    elif mode == "always":
        note = (" THP is 'always': no madvise hint is needed; large-page-multiple blocks still "
                "avoid partial huge pages at block ends. Possible defrag / khugepaged latency "
                "when the kernel compacts memory to find 2 MiB pages.")
        findings.append(Finding(
            id="host-thp-always", severity="info",
            message="THP is 'always': every anonymous region may get 2 MiB pages, no hint needed; "
                    "allocation may stall on defrag and khugepaged collapses pages in the background",
        ))
    else:
        note = " THP mode unknown: the advice assumes 'madvise'."
    if measured:
        note += f" Measured here: {speedup_txt.split(': ', 1)[1]}"
    if nothing_fits:  # never recommend a setting whose demand exceeds the capacity
        return Advice(recommendations=recs, findings=findings)
    rec = pool_recommendation("host", choice, lp, lp_src,
                               "high" if real else ("medium" if measured else "low"), ev_ids, note)
    recs.append(rec)
    return Advice(recommendations=recs, findings=findings)


def _host_speedup(ev: Optional[Evidence]) -> tuple[bool, str, bool]:
    """(measured?, sentence, difference real?) from the huge/nohuge points of ``ev``."""
    if ev is None:
        return False, "", False
    parts, real = [], False
    for s in ev.series:
        pts = {p.label: p for p in s.points}
        huge, base = pts.get("huge"), pts.get("nohuge")
        if huge is None or base is None:
            continue
        mh, mb = huge.median(), base.median()
        if not mh or not mb:
            continue
        verdict = ev.values.get(f"{s.name}_verdict")  # harness compare(nohuge, huge)
        if verdict is not None:
            lo, hi = ev.values.get(f"{s.name}_ratio_ci_low"), ev.values.get(f"{s.name}_ratio_ci_high")
            stab = ev.values.get(f"{s.name}_stability")  # over resampled repeats (issue 25)
            # a gain that resampling the repeats does not keep is not called real
            real = real or (verdict == "better" and (stab is None or stab >= STABLE_SHARE))
            how = f"{verdict}, CI {lo:.3g}-{hi:.3g}x" if lo is not None and hi is not None else verdict
            if stab is not None:
                how += f", stability {stab:.2f}"
        else:
            how = "recorded values, no CI"
        parts.append(f"{s.name}: base pages {format_seconds(mb)}, MADV_HUGEPAGE "
                     f"{format_seconds(mh)} "
                     f"({mb / mh:.3g}x, {how})")
    if not parts:
        return False, "", False
    thp = ev.conditions.thp_enabled
    return True, ("measured per chunk: " + "; ".join(parts)
                  + (f" (THP {thp})" if thp else "")), real


def recommend_device(evidence: Sequence[Evidence], facts: Facts) -> Advice:
    """Device pool advice; "not applicable: no CUDA device" as an info finding without a GPU."""
    if not facts.cuda:
        return Advice(findings=[Finding(
            id="device-pool-not-applicable", severity="info",
            message="not applicable: no CUDA device; device pool advice needs a GPU "
                    "(host pool advice is given by memory-pool-host)")])
    w = from_evidence(evidence)
    lp, lp_src = device_large_page(evidence)
    device_total = min((d.total_memory_bytes for d in facts.cuda if d.total_memory_bytes), default=None)
    budget = w.budget(device_total)
    ev_ids = [e.id for e in evidence]
    findings: list[Finding] = []
    recs: list[Recommendation] = []

    churn = comm_buffer_churn(Evidence.find(evidence, DEVICE_FREE))
    sizes = list(w.sizes)
    if churn is not None:
        sizes.append(churn["largest_bytes"])
    w = dataclasses.replace(w, sizes=tuple(sizes))
    choice = model.choose(w.sizes, lp, budget=budget, peak=w.peak_bytes,
                          rounded={u: r for u, r, _ in w.trace_peaks})
    oom = oom_findings("device", w, choice, lp, budget, ev_ids)
    findings += oom + trace_findings("device", w, choice, lp, ev_ids)
    if any(f.id == "pool-oom" for f in oom):
        # nothing fits: no pool setting, no persistent pool, only the verdict (and CuPy facts)
        findings += grow_findings("device", choice, ev_ids) + cupy_findings(facts, w, choice, budget)
        return Advice(recommendations=[], findings=findings)
    findings += pool_findings("device", w, choice, lp, budget, ev_ids)

    confidence = "medium"
    extra = ""
    fu = Evidence.find(evidence, DEVICE_FIRST_USE)
    if fu is not None:
        f, penalised = first_use_finding(fu, lp)
        if f is not None:
            findings.append(f)
            if penalised:
                confidence = "high"
                extra = " " + f.message
    alloc = Evidence.find(evidence, DEVICE_ALLOC)
    if alloc is not None:
        pts = [p for s in alloc.series for p in s.points if p.x and p.median()]
        if pts:
            findings.append(Finding(
                id="device-alloc-latency", severity="info",
                message="device allocation latency: " + ", ".join(
                    f"{int(p.x)} B {p.median():.3g} s" for p in pts)
                + "; a larger grow-by pays it less often",
                evidence=[DEVICE_ALLOC]))
    recs.append(pool_recommendation("device", choice, lp, lp_src, confidence, ev_ids, extra))

    if churn is not None:
        finding, comm_pool = churn_advice(churn, choice, lp)
        findings.append(finding)
        recs.append(comm_pool)

    findings += cupy_findings(facts, w, choice, budget)
    cupy_rec = cupy_recommendation(facts, w, device_total)
    if cupy_rec is not None:
        recs.append(cupy_rec)
    return Advice(recommendations=recs, findings=findings)
