"""The pure ``recommend(evidence, facts) -> Advice`` of the host-buffer probe.

No I/O, no clock, no environment: every figure in a message comes from ``evidence`` (measured
here or recorded elsewhere) and every decision from ``facts``.  Advice is given only where it was
measured to help (the glibc tunables, the huge-page host pool); hygiene findings carry the measured
inflation.  See :mod:`advisor_host_buffer.evidence` for the evidence vocabulary.
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor.measure import (STABLE_SHARE, classify_series, first_touch_artefact, relabel_all,
                             veto, withheld)
from advisor.measure.interleave import N_RESAMPLES
from advisor.measure.placement import FIRST_TOUCH_LABEL
from advisor.models import Advice, Evidence, Facts, Finding, Recommendation, Setting

from . import aliasing as AL
from . import cliff as CL
from . import evidence as E
from . import thp as THP
from . import zero_page as ZP

#: GLIBC_TUNABLES items are ``name=value`` pairs separated by ``:`` (glibc manual, "Tunables",
#: https://www.gnu.org/software/libc/manual/html_node/Tunables.html).
TUNABLES_SEPARATOR = ":"

#: glibc.cpu.x86_non_temporal_threshold: named glibc.tune.* in 2.26-2.27, glibc.cpu.* since 2.28
#: (glibc manual "Hardware Capability Tunables" 2.26/2.27 vs 2.28; libc-alpha 2018-07 rename).
NT_VERSIONS_CPU = ">=2.28"
NT_VERSIONS_TUNE = ">=2.26,<2.28"
#: glibc.malloc.hugetlb appeared in glibc 2.35 (NEWS 2.35; manual "Memory Related Tunables").
HUGETLB_VERSIONS = ">=2.35"

PREFAULT_REMEDY = (
    "before timing, write a non-zero pseudo-random pattern to every page of every host buffer "
    "(page size read from the system); a plain memset(0) after malloc can be turned into calloc "
    "by the compiler and brings the lazy zero mapping back; align host buffers to at least 64 B "
    "and record the fill in the results"
)


def _ci(lo: Optional[float], hi: Optional[float]) -> str:
    return f" (95% CI {lo:.2f}-{hi:.2f})" if lo is not None and hi is not None else ""


def _noise_floor(evidence: Sequence[Evidence], default: float) -> float:
    for ev in evidence:
        v = ev.values.get("noise_floor")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return default


def _tunable_setting(item: str, value: str, default: Optional[str], versions: str) -> Setting:
    return Setting(
        library="glibc",
        name="GLIBC_TUNABLES",
        value=f"{item}={value}",
        type="list",
        default=f"{item}={default}" if default is not None else None,
        versions=versions,
        kind="env",
        separator=TUNABLES_SEPARATOR,
    )


def recommend(evidence: Sequence[Evidence], facts: Facts, *, noise_floor: float = 0.0) -> Advice:
    """Findings and recommendations from host-buffer evidence.

    :param evidence: ``Applicability.evidence + measure(ctx)`` or recorded evidence.
    :param facts: machine facts (THP mode, NUMA nodes, glibc version are read).
    :param noise_floor: relative difference (fraction) below which two medians are the same,
        used when the evidence carries no measured ``noise_floor`` value (the A/A floor from
        ``advisor.measure.noise_floor_from_aa``); 0.0 lets the confidence intervals decide.
    :return: ``Advice``; never raises on missing evidence (it simply gives less advice).
    """
    # labels re-derived from what each record holds, artefact points without a bandwidth
    ev = relabel_all(evidence)
    nf = _noise_floor(ev, noise_floor)
    findings: list[Finding] = []
    recs: list[Recommendation] = []

    _zero_page(ev, findings)
    findings += AL.findings(ev)
    _placement_and_touch(ev, findings, nf)
    _first_use(ev, findings, nf)
    _thp(ev, facts, findings, recs)
    _nt_cache_size(ev, facts, findings)
    _sweep(ev, facts, findings, recs, nf)
    _numa(ev, facts, findings)
    # an artefact in a record withdraws or lowers the advice drawn from it (harness veto)
    return veto(Advice(recommendations=recs, findings=findings), ev)


# --------------------------------------------------------------------------- zero page


def _zero_page(ev: list[Evidence], findings: list[Finding]) -> None:
    for ev_id, what, suffix in ((E.EV_ZERO_MEMCPY, "memcpy", ""),
                                (E.EV_ZERO_OPENCL, "OpenCL host-to-device", "-opencl"),
                                (E.EV_ZERO_CUDA, "CUDA host-to-device", "-cuda")):
        e = Evidence.find(ev, ev_id)
        if e is None:
            continue
        inf = ZP.zero_page_inflation(e, None if ev_id == E.EV_ZERO_MEMCPY else "h2d")
        if inf is None:
            only = ZP.untouched_only(e)
            if only:
                findings.append(Finding(
                    id=f"zero-page-untouched-only{suffix}",
                    severity="warning",
                    message=(f"{what} was measured only from untouched host buffers "
                             f"({', '.join(only)}): their pages map the shared zero page, so the "
                             "figures are zero-page artefacts, not bandwidths, and no initialised "
                             "figure exists to compare them with"),
                    remedy=PREFAULT_REMEDY,
                    evidence=[ev_id],
                ))
            continue
        if inf.significant():
            findings.append(Finding(
                id=f"zero-page-inflation{suffix}",
                severity="warning",
                message=(
                    f"{what} from an untouched host buffer reads {inf.ratio:.2f}x faster"
                    f"{_ci(inf.ci_low, inf.ci_high)} than from a random-filled one "
                    f"({E.fmt_bw(inf.touched_bps)}): untouched "
                    "pages map the shared zero page, so benchmarks that skip initialisation "
                    "overstate bandwidth; the untouched figure is a zero-page artefact, stored "
                    "with its label and no bandwidth"
                ),
                remedy=PREFAULT_REMEDY,
                evidence=[ev_id],
            ))
        else:
            findings.append(Finding(
                id=f"zero-page-no-inflation{suffix}",
                severity="info",
                message=(
                    f"{what}: untouched vs random-filled source {inf.ratio:.2f}x"
                    f"{_ci(inf.ci_low, inf.ci_high)}: no measurable zero-page inflation here"
                ),
                evidence=[ev_id],
            ))
    for ev_id, api in ((E.EV_ZERO_OPENCL, "opencl"), (E.EV_ZERO_CUDA, "cuda")):
        _transfers(ev, ev_id, api, findings)


def _transfers(ev: list[Evidence], ev_id: str, api: str, findings: list[Finding]) -> None:
    e = Evidence.find(ev, ev_id)
    if e is not None:
        parts = []
        for direction in ("h2d", "d2h"):
            s = (e).series_named(direction)
            if s is None:
                continue
            for p in s.points:
                if p.label == E.UNTOUCHED:
                    continue
                if p.artefact:  # never shown as a bandwidth: only its label
                    parts.append(f"{direction} {p.label}: artefact, not a bandwidth")
                    continue
                m = E.point_median(p)
                if m is not None:
                    parts.append(f"{direction} {p.label} {E.fmt_bw(m)}")
        if parts:
            findings.append(Finding(
                id=f"{api}-transfer-bandwidth",
                severity="info",
                message=f"{'OpenCL' if api == 'opencl' else 'CUDA'} transfers from initialised "
                        "host memory: " + "; ".join(parts),
                evidence=[ev_id],
            ))


# --------------------------------------------------------------------------- placement, touch


def _placement_and_touch(ev: list[Evidence], findings: list[Finding], nf: float) -> None:
    """Copy evidence measured at an aliasing placement, or into an untouched destination whose
    bandwidth falls with size (the notes written by ``advisor.measure.placed_pair``)."""
    for e in ev:
        notes = e.conditions.notes
        near = sorted(k for k, v in notes.items()
                      if k.endswith("placement_near_power_of_two") and v is True)
        if near:
            findings.append(Finding(
                id="copy-placement-aliasing", severity="warning",
                message=(f"{e.id}: source and destination were within 4 KiB of a power of two "
                         f"apart ({', '.join(near)}): loads and stores share their low 12 address "
                         "bits (4K aliasing, Intel Optimization Reference Manual), so these copy "
                         "figures may measure aliasing, not memory"),
                remedy="re-measure with advisor.measure.placed_pair (destination skewed by "
                       "2 KiB mod 4 KiB)",
                evidence=[e.id]))
        dst_fill = notes.get("dst_fill")
        if dst_fill != "untouched":
            continue
        for s in e.series:
            if s.unit != E.BPS:
                continue
            # labelled when the record was read (relabel), or judged here on the samples
            label = next((p.artefact for p in s.points
                          if p.artefact and p.artefact.startswith(FIRST_TOUCH_LABEL)), None)
            label = label or first_touch_artefact(
                [(p.x, p.samples) for p in s.points if p.x is not None and not p.artefact],
                dst_fill=str(dst_fill), noise_floor=nf)
            if label:
                findings.append(Finding(
                    id="first-touch-in-timed-region", severity="warning",
                    message=f"{e.id} ({s.name}): {label}",
                    remedy=PREFAULT_REMEDY + "; touch the destination too, before timing",
                    evidence=[e.id]))
                break


# --------------------------------------------------------------------------- glibc cache facts

#: glibc's x86 memcpy derives ``x86_non_temporal_threshold`` from the shared (last-level) cache
#: size it reads with cpuid at start-up (glibc ``sysdeps/x86/dl-cacheinfo.h``,
#: ``dl_init_cacheinfo``: a fraction of the shared cache, raised to the tunable's minimum).  With
#: no shared cache reported the threshold is derived from nothing.
NT_SOURCE = "glibc sysdeps/x86/dl-cacheinfo.h (dl_init_cacheinfo)"


def _nt_cache_size(ev: list[Evidence], facts: Facts, findings: list[Finding]) -> None:
    if facts.cpu.arch not in ("x86_64", "i686", "i386"):
        return  # the tunable exists only on x86
    l3 = facts.cpu.cache_l3_bytes
    if l3:  # reported and non-zero
        return
    tun = Evidence.find(ev, E.EV_TUNABLES)
    nt = tun.values.get("glibc.cpu.x86_non_temporal_threshold.value") if tun else None
    shared = tun.values.get("glibc.cpu.x86_shared_cache_size.value") if tun else None
    vm = facts.cpu.virtualization
    findings.append(Finding(
        id="glibc-nt-threshold-no-cache-size",
        severity="warning",
        message=(
            f"the machine reports {'no' if l3 is None else 'a zero-byte'} L3 cache"
            + (f" (virtualization: {vm})" if vm and vm != "none" else "")
            + f"; glibc derives its memcpy non-temporal threshold from the shared cache size "
            f"({NT_SOURCE}), so the threshold in effect"
            + (f" ({E.fmt_bytes(int(nt))}" + (f", from a shared cache of {E.fmt_bytes(int(shared))})"
                                              if isinstance(shared, int) else ")")
               if isinstance(nt, int) else "")
            + " rests on a missing cache size, not on this machine's memory"),
        remedy=("measure the memcpy sweep ('advisor probe --plugin host-buffer') and set "
                "glibc.cpu.x86_non_temporal_threshold from its cliff; on a VM, ask for the host's "
                "cache topology to be passed through (e.g. QEMU -cpu host,l3-cache=on)"),
        evidence=[E.EV_TUNABLES] if tun else []))


# --------------------------------------------------------------------------- first use


def _first_use(ev: list[Evidence], findings: list[Finding], nf: float) -> None:
    e = Evidence.find(ev, E.EV_FIRST_USE)
    if e is None or not e.series:
        return
    s = e.series[0]
    values = [E.point_median(p) for p in sorted(s.points, key=lambda p: (p.x is None, p.x))]
    values = [v for v in values if v is not None]
    if len(values) < 3:
        return
    fu = classify_series(values, higher_is_better=(s.unit == E.BPS))
    if fu.kind == "rising":
        unit = s.unit
        ss = E.fmt_bw(fu.steady_median) if unit == E.BPS else f"{fu.steady_median:g} {unit}"
        findings.append(Finding(
            id="first-touch-not-done",
            severity="warning",
            message=(
                f"first touch not done: run-to-run results rise monotonically and settle after "
                f"{fu.warmup} runs (steady state {ss}); the first runs paid the page faults"
            ),
            remedy=PREFAULT_REMEDY + "; report warm-up runs apart from the steady state",
            evidence=[E.EV_FIRST_USE],
        ))


# --------------------------------------------------------------------------- THP


def _thp(ev: list[Evidence], facts: Facts, findings: list[Finding], recs: list[Recommendation]) -> None:
    mode = THP.thp_mode(facts.memory.thp_enabled)
    e = Evidence.find(ev, E.EV_FIRST_TOUCH)
    if mode is None and e is not None:
        mode = THP.thp_mode(e.conditions.thp_enabled)
    text = THP.thp_explanation(mode, facts.memory.thp_defrag)
    speed = None
    if e is not None:
        base = e.values.get("fault_s_per_gib.base")
        huge = e.values.get("fault_s_per_gib.huge")
        sp = e.values.get("huge_speedup")
        if sp is None and base and huge:
            sp = float(base) / float(huge)
        if sp is not None:
            lo, hi = e.values.get("huge_speedup.ci_low"), e.values.get("huge_speedup.ci_high")
            speed = (float(sp), lo, hi)
            text += (
                f" Measured first-touch cost: {float(base):.3f} s/GiB with base pages, "
                f"{float(huge):.3f} s/GiB with MADV_HUGEPAGE ({float(sp):.2f}x"
                f"{_ci(lo, hi)})." if base and huge else ""
            )
    findings.append(Finding(
        id=f"thp-{mode or 'unknown'}",
        severity="info",
        message=text,
        evidence=[E.EV_FIRST_TOUCH] if e is not None else [],
    ))
    if mode != "madvise":
        return
    if speed is not None:
        _host_pool(e, facts, speed, recs)
    _malloc_hugetlb(ev, facts, findings, recs)


def _host_pool(e: Evidence, facts: Facts, speed, recs: list[Recommendation]) -> None:
    ratio, lo, hi = speed
    helps = (lo > 1.0) if lo is not None else ratio > 1.0
    if not helps:
        return
    # THP uses the PMD size (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size, recorded by
    # measure); without it the smallest huge page size the facts list.
    huge = int(e.values.get("huge_page_bytes", 0)) or min(
        (h for h in facts.memory.huge_page_sizes_bytes if h), default=None)
    if huge is None:
        return
    recs.append(Recommendation(
        id="host-pool-hugepages",
        title=f"Host pool: {E.fmt_bytes(huge)}-aligned chunks with MADV_HUGEPAGE before first touch",
        settings=[
            Setting(library="host-pool", name="chunk_alignment", value=huge, type="bytes",
                    unit="bytes", kind="config"),
            Setting(library="host-pool", name="chunk_size_multiple", value=huge, type="bytes",
                    unit="bytes", kind="config"),
            Setting(library="host-pool", name="madvise", value="MADV_HUGEPAGE", type="enum",
                    kind="config"),
        ],
        rationale=(
            f"THP is in madvise mode, so only regions that ask get huge pages; first touch of "
            f"huge-page-advised memory was {ratio:.2f}x faster{_ci(lo, hi)} here. Allocate host "
            f"pool backing blocks as multiples of {E.fmt_bytes(huge)}, aligned to it, and call "
            "madvise(MADV_HUGEPAGE) before the first write."
        ),
        confidence="high" if lo is not None else "medium",
        evidence=[E.EV_FIRST_TOUCH],
        verifiable=lo is not None,
    ))


def _malloc_hugetlb(ev: list[Evidence], facts: Facts, findings: list[Finding],
                    recs: list[Recommendation]) -> None:
    m = Evidence.find(ev, E.EV_MALLOC_HUGETLB)
    if m is None or E.glibc_at_least(facts, "2.35") is False:
        return
    sp = m.values.get("speedup")
    lo, hi = m.values.get("speedup.ci_low"), m.values.get("speedup.ci_high")
    verdict = m.values.get("verdict")  # harness compare verdict (CI beyond the A/A floor)
    if sp is None or not (verdict == "better" if verdict is not None
                          else (lo > 1.0) if lo is not None else float(sp) > 1.0):
        findings.append(Finding(
            id="glibc-malloc-hugetlb-no-gain", severity="info",
            message=f"GLIBC_TUNABLES=glibc.malloc.hugetlb=1 did not measurably speed up first "
                    f"touch of malloc'ed memory here ({float(sp or 0):.2f}x{_ci(lo, hi)})",
            evidence=[E.EV_MALLOC_HUGETLB]))
        return
    recs.append(Recommendation(
        id="glibc-malloc-hugetlb",
        title="glibc malloc: madvise(MADV_HUGEPAGE) on its mmap'ed chunks",
        settings=[_tunable_setting("glibc.malloc.hugetlb", "1", "0", HUGETLB_VERSIONS)],
        rationale=(
            f"THP is in madvise mode; with glibc.malloc.hugetlb=1 glibc (>= 2.35) asks for huge "
            f"pages on the memory malloc gets from mmap, and first touch of a large malloc'ed "
            f"buffer was {float(sp):.2f}x faster{_ci(lo, hi)} here."
        ),
        confidence="high" if lo is not None else "medium",
        evidence=[E.EV_MALLOC_HUGETLB],
        verifiable=True,
    ))


# --------------------------------------------------------------------------- memcpy sweep


def _sweep(ev, facts, findings, recs, nf) -> None:
    e = Evidence.find(ev, E.EV_SWEEP)
    if e is None:
        return
    d = (e).series_named("default")
    if d is None:
        return
    gone = withheld(ev, E.EV_SWEEP, "glibc non-temporal threshold advice")
    if gone is not None:  # aliasing, first touch or nothing physical left: no cliff to judge
        findings.append(gone)
        return
    # the cliff is a candidate (CIs and the within-process A/A floor decide); the advice needs
    # the A/B gain beyond the A/A noise floor measured between processes at each size
    current = e.values.get("nt_threshold.default_bytes")
    bad = E.implausible_nt(Evidence.find(ev, E.EV_TUNABLES), facts) or e.values.get(
        "nt_threshold.implausible")
    if bad:  # a threshold no machine can have: flagged, never used as the default
        findings.append(Finding(
            id="glibc-nt-threshold-implausible", severity="warning", evidence=[E.EV_SWEEP],
            message=(f"ld.so --list-tunables reports {bad}: not a threshold this machine can "
                     "have, so it is not used as the default the advice replaces"),
            remedy="check the glibc this process loads (ld.so --list-tunables) and "
                   "GLIBC_TUNABLES in the environment"))
        current = None
    cliff = CL.find_cliff(E.sweep_points(d),
                         noise_floor=float(e.values.get("noise_floor.within_run", 0.0)),
                         threshold_bytes=int(current) if current is not None else None)
    if cliff is None:
        findings.append(Finding(
            id="memcpy-no-cliff", severity="info",
            message="memcpy bandwidth has no mid-size cliff with the current glibc tunables: "
                    "no non-temporal threshold advice",
            evidence=[E.EV_SWEEP]))
        return
    tuned = e.values.get("nt_threshold.tuned_bytes")
    gain = CL.sweep_gain(e, noise_floor=nf)
    span = (E.fmt_bytes(cliff.start_bytes) if cliff.start_bytes == cliff.end_bytes
            else f"{E.fmt_bytes(cliff.start_bytes)}-{E.fmt_bytes(cliff.end_bytes)}")
    cliff_txt = (
        f"copies of {span} run "
        f"{cliff.depth:.2f}x slower than larger ones ({E.fmt_bw(cliff.plateau_bps)})"
    )
    if tuned is None or gain is None or not gain.helps or gain.best is None:
        why = ("this glibc has no glibc.cpu.x86_non_temporal_threshold"
               if e.values.get("nt_threshold.unsupported") else
               f"a --quick probe measures no tuned run (the full probe A/Bs "
               f"{hex(int(tuned))} in fresh processes)" if e.values.get("ab_skipped") and tuned
               else "no tuned run" if tuned is None or gain is None else (
            f"the tuned threshold lost at {E.fmt_bytes(gain.worst_loss)}" if gain.worst_loss
            else "the tuned threshold gave no gain beyond the noise floor"))
        findings.append(Finding(
            id="memcpy-cliff", severity="info",
            message=f"memcpy cliff: {cliff_txt}; {why}, so no tunable is advised",
            evidence=[E.EV_SWEEP]))
        return
    stab, ab_rounds = e.values.get("nt.stability"), e.values.get("interleave.rounds")
    if stab is not None and float(stab) < STABLE_SHARE:
        # the gain does not survive resampling the A/B rounds: advice that would flip from one
        # probe to the next is not given (issue 25 item 1)
        findings.append(Finding(
            id="memcpy-cliff", severity="info",
            message=(f"memcpy cliff: {cliff_txt}; the tuned threshold {hex(int(tuned))} gained "
                     f"in these {ab_rounds} A/B rounds, but only {float(stab):.0%} of "
                     f"resamples of them agree (policy {STABLE_SHARE:.0%}; measuring stopped: "
                     f"{e.values.get('nt.stopped')}), so no tunable is advised"),
            remedy="probe again with a larger --time-budget to measure more rounds",
            evidence=[E.EV_SWEEP]))
        return
    eff = e.values.get("nt_threshold.tuned_effective_bytes")
    if eff is not None and int(eff) != int(tuned):
        findings.append(Finding(
            id="memcpy-cliff", severity="info",
            message=f"memcpy cliff: {cliff_txt}; glibc did not take the tuned threshold "
                    f"{hex(int(tuned))} (ld.so --list-tunables shows {hex(int(eff))})",
            evidence=[E.EV_SWEEP]))
        return
    supported_cpu = E.glibc_at_least(facts, "2.28")
    supported_tune = E.glibc_at_least(facts, "2.26")
    if supported_tune is False:
        return
    item = ("glibc.cpu.x86_non_temporal_threshold" if supported_cpu is not False
            else "glibc.tune.x86_non_temporal_threshold")
    versions = NT_VERSIONS_CPU if supported_cpu is not False else NT_VERSIONS_TUNE
    r, lo, hi = gain.gains[gain.best]
    findings.append(Finding(
        id="memcpy-cliff", severity="warning",
        message=(f"memcpy cliff: {cliff_txt}: glibc keeps using cached stores up to its "
                 f"non-temporal threshold ({E.fmt_bytes(current) if current else 'unknown'}), "
                 "chosen from the cache size the machine reports"),
        remedy=f"set GLIBC_TUNABLES={item}={hex(int(tuned))}",
        evidence=[E.EV_SWEEP]))
    recs.append(Recommendation(
        id="glibc-non-temporal-threshold",
        title=f"glibc memcpy: non-temporal stores from {E.fmt_bytes(int(tuned))}",
        settings=[_tunable_setting(item, hex(int(tuned)),
                                   hex(int(current)) if current else None, versions)],
        rationale=(
            f"{cliff_txt}. With {item}={hex(int(tuned))} a {E.fmt_bytes(gain.best)} copy ran "
            f"{r:.2f}x faster{_ci(lo, hi)} in a fresh process and no swept size the setting affects got "
            "slower beyond its A/A noise floor."
            + (f" Stability {float(stab):.2f}: the share of {N_RESAMPLES} resamples of the "
               f"{ab_rounds} A/B rounds that give this advice (policy {STABLE_SHARE:.2f})."
               if stab is not None else "")
        ),
        confidence="high" if lo != r and stab is not None else "medium",
        evidence=[E.EV_SWEEP],
        verifiable=True,
    ))


# --------------------------------------------------------------------------- NUMA


def _numa(ev: list[Evidence], facts: Facts, findings: list[Finding]) -> None:
    nodes = facts.memory.numa_nodes or len(facts.memory.numa_node_cpus) or None
    e = Evidence.find(ev, E.EV_NUMA)
    if not nodes or nodes < 2:
        return
    placement = ""
    pinned = None
    if e is not None:
        pages = {k: v for k, v in e.values.items() if k.startswith("pages.node")}
        if pages:
            placement = " Placement achieved: " + ", ".join(
                f"{k[len('pages.'):]}={v}" for k, v in sorted(pages.items())) + " pages."
        if "local_bps" in e.values and "remote_bps" in e.values:
            placement += (f" Local {E.fmt_bw(float(e.values['local_bps']))} vs remote "
                          f"{E.fmt_bw(float(e.values['remote_bps']))}.")
        pinned = e.values.get("pinned")
        init = e.values.get("init")
        if init is not None:
            placement += f" Initialised by: {init}."
    findings.append(Finding(
        id="numa-first-touch",
        severity="warning" if pinned is False else "info",
        message=(f"{nodes} NUMA nodes: Linux places each page on the node of the thread that "
                 "first writes it, so data initialised by one thread all lands on one node."
                 + placement
                 + (" Thread/process pinning is not set, so the placement is left to chance."
                    if pinned is False else "")),
        remedy=("initialise every buffer with the same pinned threads (or processes) that run the "
                "timed kernel, or bind memory explicitly (numactl --membind / mbind); set pinning "
                "(OMP_PROC_BIND/OMP_PLACES, taskset, the MPI launcher's binding) and record the "
                "per-node page placement from /proc/<pid>/numa_maps"),
        evidence=[E.EV_NUMA] if e is not None else [],
    ))
