"""The glibc non-temporal threshold rules of the host-buffer advice (pure).

- ``glibc-nt-threshold-no-cache-size``: on x86 with no (or a zero-byte) L3 reported, glibc's
  threshold rests on a missing cache size (``NT_SOURCE``);
- ``memcpy-cliff`` / ``memcpy-no-cliff`` / ``glibc-nt-threshold-implausible`` and the
  recommendation ``glibc-non-temporal-threshold``: memcpy's mid-size cliff below the threshold
  (``cliff.find_cliff``), advised only when the tuned threshold gained beyond the A/A noise
  floor in fresh processes (``cliff.sweep_gain``) and that verdict is stable over resamples of
  the A/B rounds (``STABLE_SHARE``, issue 25 item 1).

Evidence read: ``memcpy-sweep`` (:mod:`advisor_host_buffer.measure_sweep`) and
``glibc-tunables`` (:mod:`advisor_host_buffer.tunables`).
"""

from __future__ import annotations

from advisor.measure import STABLE_SHARE, withheld
from advisor.measure.interleave import N_RESAMPLES
from advisor.models import Evidence, Facts, Finding, Recommendation

from .cliff import find_cliff, sweep_gain
from . import evidence
from .recommend_common import ci_text, tunable_setting

#: glibc.cpu.x86_non_temporal_threshold: named glibc.tune.* in 2.26-2.27, glibc.cpu.* since 2.28
#: (glibc manual "Hardware Capability Tunables" 2.26/2.27 vs 2.28; libc-alpha 2018-07 rename).
NT_VERSIONS_CPU = ">=2.28"
NT_VERSIONS_TUNE = ">=2.26,<2.28"

#: glibc's x86 memcpy derives ``x86_non_temporal_threshold`` from the shared (last-level) cache
#: size it reads with cpuid at start-up (glibc ``sysdeps/x86/dl-cacheinfo.h``,
#: ``dl_init_cacheinfo``: a fraction of the shared cache, raised to the tunable's minimum).  With
#: no shared cache reported the threshold is derived from nothing.
NT_SOURCE = "glibc sysdeps/x86/dl-cacheinfo.h (dl_init_cacheinfo)"


def nt_cache_size(ev: list[Evidence], facts: Facts, findings: list[Finding]) -> None:
    """Append ``glibc-nt-threshold-no-cache-size`` on x86 when the facts report no L3 size."""
    if facts.cpu.arch not in ("x86_64", "i686", "i386"):
        return  # the tunable exists only on x86
    l3 = facts.cpu.cache_l3_bytes
    if l3:  # reported and non-zero
        return
    tun = Evidence.find(ev, evidence.EV_TUNABLES)
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
            + (f" ({evidence.fmt_bytes(int(nt))}" + (f", from a shared cache of {evidence.fmt_bytes(int(shared))})"
                                              if isinstance(shared, int) else ")")
               if isinstance(nt, int) else "")
            + " rests on a missing cache size, not on this machine's memory"),
        remedy=("measure the memcpy sweep ('advisor probe --plugin host-buffer') and set "
                "glibc.cpu.x86_non_temporal_threshold from its cliff; on a VM, ask for the host's "
                "cache topology to be passed through (e.g. QEMU -cpu host,l3-cache=on)"),
        evidence=[evidence.EV_TUNABLES] if tun else []))


def _tie_text(e: Evidence, pooled_start: int) -> str:
    """The rationale's sentence on cliff sizes below the tuned threshold that only some fresh
    default processes found slow (``cliff.reproduced_cliff``), or ''."""
    rs = e.values.get("cliff.reproduced_start_bytes")
    first = e.values.get("cliff.start_bytes")
    low = min(int(x) for x in (first, pooled_start) if x is not None)
    if rs is None or int(rs) <= low:
        return ""
    k = e.values.get("nt.default_processes")
    return (f" Copies from {evidence.fmt_bytes(low)} to just below "
            f"{evidence.fmt_bytes(int(rs))} were slower than the plateau in some of the {k} "
            "fresh default processes and not in others: streaming them ties with glibc's "
            "cached stores, so they keep the default's path (a tie goes to the value nearest "
            "the default).")


def sweep(ev: list[Evidence], facts: Facts, findings: list[Finding],
          recs: list[Recommendation], nf: float) -> None:
    """Append the memcpy-cliff finding of the ``memcpy-sweep`` record and, when the tuned
    threshold measured better beyond the noise floor ``nf`` (a fraction), the
    ``glibc-non-temporal-threshold`` recommendation."""
    e = Evidence.find(ev, evidence.EV_SWEEP)
    if e is None:
        return
    d = (e).series_named("default")
    if d is None:
        return
    gone = withheld(ev, evidence.EV_SWEEP, "glibc non-temporal threshold advice")
    if gone is not None:  # aliasing, first touch or nothing physical left: no cliff to judge
        findings.append(gone)
        return
    # the cliff is a candidate (CIs and the within-process A/A floor decide); the advice needs
    # the A/B gain beyond the A/A noise floor measured between processes at each size
    current = e.values.get("nt_threshold.default_bytes")
    bad = evidence.implausible_nt(Evidence.find(ev, evidence.EV_TUNABLES), facts) or e.values.get(
        "nt_threshold.implausible")
    if bad:  # a threshold no machine can have: flagged, never used as the default
        findings.append(Finding(
            id="glibc-nt-threshold-implausible", severity="warning", evidence=[evidence.EV_SWEEP],
            message=(f"ld.so --list-tunables reports {bad}: not a threshold this machine can "
                     "have, so it is not used as the default the advice replaces"),
            remedy="check the glibc this process loads (ld.so --list-tunables) and "
                   "GLIBC_TUNABLES in the environment"))
        current = None
    if e.values.get("nt.stopped") == evidence.NT_NOT_REPRODUCED:
        k, v = e.values.get("nt.default_processes"), e.values
        findings.append(Finding(
            id="memcpy-cliff", severity="info",
            message=(f"memcpy cliff in the first sweep only: copies of "
                     f"{evidence.fmt_bytes(int(v['cliff.start_bytes']))}-"
                     f"{evidence.fmt_bytes(int(v['cliff.end_bytes']))} ran "
                     f"{float(v['cliff.depth']):.2f}x slower than larger ones there, but "
                     f"{f'one of {k}' if k else 'a'} fresh default processes did not find "
                     f"{evidence.fmt_bytes(int(v['cliff.end_bytes']))} slower than the "
                     "plateau, so the cliff is not glibc's code path here and no tunable is "
                     "advised"),
            evidence=[evidence.EV_SWEEP]))
        return
    cliff = find_cliff(evidence.sweep_points(d),
                         noise_floor=float(e.values.get("noise_floor.within_run", 0.0)),
                         threshold_bytes=int(current) if current is not None else None)
    if cliff is None:
        findings.append(Finding(
            id="memcpy-no-cliff", severity="info",
            message="memcpy bandwidth has no mid-size cliff with the current glibc tunables: "
                    "no non-temporal threshold advice",
            evidence=[evidence.EV_SWEEP]))
        return
    tuned = e.values.get("nt_threshold.tuned_bytes")
    gain = sweep_gain(e, noise_floor=nf)
    span = (evidence.fmt_bytes(cliff.start_bytes) if cliff.start_bytes == cliff.end_bytes
            else f"{evidence.fmt_bytes(cliff.start_bytes)}-{evidence.fmt_bytes(cliff.end_bytes)}")
    cliff_txt = (
        f"copies of {span} run "
        f"{cliff.depth:.2f}x slower than larger ones ({evidence.fmt_bw(cliff.plateau_bps)})"
    )
    if tuned is None or gain is None or not gain.helps or gain.best is None:
        why = ("this glibc has no glibc.cpu.x86_non_temporal_threshold"
               if e.values.get("nt_threshold.unsupported") else
               f"a --quick probe measures no tuned run (the full probe A/Bs "
               f"{hex(int(tuned))} in fresh processes)" if e.values.get("ab_skipped") and tuned
               else "no tuned run" if tuned is None or gain is None else (
            f"the tuned threshold lost at {evidence.fmt_bytes(gain.worst_loss)}" if gain.worst_loss
            else "the tuned threshold gave no gain beyond the noise floor"))
        findings.append(Finding(
            id="memcpy-cliff", severity="info",
            message=f"memcpy cliff: {cliff_txt}; {why}, so no tunable is advised",
            evidence=[evidence.EV_SWEEP]))
        return
    stab, ab_rounds = e.values.get("nt.stability"), e.values.get("interleave.rounds")
    procs = e.values.get("nt.default_processes")
    if stab is not None and float(stab) < STABLE_SHARE:
        # the gain does not survive resampling the A/B rounds: advice that would flip from one
        # probe to the next is not given (issue 25 item 1)
        findings.append(Finding(
            id="memcpy-cliff", severity="info",
            message=(f"memcpy cliff: {cliff_txt}; the tuned threshold {hex(int(tuned))} gained "
                     f"in these {ab_rounds} A/B rounds, but only {float(stab):.0%} of "
                     f"resamples of them"
                     + (f" and of the {procs} default processes it was chosen from"
                        if procs else "")
                     + f" agree (policy {STABLE_SHARE:.0%}; measuring stopped: "
                     f"{e.values.get('nt.stopped')}), so no tunable is advised"),
            remedy="probe again with a larger --time-budget to measure more rounds",
            evidence=[evidence.EV_SWEEP]))
        return
    eff = e.values.get("nt_threshold.tuned_effective_bytes")
    if eff is not None and int(eff) != int(tuned):
        findings.append(Finding(
            id="memcpy-cliff", severity="info",
            message=f"memcpy cliff: {cliff_txt}; glibc did not take the tuned threshold "
                    f"{hex(int(tuned))} (ld.so --list-tunables shows {hex(int(eff))})",
            evidence=[evidence.EV_SWEEP]))
        return
    supported_cpu = evidence.glibc_at_least(facts, "2.28")
    supported_tune = evidence.glibc_at_least(facts, "2.26")
    if supported_tune is False:
        return
    item = ("glibc.cpu.x86_non_temporal_threshold" if supported_cpu is not False
            else "glibc.tune.x86_non_temporal_threshold")
    versions = NT_VERSIONS_CPU if supported_cpu is not False else NT_VERSIONS_TUNE
    r, lo, hi = gain.gains[gain.best]
    findings.append(Finding(
        id="memcpy-cliff", severity="warning",
        message=(f"memcpy cliff: {cliff_txt}: glibc keeps using cached stores up to its "
                 f"non-temporal threshold ({evidence.fmt_bytes(current) if current else 'unknown'}), "
                 "chosen from the cache size the machine reports"),
        remedy=f"set GLIBC_TUNABLES={item}={hex(int(tuned))}",
        evidence=[evidence.EV_SWEEP]))
    recs.append(Recommendation(
        id="glibc-non-temporal-threshold",
        title=f"glibc memcpy: non-temporal stores from {evidence.fmt_bytes(int(tuned))}",
        settings=[tunable_setting(item, hex(int(tuned)),
                                   hex(int(current)) if current else None, versions)],
        rationale=(
            f"{cliff_txt}. With {item}={hex(int(tuned))} a {evidence.fmt_bytes(gain.best)} copy ran "
            f"{r:.2f}x faster{ci_text(lo, hi)} in a fresh process and no swept size the setting affects got "
            "slower beyond its A/A noise floor."
            + _tie_text(e, cliff.start_bytes)
            + (f" Stability {float(stab):.2f}: the lower of two shares of {N_RESAMPLES} "
               f"resamples that give this advice, those of the {ab_rounds} A/B rounds"
               + (f" and those of the {procs} default processes the threshold was chosen from"
                  if procs else "") + f" (policy {STABLE_SHARE:.2f})."
               if stab is not None else "")
        ),
        confidence="high" if lo != r and stab is not None else "medium",
        evidence=[evidence.EV_SWEEP],
        verifiable=True,
    ))

