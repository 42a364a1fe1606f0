"""The pure half of the mpich-cma probe: evidence + facts -> findings and recommendations.

No I/O, no clock, no environment: everything comes from the ``Evidence`` records written by
``check``/``measure`` (or recorded in a profile, or built from a field case) and the ``Facts``.

Evidence read (ids and keys are this plugin's own, written by ``advisor_mpich_cma.plugin``):

* ``cma-sibling``: live sibling ``process_vm_readv`` test; values ``result`` ("ok", "EPERM",
  ...), ``errno``, ``parent_reads_child``, ``reader_seccomp``, ``reader_cap_eff``,
  ``reader_user_ns``, ``target_user_ns``.
* ``cma-library``: identity and effective defaults; values ``implementation``, ``flavour``,
  ``version``, ``device``, ``cma_enable_default``, ``threshold_default_bytes``,
  ``defaults_source``, ``mode_default`` (Cray).
* ``cma-mpi-smoke``: a 2-rank run with CMA forced on; values ``ok``, ``errno``, ``error``,
  ``rank_seccomp``, ``rank_user_ns_distinct``.
* ``cma-paired`` (and ``cma-paired.<pair>``): CMA on vs off switched through MPI_T inside one
  launch (worker ``paired`` mode); series ``latency:<config>`` / ``bandwidth:<config>`` with one
  point per size whose samples are one value per round, index-aligned between the configs;
  values ``paired`` True, ``rounds``, ``buffer_pages`` ("base": 4 KiB pages), ``state.*`` (the
  fast/slow machine state, ``advisor_mpich_cma.states``: a condition, reported as the info
  finding ``cma-machine-state``), ``refine.steps`` / ``refine.sizes`` (bisected sizes, bytes).
  When present it decides the threshold by minimax regret (``advisor_mpich_cma.recommend``);
  the separate-launch sweep is then not used.
* ``cma-paired.thp`` (and ``cma-paired.thp.<pair>``): the same with THP-backed buffers
  (``buffer_pages`` "thp", ``thp_backed_bytes_min_rank``: huge-page bytes the kernel gave).
  Decided together with the base-page evidence (``minimax_advice`` explains why).
* ``cma-sweep`` (and ``cma-sweep.<pair>`` for NUMA pairs): series ``latency:<config>`` (unit s,
  one-way ping-pong time) and ``bandwidth:<config>`` (unit bytes/s, osu_bw-style window) with
  x = message bytes and one point per independent launch (label ``run<i>``); configs
  ``cma-on`` (forced at every size) and ``cma-off``.

The threshold rule (issue 4): the smallest measured size from which CMA wins on both latency and
bandwidth, each win meaning the bootstrap CI of the on/off ratio of medians lies beyond the
noise floor (``advisor.measure.compare``), at that size and every larger one.  The noise floor
at a size is measured, not chosen: the A/A spread of the independent launches of each
configuration (``noise_floor_from_aa``), the larger of the two.  Where that rule finds no single
threshold, the sweep's rounds (one on and one off launch each) are decided by minimax regret as
well instead of giving no advice.
"""

from __future__ import annotations

import errno as _errno
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from advisor.knobs import version_in
from advisor.models import Advice, Evidence, Facts, Finding, Recommendation, Setting

from advisor_mpich_cma import knobs as K
from advisor_mpich_cma.causes import (DISABLE_REMEDY, Cause, classify_log, errno_code, explain,
                                      mpich_init_keeps_cma, remedies_of)

SIBLING = "cma-sibling"
LIBRARY = "cma-library"
SMOKE = "cma-mpi-smoke"
SWEEP = "cma-sweep"
PAIRED = "cma-paired"
DECISION = "cma-decision"
ON, OFF = "cma-on", "cma-off"
LAT, BW = "latency", "bandwidth"

#: The bootstrap seed of every comparison: fixed so recommend is a pure function.
SEED = 0
#: Bootstrap resamples per comparison: 1000, the minimum Efron & Tibshirani (1993, ch. 19)
#: give for percentile intervals; a sweep makes ~40 comparisons, so this bounds recommend's cost.
N_BOOT = 1000


# --------------------------------------------------------------------------- evidence access


def _by_id(evidence: Iterable[Evidence]) -> dict[str, Evidence]:
    return {e.id: e for e in evidence}


def _sweeps(evidence: Iterable[Evidence]) -> list[Evidence]:
    return [e for e in evidence if e.id == SWEEP or e.id.startswith(SWEEP + ".")]


def _paired(evidence: Iterable[Evidence]) -> list[Evidence]:
    return [e for e in evidence if e.id == PAIRED or e.id.startswith(PAIRED + ".")]


@dataclass(frozen=True)
class Library:
    implementation: Optional[str]
    flavour: Optional[str]
    version: Optional[str]
    cma_enable_default: Optional[int]
    threshold_default: Optional[int]
    defaults_source: Optional[str]
    mode_default: Optional[str] = None

    @property
    def cray(self) -> bool:
        return self.flavour == K.CRAY

    @property
    def mpich(self) -> bool:
        return (self.implementation or "").lower() == "mpich"

    @property
    def upstream_mpich(self) -> bool:
        return self.mpich and not self.cray


def library_of(evidence: Iterable[Evidence], facts: Facts) -> Library:
    """Library identity and defaults: the ``cma-library`` evidence, else ``facts.mpi`` with the
    knob table as labelled fallback."""
    ev = _by_id(evidence).get(LIBRARY)
    v = dict(ev.values) if ev else {}
    impl = v.get("implementation") or facts.mpi.implementation
    flavour = v.get("flavour") or facts.mpi.flavour or ("upstream" if impl == "mpich" else None)
    version = v.get("version") or facts.mpi.version
    src = v.get("defaults_source")
    enable = v.get("cma_enable_default")
    thr = v.get("threshold_default_bytes")
    if src is None and impl == "mpich":
        src = "built-in table (fallback: library not queried)"
        if flavour == K.CRAY:
            thr = K.knob(K.CRAY_SIZE).default_for(version)
        else:
            enable = K.knob(K.CMA_ENABLE).default_for(version)
            thr = K.knob(K.CMA_THRESHOLD).default_for(version)
    mode = v.get("mode_default") or (K.knob(K.CRAY_MODE).default_for(version)
                                     if flavour == K.CRAY else None)
    return Library(impl, flavour, version, _int(enable), _int(thr), src, mode)


def _int(v) -> Optional[int]:
    try:
        return int(v) if v is not None and v != "" else None
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- usability


@dataclass(frozen=True)
class Usability:
    usable: bool
    reason: str
    causes: tuple[Cause, ...] = ()
    evidence: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def usability(evidence: Iterable[Evidence], facts: Facts,
              profile_allows: Optional[bool] = None) -> Usability:
    """Can CMA work here?  Decided by the live probes only (sibling test, then the MPI smoke
    run); the machine facts and a parsed seccomp profile only explain a failure.

    :param profile_allows: what a parsed seccomp profile says (``seccomp_profile_allows_cma``),
        when one is known; if it disagrees with the live probe the probe wins and a note says so.
    :return: ``Usability``; ``usable`` False when any live probe failed; unknown (no probe)
        counts as usable=False with the reason "not tested".
    """
    evidence = list(evidence)
    evs = _by_id(evidence)
    sec = facts.security
    sib = evs.get(SIBLING)
    smokes = [e for e in evidence if e.id == SMOKE or e.id.startswith(SMOKE + ".")]
    if sib is None and not smokes:
        return Usability(False, "CMA not tested: no live process_vm_readv probe ran")
    causes: list[Cause] = []
    used: list[str] = []
    notes: list[str] = []
    probe_ok = True
    if sib is not None:
        v = sib.values
        used.append(SIBLING)
        result = v.get("result")
        code = errno_code(v.get("errno")) if v.get("errno") not in (None, -1) else errno_code(result)
        if code != 0:
            probe_ok = False
            reader = {"seccomp": v.get("reader_seccomp"), "cap_eff": v.get("reader_cap_eff"),
                      "user_ns": v.get("reader_user_ns")}
            target = {"user_ns": v.get("target_user_ns")}
            causes += explain(code if code is not None else result, reader=reader, target=target,
                              ptrace_scope=sec.ptrace_scope, cap_sys_ptrace=sec.cap_sys_ptrace,
                              seccomp_mode=sec.seccomp_mode, container=sec.container,
                              kernel_release=facts.kernel.release)
            if v.get("parent_reads_child") in ("ok", 0):
                notes.append("a parent reading its own child succeeded: only the sibling test "
                             "shows what MPI ranks meet")
    for smoke in smokes:
        if not probe_ok:
            break
        v = smoke.values
        if v.get("launch_failed"):
            notes.append(f"{smoke.id}: the MPI job did not run, which says nothing about CMA")
            continue
        used.append(smoke.id)
        if v.get("ok"):
            continue
        probe_ok = False
        code = errno_code(v.get("errno")) if v.get("errno") not in (None, -1) else \
            classify_log(str(v.get("error", "")))
        reader = {"seccomp": v.get("rank_seccomp"), "cap_eff": v.get("rank_cap_eff")}
        target = None
        if v.get("rank_user_ns_distinct"):
            reader["user_ns"], target = "rank0", {"user_ns": "rank1"}
        if code is None:
            causes.append(Cause("unknown", "the 2-rank MPI run with CMA forced on failed: "
                                + str(v.get("error", ""))[:300], (DISABLE_REMEDY,)))
        else:
            causes += explain(code, reader=reader, target=target,
                              ptrace_scope=sec.ptrace_scope, cap_sys_ptrace=sec.cap_sys_ptrace,
                              seccomp_mode=sec.seccomp_mode, container=sec.container,
                              kernel_release=facts.kernel.release)
    if not used:
        return Usability(False, "CMA not tested: " + "; ".join(notes), (), (), tuple(notes))
    if profile_allows is not None and profile_allows != probe_ok:
        notes.append("the seccomp profile says process_vm_readv is %s but the live probe %s: "
                     "trusting the live probe" % ("allowed" if profile_allows else "denied",
                                                  "succeeded" if probe_ok else "failed"))
    if probe_ok:
        return Usability(True, "sibling processes can read each other with process_vm_readv"
                         + (" and a 2-rank MPI run with CMA forced on completed"
                            if smokes else ""), (), tuple(used), tuple(notes))
    reason = "CMA blocked: " + "; ".join(c.message for c in causes)
    if notes:
        reason += " (" + "; ".join(notes) + ")"
    return Usability(False, reason, tuple(causes), tuple(used), tuple(notes))


# --------------------------------------------------------------------------- sweep analysis


@dataclass(frozen=True)
class SizeVerdict:
    nbytes: int
    lat_ratio: float
    lat_ci: tuple[float, float]
    lat_verdict: str
    lat_floor: float
    bw_ratio: float
    bw_ci: tuple[float, float]
    bw_verdict: str
    bw_floor: float
    runs: int
    #: measured fast/slow state swing across the launches (mode ratio - 1; 0: one mode), which
    #: the noise floors already include (``states``)
    state_swing: float = 0.0

    @property
    def wins(self) -> bool:
        return self.lat_verdict == "better" and self.bw_verdict == "better"

    @property
    def loses(self) -> bool:
        return "worse" in (self.lat_verdict, self.bw_verdict)


def _runs(ev: Evidence, metric: str, config: str) -> dict[int, list[list[float]]]:
    out: dict[int, list[list[float]]] = {}
    for s in ev.series:
        if s.name != f"{metric}:{config}":
            continue
        for p in s.points:
            if p.x is None or not p.samples or p.artefact:
                continue
            out.setdefault(int(p.x), []).append(list(p.samples))
    return out


def kept_runs(runs: Sequence[Sequence[float]], *, higher_is_better: bool) -> list[list[float]]:
    """The least disturbed half of the repeats of one configuration (at least 2, all if fewer).

    Interference from other processes (a rank descheduled on a busy node) only ever adds time,
    so the undisturbed repeats are the fastest ones; Python's ``timeit`` documentation makes the
    same argument for taking the minimum of repeats ("higher values ... are typically ... caused
    by other processes interfering with your timing accuracy").  Both configurations are
    trimmed alike; the noise floor is then the A/A spread among the kept repeats.
    """
    import math

    import numpy as np

    runs = [list(r) for r in runs if len(r)]
    if len(runs) <= 2:
        return runs
    order = sorted(runs, key=lambda r: float(np.median(r)), reverse=higher_is_better)
    return order[:max(2, math.ceil(len(runs) / 2))]


def _kept_swing(all_runs: Sequence[Sequence[float]], kept: Sequence[Sequence[float]]) -> float:
    """The fast/slow swing (mode ratio - 1) of the per-launch medians of ``all_runs`` when they
    are bimodal (``states.bimodality``) and ``kept`` holds launches from both modes, else 0."""
    import numpy as np

    from advisor_mpich_cma.states import bimodality

    runs = [list(r) for r in all_runs if len(r)]
    b = bimodality([float(np.median(r)) for r in runs])
    if not b.bimodal:
        return 0.0
    kept_lists = [list(k) for k in kept]  # kept_runs returns copies: match by content
    in_low = {i in b.low_index for i, r in enumerate(runs) if r in kept_lists}
    return b.mode_ratio - 1.0 if len(in_low) == 2 else 0.0


def analyse_sweep(ev: Evidence, *, on: str = ON, off: str = OFF) -> list[SizeVerdict]:
    """Per message size: CMA on vs off for latency and bandwidth, with CI and noise floor.

    Ratios are oriented so that > 1 means CMA on is better (harness ``compare``).  Separate
    launches may sit in different machine states (background.md §4): where the per-launch
    medians of either configuration are bimodal (``states.bimodality``), the noise floor of
    that size and measure *and the kept runs (``kept_runs``) still hold launches of both
    modes*, the noise floor is widened to the measured swing (mode ratio - 1), so the state is
    never read as a CMA effect (the choice is explained in ``advisor_mpich_cma.states``).  When
    the kept runs all sit in one mode the comparison is already within one mode and the floor
    stays: the trimming has removed the other mode (and interference, which also splits a
    series in two: a descheduled launch is 100x slower, not a machine state).
    :raises ValueError: from the harness on empty or non-positive samples.
    """
    from advisor.measure import compare, noise_floor_from_aa

    lat_on, lat_off = _runs(ev, LAT, on), _runs(ev, LAT, off)
    bw_on, bw_off = _runs(ev, BW, on), _runs(ev, BW, off)
    sizes = sorted(set(lat_on) & set(lat_off) & set(bw_on) & set(bw_off))
    out = []
    for n in sizes:
        res = {}
        swings: dict[str, float] = {}
        for name, a_all, b_all, hib in ((LAT, lat_off[n], lat_on[n], False),
                                        (BW, bw_off[n], bw_on[n], True)):
            a_runs = kept_runs(a_all, higher_is_better=hib)
            b_runs = kept_runs(b_all, higher_is_better=hib)
            floor = max(noise_floor_from_aa(a_runs) if len(a_runs) > 1 else 0.0,
                        noise_floor_from_aa(b_runs) if len(b_runs) > 1 else 0.0)
            swing = max(_kept_swing(a_all, a_runs), _kept_swing(b_all, b_runs))
            floor = max(floor, swing)
            swings[name] = swing
            a = [x for r in a_runs for x in r]
            b = [x for r in b_runs for x in r]
            res[name] = (compare(a, b, noise_floor=floor, higher_is_better=hib, seed=SEED,
                                 n_boot=N_BOOT), floor)
        (lc, lf), (bc, bf) = res[LAT], res[BW]
        out.append(SizeVerdict(n, lc.ratio, (lc.ci_low, lc.ci_high), lc.verdict, lf,
                               bc.ratio, (bc.ci_low, bc.ci_high), bc.verdict, bf,
                               min(len(lat_on[n]), len(lat_off[n])),
                               max(swings.values(), default=0.0)))
    return out


@dataclass(frozen=True)
class Threshold:
    nbytes: Optional[int]
    strict: bool
    verdicts: tuple[SizeVerdict, ...]

    @property
    def any_win(self) -> bool:
        return any(v.wins for v in self.verdicts)

    @property
    def any_loss(self) -> bool:
        return any(v.loses for v in self.verdicts)


def threshold_from(verdicts: Sequence[SizeVerdict]) -> Threshold:
    """The smallest measured size at which CMA wins on both latency and bandwidth and above which
    it loses at no size.

    ``strict`` is True when CMA also wins at every larger size (the rule of issue 4 verbatim);
    sizes above the threshold whose CI does not clear the noise floor (indistinguishable, not
    worse) are tolerated with ``strict=False``, which lowers the confidence: requiring wins at
    every larger size would let one noisy point (e.g. 64 KiB on a busy node) push the threshold
    far above sizes where CMA clearly wins.  ``nbytes`` is None when no size qualifies.
    """
    vs = sorted(verdicts, key=lambda v: v.nbytes)
    for i, v in enumerate(vs):
        if v.wins and not any(w.loses for w in vs[i + 1:]):
            return Threshold(v.nbytes, all(w.wins for w in vs[i:]), tuple(vs))
    return Threshold(None, False, tuple(vs))


def _fmt_bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def _table(vs: Sequence[SizeVerdict]) -> str:
    """Per size: each ratio with its CI, the A/A noise floor it was judged against, and the
    verdict (a CI far from 1 is still "indistinguishable" when the repeats of one configuration
    disagree by more than that)."""
    return "; ".join(
        f"{_fmt_bytes(v.nbytes)}: latency x{v.lat_ratio:.2f} [{v.lat_ci[0]:.2f}, {v.lat_ci[1]:.2f}]"
        f" A/A floor {v.lat_floor:.1%} {v.lat_verdict}, bandwidth x{v.bw_ratio:.2f} "
        f"[{v.bw_ci[0]:.2f}, {v.bw_ci[1]:.2f}] A/A floor {v.bw_floor:.1%} {v.bw_verdict}"
        for v in vs)


def _around(per_pair, thr: int) -> str:
    """Ratios with CI at the threshold and at the size just below it, per pair."""
    out = []
    for ev, t in per_pair:
        vs = list(t.verdicts)
        at = [v for v in vs if v.nbytes == thr] or [v for v in vs if v.nbytes >= thr][:1]
        below = [v for v in vs if v.nbytes < thr][-1:]
        out.append(f"{ev.id}: " + _table(below + at))
    return "Measured (ratio > 1: CMA better, 95 % CI): " + " | ".join(out)


# --------------------------------------------------------------------------- advice


def _disable_settings(lib: Library) -> list[Setting]:
    if lib.cray:
        return [Setting(library="mpich", flavour=K.CRAY, name=K.CRAY_MODE, value="NONE",
                        type="enum", default=lib.mode_default)]
    return [Setting(library="mpich", flavour=K.UPSTREAM, name=K.CMA_ENABLE, value=0, type="int",
                    default=lib.cma_enable_default, versions=K.knob(K.CMA_ENABLE).versions)]


def _enable_settings(lib: Library, threshold: int) -> list[Setting]:
    if lib.cray:
        return [Setting(library="mpich", flavour=K.CRAY, name=K.CRAY_MODE, value="CMA",
                        type="enum", default=lib.mode_default,
                        is_default=lib.mode_default == "CMA"),
                Setting(library="mpich", flavour=K.CRAY, name=K.CRAY_SIZE, value=int(threshold),
                        type="bytes", unit="bytes", default=lib.threshold_default,
                        is_default=lib.threshold_default == threshold)]
    return [Setting(library="mpich", flavour=K.UPSTREAM, name=K.CMA_ENABLE, value=1, type="int",
                    default=lib.cma_enable_default, versions=K.knob(K.CMA_ENABLE).versions,
                    is_default=lib.cma_enable_default == 1),
            Setting(library="mpich", flavour=K.UPSTREAM, name=K.CMA_THRESHOLD,
                    value=int(threshold), type="bytes", unit="bytes",
                    default=lib.threshold_default, versions=K.knob(K.CMA_THRESHOLD).versions,
                    is_default=lib.threshold_default == threshold)]


def _library_uses_cma_by_default(lib: Library, facts: Optional[Facts]) -> bool:
    if lib.cray:
        return lib.mode_default == "CMA"
    return lib.upstream_mpich and lib.cma_enable_default == 1


def recommend(evidence: Sequence[Evidence], facts: Facts) -> Advice:
    """Findings and recommendations for MPICH's CMA path (pure; see the module docstring).

    :return: ``Advice``.  Blocked CMA: an error finding with causes and remedies, and the
        explicit disable where the library would otherwise use CMA.  Usable CMA with a sweep:
        the threshold recommendation (or "keep the default", or "no measurable effect").
    """
    evidence = list(evidence)
    lib = library_of(evidence, facts)
    findings: list[Finding] = []
    recs: list[Recommendation] = []
    use = usability(evidence, facts)
    ev_ids = list(use.evidence)
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
            if lib.mpich and _library_uses_cma_by_default(lib, facts):
                init_note = ""
                if lib.upstream_mpich and not mpich_init_keeps_cma(facts.security.ptrace_scope):
                    init_note = (f" (MPICH's init check already turns CMA off for ptrace_scope="
                                 f"{facts.security.ptrace_scope}, but it does not test the call, so "
                                 "seccomp and user namespaces get past it)")
                recs.append(Recommendation(
                    id="cma-disable", title="Disable CMA explicitly: it fails on this machine",
                    settings=_disable_settings(lib), confidence="high", evidence=ev_ids,
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
                     f"value, not CAP_SYS_PTRACE): {K.CMA_ENABLE}=1 would have no effect"),
            remedy="only kernel.yama.ptrace_scope=0 lets MPICH use CMA here (admin; security "
                   "trade-off: any process may then attach to every other process of its user)"))
    elif use.usable and lib.mpich:
        sweeps = _sweeps(evidence)
        paired = _paired(evidence)
        if paired:
            r, f = minimax_advice(paired, lib, ev_ids)
            recs += r
            findings += f
        elif sweeps:
            r, f = _threshold_advice(sweeps, lib, facts, ev_ids)
            recs += r
            findings += f
    findings += state_findings(evidence)
    for ev in _sweeps(evidence) + _paired(evidence):
        if ev.conditions.buffer_kind == "pinned":
            findings.append(Finding(
                id="cma-pinned-buffers", severity="warning", evidence=[ev.id],
                message="the sweep used pinned host buffers: CMA from pinned memory can be much "
                        "slower than from pageable memory (eth-cscs/alps-gh200-reproducers); "
                        "the threshold holds for pinned buffers only"))
    return Advice(recommendations=recs, findings=findings)


def state_findings(evidence: Sequence[Evidence]) -> list[Finding]:
    """Info finding ``cma-machine-state`` when paired evidence recorded a bimodal machine state
    (``state.bimodal``, written by the probe with ``states.state_of_paired``).  A condition, not
    a verdict: the paired ratios cancel it, so it changes no advice."""
    hit = [e for e in _paired(evidence) if e.values.get("state.bimodal")]
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


def _keep_default_below(per_pair: Sequence[tuple[Evidence, "Threshold"]], lib: Library,
                        thr: int) -> Optional[str]:
    """When the library already uses CMA from a smaller default threshold, the measured sizes in
    ``[default, thr)`` where CMA is better on one measure and worse on none (described), else
    None.  The issue-4 rule (wins on both) finds where CMA is clearly ahead; moving sizes off CMA
    is only advice when CMA loses there, which is what ``advisor verify`` re-measures."""
    d = lib.threshold_default
    if d is None or d >= thr or not (lib.cray or lib.cma_enable_default == 1):
        return None
    ahead = [v for _, t in per_pair for v in t.verdicts
             if d <= v.nbytes < thr and not v.loses and "better" in (v.lat_verdict, v.bw_verdict)]
    if not ahead:
        return None
    return "; ".join(f"{_fmt_bytes(v.nbytes)}: latency {v.lat_verdict}, bandwidth {v.bw_verdict}"
                     for v in sorted(ahead, key=lambda v: v.nbytes))


def _threshold_advice(sweeps: Sequence[Evidence], lib: Library, facts: Facts,
                      base_ids: list[str]) -> tuple[list[Recommendation], list[Finding]]:
    recs: list[Recommendation] = []
    findings: list[Finding] = []
    per_pair: list[tuple[Evidence, Threshold]] = []
    for ev in sweeps:
        vs = analyse_sweep(ev)
        if vs:
            per_pair.append((ev, threshold_from(vs)))
    if not per_pair:
        return recs, findings
    ids = base_ids + [ev.id for ev, _ in per_pair]
    table = " | ".join(f"{ev.id}: {_table(t.verdicts)}" for ev, t in per_pair)
    found = [t for _, t in per_pair if t.nbytes is not None]
    default_name = K.CRAY_SIZE if lib.cray else K.CMA_THRESHOLD
    if len(found) == len(per_pair):
        thr = max(t.nbytes for t in found)  # one threshold that holds for every pair
        strict = all(t.strict for t in found)
        runs = min(v.runs for t in found for v in t.verdicts)
        confidence = ("high" if strict else "medium") if runs >= 3 else "low"
        pairs = f" for all {len(per_pair)} rank pairs" if len(per_pair) > 1 else ""
        if not strict:
            findings.append(Finding(
                id="cma-threshold-partial", severity="info", evidence=ids,
                message="above the threshold some sizes show no measurable difference; the "
                        "threshold is the smallest size from which CMA wins and never loses"))
        keep = _keep_default_below(per_pair, lib, thr)
        if keep is not None:
            # raising the threshold would move sizes where CMA is not worse (and better on one
            # measure) back to the POSIX path: verify measures that as a regression
            found_thr, thr = thr, lib.threshold_default
            findings.append(Finding(
                id="cma-threshold-keep-default", severity="info", evidence=ids,
                message=f"CMA wins on both measures from {found_thr} bytes, but between the "
                        f"default {default_name}={thr} and {found_thr} it is better on one "
                        f"measure and worse on none ({keep}): raising the threshold would slow "
                        f"those messages, so the default stays"))
        is_default = (lib.threshold_default == thr and
                      (lib.cray or lib.cma_enable_default == 1))
        title = (f"Keep the default CMA threshold {thr} bytes: measured to be right here"
                 if is_default else f"Use CMA from {thr} bytes ({_fmt_bytes(thr)})")
        recs.append(Recommendation(
            id="cma-threshold", title=title, settings=_enable_settings(lib, thr),
            confidence=confidence, evidence=ids, verifiable=True,
            rationale=(f"CMA wins on both latency and bandwidth at {thr} bytes{pairs}, each "
                       f"win with a 95 % CI beyond the measured noise floor, and "
                       + ("at every larger size" if strict else
                          "is worse at no larger size (some are indistinguishable)")
                       + f"; it replaces the "
                       f"default {default_name}={lib.threshold_default} (from "
                       f"{lib.defaults_source}). " + _around(per_pair, thr))))
        findings.append(Finding(id="cma-sweep-summary", severity="info", evidence=ids,
                                message="CMA on vs off per message size (ratio > 1: CMA "
                                        "better; 95 % CI; verdict against the noise floor): "
                                        + table))
        return recs, findings
    any_win = any(t.any_win for _, t in per_pair)
    any_loss = any(t.any_loss for _, t in per_pair)
    # forced-on losses below the library's own threshold are what the threshold is for
    floor_n = lib.threshold_default or 0
    loss_in_use = any(v.loses and v.nbytes >= floor_n for _, t in per_pair for v in t.verdicts)
    if not any_win and not any_loss:
        findings.append(Finding(
            id="cma-no-effect", severity="info", evidence=ids,
            message=("turning CMA on changed nothing measurable at any size (every CI within "
                     "the noise floor): not recommended. " + table)))
    elif not any_win:
        findings.append(Finding(
            id="cma-slower", severity="warning", evidence=ids,
            message="CMA never wins on both latency and bandwidth at once here, and loses at some "
                    "sizes. " + table))
        if _library_uses_cma_by_default(lib, facts) and loss_in_use:
            recs.append(Recommendation(
                id="cma-disable", title="Disable CMA: it is slower than the POSIX path here",
                settings=_disable_settings(lib), confidence="medium", evidence=ids,
                verifiable=True, rationale="measured: CMA loses and never wins. " + table))
    else:
        # CMA wins at some sizes and loses at larger ones: no threshold wins everywhere, but one
        # still loses least; decide by minimax regret over the rounds (issue 13)
        r, f = minimax_advice([ev for ev, _ in per_pair], lib, base_ids)
        recs += r
        findings += f
        findings.append(Finding(
            id="cma-no-threshold", severity="info", evidence=ids,
            message="CMA wins at some sizes but loses at larger ones: no threshold wins at every "
                    "size (the CMA path has no upper threshold), so the threshold that loses "
                    "least was chosen. " + table))
    return recs, findings


def default_candidate(lib: Library) -> Optional[int]:
    """The library's default as a ``recommend.decide`` candidate: its threshold in bytes when it
    uses CMA by default, None (CMA off) otherwise."""
    on = lib.mode_default == "CMA" if lib.cray else lib.cma_enable_default == 1
    return lib.threshold_default if on and lib.threshold_default is not None else None


def decision_of(evs: Sequence[Evidence], lib: Library):
    """``recommend.decide`` on the paired (or round-paired sweep) evidence ``evs``, or None when
    no size has paired results."""
    from advisor_mpich_cma import recommend as R

    data = [R.paired_from_evidence(ev) for ev in evs]
    try:
        return R.decide(data, default_candidate(lib))
    except ValueError:
        return None


def buffer_pages(ev: Evidence) -> str:
    """The buffer kind of a paired evidence: ``values['buffer_pages']`` ("base" / "thp"), else
    from the id (``cma-paired.thp[...]``), else "base" (evidence recorded before kinds)."""
    kind = ev.values.get("buffer_pages")
    if kind:
        return str(kind)
    return "thp" if ev.id == PAIRED + ".thp" or ev.id.startswith(PAIRED + ".thp.") else "base"


KIND_NAMES = {"base": "base (4 KiB) pages", "thp": "THP-backed (2 MiB) pages"}


def usable_kinds(evs: Sequence[Evidence]) -> tuple[list[Evidence], list[Evidence]]:
    """``(used, dropped)``: THP-kind evidence where the kernel gave a rank no huge pages
    (``thp_backed_bytes_min_rank`` == 0) measured base pages under another name: dropped."""
    used, dropped = [], []
    for e in evs:
        if buffer_pages(e) == "thp" and e.values.get("thp_backed_bytes_min_rank") == 0:
            dropped.append(e)
        else:
            used.append(e)
    return used, dropped


def kind_values(evs: Sequence[Evidence], lib: Library) -> dict:
    """``buffer_kinds`` ("base,thp") and ``advice_threshold_bytes:<kind>`` (bytes, -1: CMA off)
    / ``stability:<kind>``: the decision on each kind alone."""
    kinds = sorted({buffer_pages(e) for e in evs})
    v: dict = {"buffer_kinds": ",".join(kinds)}
    for k in kinds:
        d = decision_of([e for e in evs if buffer_pages(e) == k], lib)
        if d is not None:
            v[f"advice_threshold_bytes:{k}"] = -1 if d.advice is None else int(d.advice)
            v[f"stability:{k}"] = d.stability
    return v


def _none(t) -> Optional[int]:
    return None if t is None or int(t) < 0 else int(t)


def _thr_name(t: Optional[int]) -> str:
    return "CMA off" if t is None else f"threshold {_fmt_bytes(t)}"


def minimax_advice(evs: Sequence[Evidence], lib: Library,
                   base_ids: list[str]) -> tuple[list[Recommendation], list[Finding]]:
    """Recommendation and findings of the minimax-regret rule (``advisor_mpich_cma.recommend``)
    on paired evidence.  The title and rationale carry the stability; a stability under
    ``recommend.STABLE_SHARE`` makes the confidence "low" and says why.

    Buffer kinds (issue 13 C).  Evidence may come in two kinds: base 4 KiB pages
    (``cma-paired[.<pair>]``) and THP-backed buffers (``cma-paired.thp[.<pair>]``, see
    ``buffer_pages``).  The threshold is decided by minimax regret over *both kinds together*
    (each kind's rank pairs are columns of the same decision, so a candidate's worst ratio is
    its worst over sizes, pairs and kinds), and the recommendation says so.  Why not the
    threshold of the kind the emitted environment gives: ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD``
    is one setting per process, and a process under host-buffer's
    ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1`` (THP madvise mode) still has both kinds: glibc
    asks for huge pages only on the chunks malloc takes from mmap (above
    ``M_MMAP_THRESHOLD``), while heap chunks, stacks, static arrays and other allocators keep
    base pages; in THP ``always`` mode small and unaligned buffers are base pages too.  So the
    defensible threshold is the one that loses least for either kind.  Each kind's own
    decision is reported (finding ``cma-threshold-per-kind``, ``cma-decision`` values
    ``advice_threshold_bytes:<kind>``) so a site that knows its buffers are all THP-backed can
    use that one; THP evidence where the kernel gave no huge pages is dropped with the finding
    ``cma-thp-not-given``."""
    from advisor_mpich_cma import recommend as R

    evs, dropped = usable_kinds(evs)
    d = decision_of(evs, lib)
    ids = base_ids + [ev.id for ev in evs]
    if d is None:
        return [], [Finding(id="cma-no-pairs", severity="warning", evidence=ids,
                            message="no message size has paired CMA on/off results: no advice")]
    recs: list[Recommendation] = []
    findings: list[Finding] = []
    for e in dropped:
        findings.append(Finding(
            id="cma-thp-not-given", severity="info", evidence=[e.id],
            message=f"{e.id}: THP-backed buffers were asked for (MADV_HUGEPAGE) but the kernel "
                    "gave a rank no huge pages (smaps AnonHugePages 0), so that measurement is "
                    "not used; the advice is for base pages"))
    kinds = sorted({buffer_pages(e) for e in evs})
    kind_txt = " and ".join(KIND_NAMES.get(k, k) for k in kinds)
    if len(kinds) > 1:
        per_kind = kind_values(evs, lib)
        findings.append(Finding(
            id="cma-threshold-per-kind", severity="info", evidence=ids,
            message="each buffer kind decided alone: " + "; ".join(
                f"{KIND_NAMES.get(k, k)}: "
                f"{_thr_name(_none(per_kind.get(f'advice_threshold_bytes:{k}')))}"
                f" (stability {float(per_kind.get(f'stability:{k}', 0.0)):.2f})" for k in kinds)
            + ". The recommendation loses least over both kinds: one threshold serves a "
              "process whose buffers are of both kinds (with glibc.malloc.hugetlb=1 only "
              "malloc's mmap'ed chunks are THP-backed)"))
    default_name = K.CRAY_SIZE if lib.cray else K.CMA_THRESHOLD
    stable = d.stability >= R.STABLE_SHARE
    confidence = ("high" if d.pairs >= 3 else "medium") if stable else "low"
    per_size = ", ".join(
        f"{(p + ' ') if p else ''}{_fmt_bytes(n)}: default x{d.per_size_default[(p, n)]:.2f}, "
        f"advice x{d.per_size_advice[(p, n)]:.2f}" for (p, n) in sorted(d.per_size_advice))
    stab = (f"the same advice in {d.stability:.0%} of {R.N_STABILITY} bootstrap resamples of "
            f"the paired rounds")
    why = (f"Buffers: {kind_txt}. "
           f"Minimax regret over {len(d.per_size_advice)} measured sizes ({d.pairs}+ paired "
           f"rounds each; ratio = performance over the per-size best of CMA on/off, the smaller "
           f"of latency and bandwidth): worst ratio of the default "
           f"({_thr_name(d.default)}) {d.worst[d.default]:.2f}, of {_thr_name(d.best)} "
           f"{d.worst[d.best]:.2f} (improvement 95 % CI [{d.improvement_ci[0]:.3f}, "
           f"{d.improvement_ci[1]:.3f}]). Per size: {per_size}. Stability: {stab}")
    if not stable:
        why += (f"; below {R.STABLE_SHARE:.0%} the advice flips on noise (candidates tie within "
                f"the measured noise), so the confidence is low")
    why += "."
    if d.kept_default:
        why = (f"{_thr_name(d.best)} has the best worst ratio, but the default is within noise "
               f"of it (the CI of the improvement reaches 0), so the default stays. " + why)
    title_tail = f" (stability {d.stability:.2f}; {'+'.join(kinds)} pages)"
    if d.advice is None:
        if _library_uses_cma_by_default(lib, None):
            recs.append(Recommendation(
                id="cma-disable", title="Disable CMA: it loses least with CMA off" + title_tail,
                settings=_disable_settings(lib), confidence=confidence, evidence=ids,
                verifiable=True, rationale=why))
        else:
            findings.append(Finding(id="cma-slower", severity="info", evidence=ids,
                                    message="keeping CMA off (the default) loses least. " + why))
    else:
        is_default = d.advice == d.default
        title = (f"Keep the default CMA threshold {d.advice} bytes: measured to lose least here"
                 if is_default else f"Use CMA from {d.advice} bytes ({_fmt_bytes(d.advice)})")
        recs.append(Recommendation(
            id="cma-threshold", title=title + title_tail,
            settings=_enable_settings(lib, d.advice), confidence=confidence, evidence=ids,
            verifiable=True, rationale=why + f" It replaces the default {default_name}="
            f"{lib.threshold_default} (from {lib.defaults_source})."))
    if d.losses:
        lost = "; ".join(f"{(p + ' ') if p else ''}{_fmt_bytes(n)}: x{r:.2f} of the best "
                         f"(CI up to {hi:.2f})" for p, n, r, hi in d.losses)
        upper = any(d.advice is not None and n >= d.advice for _, n, _, _ in d.losses)
        findings.append(Finding(
            id="cma-regret-left", severity="warning", evidence=ids,
            message=(f"the advice ({_thr_name(d.advice)}) is measurably beaten at some sizes, "
                     f"and no threshold fixes that without losing more elsewhere: {lost}"
                     + ("; CMA loses there but MPICH has no upper CMA threshold"
                        if upper else ""))))
    if not stable:
        findings.append(Finding(
            id="cma-advice-unstable", severity="warning", evidence=ids,
            message=f"the CMA advice is unstable: {stab} (policy: at least "
                    f"{R.STABLE_SHARE:.0%}); candidates tie within noise, measure longer"))
    return recs, findings


# --------------------------------------------------------------------------- logs and env


def diagnose_log(text: str, facts: Facts) -> list[Finding]:
    """Findings for a job's error output that mentions a CMA failure (EPERM vs EFAULT)."""
    code = classify_log(text)
    if code is None:
        return []
    sec = facts.security
    causes = explain(code, ptrace_scope=sec.ptrace_scope, cap_sys_ptrace=sec.cap_sys_ptrace,
                     seccomp_mode=sec.seccomp_mode, container=sec.container,
                     kernel_release=facts.kernel.release)
    fid = "cma-device-pointer" if code == _errno.EFAULT else "cma-blocked"
    return [Finding(id=fid, severity="error",
                    message=f"{_errno.errorcode.get(code, code)}: " + "; ".join(
                        c.message for c in causes),
                    remedy="; ".join(remedies_of(causes)))]


def _lookup(env: Mapping[str, str], name: str) -> tuple[Optional[str], Optional[str]]:
    k = K.knob(name)
    for n in [k.name, *k.aliases]:
        if n in env:
            return n, env[n]
    return None, None


def explicit_cma_enable(env: Mapping[str, str]) -> Optional[str]:
    """The assignment (``NAME=value``) by which ``env`` turns CMA on explicitly, or None:
    ``MPIR_CVAR_CH4_CMA_ENABLE=1`` (any prefix) or ``MPICH_SMP_SINGLE_COPY_MODE=CMA``."""
    name, val = _lookup(env, K.CMA_ENABLE)
    if name and (val or "").strip() == "1":
        return f"{name}=1"
    name, val = _lookup(env, K.CRAY_MODE)
    if name and (val or "").strip().upper() == "CMA":
        return f"{name}=CMA"
    return None


def blocked_enable_finding(assignment: str, sibling: Evidence, facts: Facts) -> Optional[Finding]:
    """An error when ``assignment`` turns CMA on and the live sibling test failed here."""
    use = usability([sibling], facts)
    if use.usable:
        return None
    return Finding(id="cma-enable-blocked", severity="error", evidence=[sibling.id],
                   message=f"{assignment} turns CMA on, but CMA fails on this machine: "
                           + use.reason + "; MPI jobs will abort with 'process_vm_readv failed'",
                   remedy="; ".join(remedies_of(use.causes)) or DISABLE_REMEDY)


def lint_env(env: Mapping[str, str], facts: Facts, *, generic: bool = True) -> list[Finding]:
    """Check an environment mapping's CMA settings against the facts (pure; for ``advisor lint``).

    Reports: an explicit CMA enable that MPICH's init check overrides (ptrace_scope != 0), a
    single-copy threshold with single copy turned off (inert), XPMEM inert under GPU support,
    XPMEM without its device, and with ``generic`` also the checks the
    lint engine does from knob records for every library (badly typed values: thresholds are
    plain integer bytes; the wrong settings family for the flavour; a name the version lacks).
    """
    out: list[Finding] = []
    impl = (facts.mpi.implementation or "").lower()
    flavour = facts.mpi.flavour
    version = facts.mpi.version
    scope = facts.security.ptrace_scope
    for k in K.KNOBS if generic else ():
        for n in [k.name, *k.aliases]:
            if n not in env:
                continue
            val = env[n].strip()
            if k.type in ("int", "bytes"):
                try:
                    iv = int(val)
                    if k.allowed is not None and iv not in k.allowed:
                        raise ValueError
                    if k.minimum is not None and iv < k.minimum:
                        raise ValueError
                except ValueError:
                    out.append(Finding(id="cma-bad-value", severity="error",
                                       message=f"{n}={val!r}: expected "
                                       + (f"one of {k.allowed}" if k.allowed else
                                          "a plain integer number of bytes")))
            elif k.type == "enum" and k.allowed and val.upper() not in k.allowed:
                out.append(Finding(id="cma-bad-value", severity="error",
                                   message=f"{n}={val!r}: expected one of {k.allowed}"))
            if impl == "mpich" and k.flavour and flavour and k.flavour != flavour:
                other = "HPE Cray MPICH" if flavour == K.CRAY else "upstream MPICH"
                out.append(Finding(id="cma-wrong-family", severity="warning",
                                   message=f"{n} is a {k.flavour} setting; {other} ignores it"))
            elif impl == "mpich" and k.versions and version and not k.valid_for(version):
                out.append(Finding(id="cma-not-in-version", severity="warning",
                                   message=f"{n} is not understood by MPICH {version} "
                                           f"(valid {k.versions})"))
    name, val = _lookup(env, K.CMA_ENABLE)
    if (name and val and val.strip() == "1" and flavour != K.CRAY and scope not in (None, 0)
            and (version is None or version_in(version, ">=5"))):
        out.append(Finding(
            id="cma-enable-overridden", severity="warning",
            message=(f"{name}=1 has no effect: MPICH's init check turns CMA off because Yama "
                     f"ptrace_scope={scope} (it only keeps CMA with 0 or no Yama, whatever the "
                     "capabilities)"),
            remedy="remove it, or lower ptrace_scope to 0 (admin; security trade-off)"))
    tname, tval = _lookup(env, K.CMA_THRESHOLD)
    if name and val is not None and val.strip() == "0" and tname:
        out.append(Finding(
            id="cma-threshold-inert", severity="warning",
            message=(f"{tname}={(tval or '').strip()} does nothing: {name}=0 turns CMA off, so "
                     "no message size uses the single-copy path the threshold selects"),
            remedy=f"remove {tname}, or drop {name}=0 if single copy should be used"))
    mname, mode = _lookup(env, K.CRAY_MODE)
    sname, size = _lookup(env, K.CRAY_SIZE)
    if mode and mode.strip().upper() == "NONE" and sname:
        out.append(Finding(
            id="cma-threshold-inert", severity="warning",
            message=(f"{sname}={(size or '').strip()} does nothing: {mname}=NONE turns single "
                     "copy off, so no message size uses it"),
            remedy=f"remove {sname}, or set {mname} to CMA or XPMEM"))
    _, gpu = _lookup(env, K.CRAY_GPU)
    if mode and mode.strip().upper() == "XPMEM":
        if gpu and gpu.strip() == "1":
            out.append(Finding(
                id="cma-xpmem-inert-gpu", severity="warning",
                message=("MPICH_SMP_SINGLE_COPY_MODE=XPMEM is inert when "
                         "MPICH_GPU_SUPPORT_ENABLED=1: the effective mode is CMA, so the CMA "
                         "usability checks apply"),
                remedy="set MPICH_SMP_SINGLE_COPY_MODE=CMA (or NONE if CMA is blocked)"))
        if facts.extra.get("mpich-cma", {}).get("xpmem_device") is False:
            out.append(Finding(
                id="cma-xpmem-no-device", severity="error",
                message="MPICH_SMP_SINGLE_COPY_MODE=XPMEM but this node has no xpmem device "
                        "(/dev/xpmem): XPMEM cannot work here; never recommend it",
                remedy="MPICH_SMP_SINGLE_COPY_MODE=CMA where CMA is usable, else NONE"))
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
        message=(f"CMA from pinned host memory ({_fmt_bytes(int(message_bytes))} messages) is "
                 + " and ".join(parts) + ": the buffer kind decides, CMA is not optimal for "
                 "pinned buffers; measure with the buffer kind the application uses"))
