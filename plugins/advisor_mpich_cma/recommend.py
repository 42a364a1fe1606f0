"""The pure half of the mpich-cma probe: evidence + facts -> findings and recommendations.

No I/O, no clock, no environment: everything comes from the ``Evidence`` records written by
``check``/``measure`` (or recorded in a profile, or built from a field case) and the ``Facts``.
The evidence read is described in ``advisor_mpich_cma.evidence``.  Paired (MPI_T) evidence is
decided by minimax regret; separate-launch sweeps by the issue-4 rule of
``advisor_mpich_cma.threshold``, falling back to minimax regret over their rounds where that
rule finds no single threshold (both in ``advisor_mpich_cma.advice``).
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor.knobs import version_in
from advisor.measure import relabel_all, veto, withheld
from advisor.measure.mpi.causes import remedies_of
from advisor.models import Advice, Evidence, Facts, Finding, Recommendation

from advisor_mpich_cma import knobs
from advisor_mpich_cma.advice import (disable_settings, minimax_advice, sweep_advice,
                                      uses_cma_by_default)
from advisor_mpich_cma.emitted import emitted_findings
from advisor_mpich_cma.evidence import (LIBRARY, PAIRED, SWEEP, Library, library_of, paired,
                                        sane_library, sweeps)
from advisor_mpich_cma.identity import mpich_init_keeps_cma
from advisor_mpich_cma.threshold import fmt_bytes
from advisor_mpich_cma.trust import check_findings
from advisor_mpich_cma.usability import usability


def recommend(evidence: Sequence[Evidence], facts: Facts) -> Advice:
    """Findings and recommendations for MPICH's CMA path (pure; see the module docstring).

    :return: ``Advice``.  Blocked CMA: an error finding with causes and remedies, and the
        explicit disable where the library would otherwise use CMA.  Usable CMA with a sweep:
        the threshold recommendation (or "keep the default", or "no measurable effect").
    """
    # labels re-derived from each record; artefact points carry no bandwidth (harness)
    evidence = relabel_all(evidence)
    lib, bad_thr = sane_library(library_of(evidence, facts), facts)
    findings: list[Finding] = []
    recs: list[Recommendation] = []
    use = usability(evidence, facts)
    ev_ids = list(use.evidence)
    if bad_thr:
        findings.append(Finding(
            id="cma-library-threshold-implausible", severity="warning", evidence=[LIBRARY],
            message=(f"{bad_thr}: not a threshold this machine can have, so it is not used; the "
                     f"knob table's default ({lib.threshold_default}) stands in for it"),
            remedy="check the MPICH the job loads (mpivars next to its mpiexec) and any "
                   "MPIR_CVAR_/MPICH_ threshold already in the environment"))
    if lib.implementation and not lib.mpich:
        pass  # findings below still explain a blocked CMA to users of any MPI
    if not use.usable and use.causes:
        codes = [c.code for c in use.causes]
        if "device-pointer" in codes:
            findings.append(Finding(
                id="cma-device-pointer", severity="error",
                message=use.causes[codes.index("device-pointer")].message,
                remedy="; ".join(remedies_of(use.causes)), evidence=ev_ids))
        else:
            trade = ""
            if "yama" in codes:
                trade = (" Lowering ptrace_scope is a security trade-off: with 0, any process "
                         "can attach to every other process of the same user.")
            findings.append(Finding(
                id="cma-blocked", severity="error" if lib.mpich else "warning",
                message=use.reason + "." + trade,
                remedy="; ".join(remedies_of(use.causes)), evidence=ev_ids))
            if lib.mpich and uses_cma_by_default(lib, facts):
                init_note = ""
                if lib.upstream_mpich and not mpich_init_keeps_cma(facts.security.ptrace_scope):
                    init_note = (f" (MPICH's init check already turns CMA off for ptrace_scope="
                                 f"{facts.security.ptrace_scope}, but it does not test the call, so "
                                 "seccomp and user namespaces get past it)")
                recs.append(Recommendation(
                    id="cma-disable", title="Disable CMA explicitly: it fails on this machine",
                    settings=disable_settings(lib), confidence="high", evidence=ev_ids,
                    rationale=(f"{lib.implementation} {lib.version or ''} uses CMA by default "
                               f"(defaults from {lib.defaults_source}) and process_vm_readv "
                               f"fails here: {use.reason}{init_note}. Jobs would abort with "
                               "'process_vm_readv failed (errno 1)'.").replace("  ", " ")))
    elif not use.usable:
        findings.append(Finding(id="cma-untested", severity="info", message=use.reason))
    if lib.cray:
        findings += _cray_findings(facts, lib)
    scope = facts.security.ptrace_scope
    init_forces_off = (use.usable and lib.upstream_mpich and lib.version is not None
                       and version_in(lib.version, ">=5") and not mpich_init_keeps_cma(scope))
    if init_forces_off:
        findings.append(Finding(
            id="cma-forced-off-by-init", severity="info", evidence=ev_ids,
            message=(f"the kernel lets these processes use CMA, but MPICH {lib.version} turns "
                     f"it off at init because Yama ptrace_scope={scope} (it checks only that "
                     f"value, not CAP_SYS_PTRACE): {knobs.CMA_ENABLE}=1 would have no effect"),
            remedy="only kernel.yama.ptrace_scope=0 lets MPICH use CMA here (admin; security "
                   "trade-off: any process may then attach to every other process of its user)"))
    elif use.usable and lib.mpich:
        sweep_evs = sweeps(evidence)
        paired_evs = paired(evidence)
        # a record whose artefacts touch the whole comparison gives no advice, and says so
        gone = withheld(evidence, PAIRED if paired_evs else SWEEP, "CMA threshold advice")
        if gone is not None and (paired_evs or sweep_evs):
            findings.append(gone)
        elif paired_evs:
            r, f = minimax_advice(paired_evs, lib, ev_ids, bad_thr)
            recs += r
            findings += f
        elif sweep_evs:
            r, f = sweep_advice(sweep_evs, lib, facts, ev_ids, bad_thr)
            recs += r
            findings += f
    findings += state_findings(evidence)
    findings += check_findings(evidence)
    emitted, behaves = emitted_findings(evidence)
    findings += emitted
    if behaves is False:  # the emitted form routes otherwise than measured: no threshold advice
        recs = [r for r in recs if not any(s.name in (knobs.CMA_THRESHOLD, knobs.CRAY_SIZE)
                                           and not s.is_default for s in r.settings)]
    for ev in sweeps(evidence) + paired(evidence):
        if ev.conditions.buffer_kind == "pinned":
            findings.append(Finding(
                id="cma-pinned-buffers", severity="warning", evidence=[ev.id],
                message="the sweep used pinned host buffers: CMA from pinned memory can be much "
                        "slower than from pageable memory (eth-cscs/alps-gh200-reproducers); "
                        "the threshold holds for pinned buffers only"))
    # an artefact in a record lowers (some points) or withdraws the advice drawn from it
    return veto(Advice(recommendations=recs, findings=findings), evidence)


def state_findings(evidence: Sequence[Evidence]) -> list[Finding]:
    """Info finding ``cma-machine-state`` when paired evidence recorded a bimodal machine state
    (``state.bimodal``, written by the probe with ``states.state_of_paired``).  A condition, not
    a verdict: the paired ratios cancel it, so it changes no advice."""
    hit = [e for e in paired(evidence) if e.values.get("state.bimodal")]
    if not hit:
        return []
    parts = [f"{e.id}: {e.values.get('state.sizes_bimodal')} of "
             f"{e.values.get('state.sizes_tested')} sizes, modes x"
             f"{float(e.values.get('state.mode_ratio', 1.0)):.2f} apart, "
             f"{float(e.values.get('state.low_share', 0.0)):.0%} of batches slow" for e in hit]
    return [Finding(
        id="cma-machine-state", severity="info", evidence=[e.id for e in hit],
        message="intra-node copies switched between a fast and a slow state during the "
                "measurement (" + "; ".join(parts) + "). Each on/off ratio is taken between "
                "adjacent batches in the same state, so the advice does not depend on it; "
                "absolute bandwidths from this machine are state-dependent")]


def _cray_findings(facts: Facts, lib: Library) -> list[Finding]:
    out = []
    extra = facts.extra.get("mpich-cma", {})
    if extra.get("xpmem_device") is False:
        out.append(Finding(
            id="cma-xpmem-no-device", severity="info",
            message="no /dev/xpmem on this node: XPMEM single copy cannot work here, so "
                    "MPICH_SMP_SINGLE_COPY_MODE=XPMEM (the HPE Cray MPICH default) falls back; "
                    "XPMEM is never recommended without the device"))
    return out


def buffer_kind_finding(rows: Sequence[Sequence], message_bytes: int) -> Optional[Finding]:
    """Verdict on CMA from pinned host memory, from per-path timings of one message size.

    :param rows: ``(buffer_kind, path, seconds_per_message)``; paths containing ``cma`` are the
        intra-node single-copy path, paths containing ``nic`` go through the network card.
    :param message_bytes: the message size the rows were measured at.
    :return: a warning when pinned-memory CMA is slower than a NIC path or than pageable
        memory (ratios: pinned CMA time / each reference, the smallest NIC ratio quoted, i.e.
        the conservative one); None when it is not slower.
    """
    pinned_cma = [float(s) for k, p, s in rows if k == "pinned_host" and "cma" in p]
    nic = [float(s) for k, p, s in rows if k == "pinned_host" and "nic" in p]
    pageable = [float(s) for k, p, s in rows if k == "pageable_host" and "nic" not in p]
    if not pinned_cma:
        return None
    t = min(pinned_cma)
    parts = []
    if nic and t > max(nic):
        parts.append(f"{t / max(nic):.1f}x slower than the NIC path")
    if pageable and t > min(pageable):
        parts.append(f"{t / min(pageable):.1f}x slower than from pageable memory")
    if not parts:
        return None
    return Finding(
        id="cma-pinned-host", severity="warning",
        message=(f"CMA from pinned host memory ({fmt_bytes(int(message_bytes))} messages) is "
                 + " and ".join(parts) + ": the buffer kind decides, CMA is not optimal for "
                 "pinned buffers; measure with the buffer kind the application uses"))
