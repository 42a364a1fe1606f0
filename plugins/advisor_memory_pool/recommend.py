"""The pure ``recommend`` of the two memory-pool probes: (evidence, facts) -> Advice.

No I/O, no clock, no environment: everything comes from the evidence (the ``workload`` item and
measured series) and the facts, so the advice can be re-derived from a recorded profile.

Evidence ids read (all optional) are described in ``advisor_memory_pool.evidence``.
"""

from __future__ import annotations

import dataclasses
import statistics
from typing import Optional, Sequence

from advisor.knobs import version_in
from advisor.measure import STABLE_SHARE
from advisor.models import Advice, Evidence, Facts, Finding, Recommendation, Setting

from . import knobs, model
from .evidence import (DEVICE_ALLOC, DEVICE_FIRST_USE, DEVICE_FREE, HOST_FIRST_TOUCH,
                       device_large_page, host_large_page)
from .demand import oom_findings, trace_findings
from .workload import WORKLOAD_ID, Workload, from_evidence

#: CuPy versions whose MemoryPool raises OutOfMemoryError under a limit without first freeing its
#: cached blocks: cupy/cupy#7678, fixed by #7679 (merged 2023-07-04, backported to the v12 line;
#: the v12.2.0 release notes list the backport).  set_limit exists since v6.0.0 (PR #2113).
CUPY_LIMIT_BUG = ">=6.0,<12.2"


CUPY_LIMIT_BUG_SOURCE = "cupy/cupy#7678, fix #7679 (2023), backported in v12.2.0"


#: glibc malloc asks for THP on its own mappings with this tunable since glibc 2.35 (glibc NEWS 2.35).
GLIBC_HUGETLB_SINCE = "2.35"


def _mib(n: int) -> str:
    return f"{n} B ({n / model.MiB:.6g} MiB)"


def dlaf_settings(side: str, cfg: model.PoolConfig) -> list[Setting]:
    """DLA-Future v0.7+ env settings for ``cfg`` on ``side`` ("host"/"device")."""
    d = model.DLAF_DEFAULT
    out = []
    for field, value, default in (("INITIAL_BLOCK_BYTES", cfg.first_block_bytes, d.first_block_bytes),
                                  ("NEXT_BLOCK_BYTES", cfg.next_block_bytes, d.next_block_bytes),
                                  ("ALIGNMENT_BYTES", cfg.alignment_bytes, d.alignment_bytes)):
        out.append(Setting(library="dla-future", name=knobs.dlaf_name(side, field), value=value,
                           type="bytes", unit="bytes", default=default, versions=knobs.DLAF_NEW,
                           is_default=value == default))
    return out


def umpire_settings(side: str, cfg: model.PoolConfig) -> list[Setting]:
    """Umpire QuickPool constructor arguments (kind config) for programs that build their pool."""
    out = []
    for arg, value, default in (
            ("first_minimum_pool_allocation_size", cfg.first_block_bytes, model.UMPIRE_FIRST_BLOCK_BYTES),
            ("next_minimum_pool_allocation_size", cfg.next_block_bytes, model.UMPIRE_NEXT_BLOCK_BYTES),
            ("alignment", cfg.alignment_bytes, model.UMPIRE_ALIGNMENT_BYTES)):
        out.append(Setting(library="umpire", name=knobs.umpire_name(side, "QuickPool", arg),
                           value=value, type="bytes", unit="bytes", default=default,
                           kind="config", versions=">=4.0" if arg == "alignment" else None,
                           is_default=value == default))
    return out


def _pool_findings(side: str, w: Workload, choice: model.Choice, large_page: int,
                   budget: Optional[int], ev_ids: list[str]) -> list[Finding]:
    out: list[Finding] = []
    cur = model.evaluate(w.current, w.sizes, large_page)
    if cur.misaligned:
        out.append(Finding(
            id=f"{side}-backing-not-large-page-multiple", severity="warning",
            message=(f"{side} pool ({w.current.label}: block {w.current.next_block_bytes} B, "
                     f"alignment {w.current.alignment_bytes} B) asks its backing allocator for "
                     f"blocks of {', '.join(str(b) for b in sorted(set(cur.misaligned)))} B "
                     f"(block + alignment, LLNL/Umpire#881), not multiples of the "
                     f"{large_page} B large page; the first use of each new block pays the "
                     f"penalty"),
            remedy=f"use the '{choice.best.config.label}' settings of this plugin's recommendation",
            evidence=ev_ids))
    for r in choice.candidates:
        if r is choice.best or r.waste_ratio <= choice.best.waste_ratio:
            continue
        risk = ""
        if budget:
            usable = budget / (1 + r.waste_ratio)
            risk = (f"; out-of-memory risk: only {usable:.4g} B of requests ({usable / budget:.1%} "
                    f"of the {budget} B budget) fit before the pool is full")
        out.append(Finding(
            id=f"{side}-alignment-waste", severity="warning" if r.waste_ratio >= 1 or budget else "info",
            message=(f"{r.config.label} (alignment {r.config.alignment_bytes} B) would round each "
                     f"of the workload's {len(r.requests)} live allocation(s) "
                     f"({len(set(r.requests))} distinct size(s)) up by up to "
                     f"{r.max_waste_per_request} B: {r.waste_bytes} B over all of them, "
                     f"estimated waste {r.waste_ratio:.2%} of requested bytes{risk}"),
            remedy=f"prefer '{choice.best.config.label}' (waste {choice.best.waste_ratio:.2%})",
            evidence=ev_ids))
    return out + _grow_findings(side, choice, ev_ids)


def _grow_findings(side: str, choice: model.Choice, ev_ids: list[str]) -> list[Finding]:
    if not choice.grow.limited:
        return []
    return [Finding(
        id=f"{side}-pool-limit-below-request-plus-grow",
        severity="warning" if choice.grow.feasible and choice.fits else "error",
        message=(f"limit smaller than largest request + 1 GiB grow-by: {choice.grow.reason}"),
        remedy=("raise the pool limit or lower ranks per GPU"
                if not (choice.grow.feasible and choice.fits)
                else "the recommended grow-by is lowered to fit; raise the limit to grow by 1 GiB"),
        evidence=ev_ids)]


def _pool_recommendation(side: str, choice: model.Choice, large_page: int, lp_source: str,
                         confidence: str, ev_ids: list[str], extra: str = "") -> Recommendation:
    cfg = choice.best.config
    backing = model.umpire_backing_bytes(cfg.next_block_bytes, cfg.alignment_bytes)
    return Recommendation(
        id=f"{side}-pool-large-page-blocks",
        title=f"{side} pool: backing blocks that are multiples of the {large_page} B large page",
        settings=dlaf_settings(side, cfg) + umpire_settings(side, cfg),
        rationale=(
            f"Umpire pools request block + alignment bytes (LLNL/Umpire#881): "
            f"{cfg.next_block_bytes} + {cfg.alignment_bytes} = {backing} B = "
            f"{backing // large_page} x {large_page} B ({lp_source}); a block that is not a "
            f"large-page multiple is slow on the first use of each new block. "
            f"Grow-by: {choice.grow.reason}. Least waste: {choice.why}. "
            f"DLA-Future names for v0.7+; the QuickPool arguments apply to DynamicPoolList alike."
            f"{_next_block_caveat(side, choice)}{extra}"),
        confidence=confidence, evidence=ev_ids, verifiable=False)


def _next_block_caveat(side: str, choice: model.Choice) -> str:
    if side != "device" or choice.best.config.label != "compensated block":
        return ""
    alt = next((r for r in choice.candidates if r.config.label == "large-page alignment"), None)
    if alt is None or alt.config.label in choice.rejected:
        return ""  # never suggest, even conditionally, a configuration over the budget
    return (f" Caveat: DLA-Future >= 0.7 may ignore NEXT_BLOCK for the device pool (unconfirmed, "
            f"code reading); if later device blocks are still slow on first use, set "
            f"ALIGNMENT_BYTES={alt.config.alignment_bytes} instead (waste {alt.waste_ratio:.2%}).")


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

    findings += (_grow_findings("host", choice, ev_ids) if nothing_fits else
                 _pool_findings("host", w, choice, lp, budget, ev_ids))

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
    rec = _pool_recommendation("host", choice, lp, lp_src,
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
        parts.append(f"{s.name}: base pages {mb:.4g} s, MADV_HUGEPAGE {mh:.4g} s "
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

    churn = _churn(Evidence.find(evidence, DEVICE_FREE))
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
        findings += _grow_findings("device", choice, ev_ids) + _cupy_findings(facts, w, choice, budget)
        return Advice(recommendations=[], findings=findings)
    findings += _pool_findings("device", w, choice, lp, budget, ev_ids)

    confidence = "medium"
    extra = ""
    fu = Evidence.find(evidence, DEVICE_FIRST_USE)
    if fu is not None:
        f, penalised = _first_use_finding(fu, lp)
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
    recs.append(_pool_recommendation("device", choice, lp, lp_src, confidence, ev_ids, extra))

    if churn is not None:
        findings.append(Finding(
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
            evidence=[DEVICE_FREE]))
        cfg = choice.best.config
        recs.append(Recommendation(
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
            confidence="high", evidence=[DEVICE_FREE]))

    findings += _cupy_findings(facts, w, choice, budget)
    cupy_rec = _cupy_recommendation(facts, w, device_total)
    if cupy_rec is not None:
        recs.append(cupy_rec)
    return Advice(recommendations=recs, findings=findings)


def _first_use_finding(ev: Evidence, lp: int) -> tuple[Optional[Finding], bool]:
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


def _churn(ev: Optional[Evidence]) -> Optional[dict]:
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


def _cupy_version(facts: Facts) -> Optional[str]:
    for k, v in facts.python_packages.items():
        if k == "cupy" or k.startswith("cupy-"):
            return v
    return None


def _cupy_findings(facts: Facts, w: Workload, choice: model.Choice,
                   budget: Optional[int]) -> list[Finding]:
    ver = _cupy_version(facts)
    if ver is None:
        return []
    limited = w.pool_limit_bytes is not None or w.pool_limit_fraction is not None or w.ranks_per_gpu > 1
    out: list[Finding] = []
    rep = model.evaluate(model.CUPY_DEFAULT, w.sizes, choice.best.large_page)
    if rep.misaligned:
        out.append(Finding(
            id="cupy-backing-not-large-page-multiple", severity="info",
            message=(f"CuPy's MemoryPool rounds requests to {model.CUPY_ROUND_BYTES} B and backs "
                     f"each new chunk with its own cudaMalloc, so buffers of "
                     f"{', '.join(str(b) for b in sorted(set(rep.misaligned)))} B are not "
                     f"multiples of the {choice.best.large_page} B large page; CuPy has no "
                     f"alignment setting"),
            remedy=f"round large (communication) buffer sizes up to multiples of "
                   f"{choice.best.large_page} B in the program"))
    if not version_in(ver, CUPY_LIMIT_BUG):
        return out
    return out + [Finding(
        id="cupy-pool-limit-bug", severity="warning" if limited else "info",
        message=(f"CuPy {ver} has the pool-limit bug ({CUPY_LIMIT_BUG_SOURCE}): with a limit set "
                 f"(set_limit or CUPY_GPU_MEMORY_LIMIT), MemoryPool raises OutOfMemoryError "
                 f"without first freeing its cached free blocks, even when it uses 0 bytes"
                 + ("" if limited else "; no limit is set in this workload")),
        remedy="upgrade CuPy to 12.2 or later, or call free_all_blocks() before large allocations")]


def _cupy_recommendation(facts: Facts, w: Workload, device_total: Optional[int]) -> Optional[Recommendation]:
    if _cupy_version(facts) is None:
        return None
    limit: Optional[str] = None
    why = ""
    if w.pool_limit_bytes is not None:
        limit, why = str(w.pool_limit_bytes), "the pool limit given for this workload"
    elif w.pool_limit_fraction is not None:
        limit, why = f"{w.pool_limit_fraction * 100:g}%", "the pool limit given for this workload"
    elif w.ranks_per_gpu > 1:
        limit = f"{100 // w.ranks_per_gpu}%"
        why = f"{w.ranks_per_gpu} ranks share each GPU: each rank's pool gets its share"
    if limit is None:
        return None
    return Recommendation(
        id="cupy-pool-limit", title="CuPy pool limit",
        settings=[Setting(library="cupy", name="CUPY_GPU_MEMORY_LIMIT", value=limit, type="str",
                          versions=">=6.0"),
                  Setting(library="cupy", name="pool_limit", value=limit, type="str", kind="config")],
        rationale=(f"limit CuPy's MemoryPool to {limit}: {why}. CuPy reads CUPY_GPU_MEMORY_LIMIT "
                   f"at start; advisor.runtime.configure_cupy(profile) applies it from Python. "
                   f"CuPy has no setting for pool alignment: round large buffer sizes up to "
                   f"2 MiB multiples in code."),
        confidence="medium", evidence=[WORKLOAD_ID])
