"""The measured CMA advice of the mpich-cma probe (pure): the settings a CMA recommendation
writes (``enable_settings`` with a threshold, ``disable_settings``) and the two rules that turn
measurements into advice: minimax regret over paired (MPI_T) evidence (``minimax_advice``,
``advisor_mpich_cma.minimax``) and the issue-4 rule over separate-launch sweeps
(``sweep_advice``, ``advisor_mpich_cma.threshold``, falling back to minimax regret where it
finds no single threshold).  ``advisor_mpich_cma.recommend`` decides which applies.
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor.models import Evidence, Facts, Finding, Recommendation, Setting

from advisor_mpich_cma import knobs
from advisor_mpich_cma.decision import kind_values, record_of
from advisor_mpich_cma.evidence import KIND_NAMES, Library, buffer_pages, usable_kinds
from advisor_mpich_cma.story import LEVELS, default_measured, thr_name
from advisor_mpich_cma.threshold import (Threshold, analyse_sweep, around, fmt_bytes,
                                         threshold_from, verdict_table)


def disable_settings(lib: Library) -> list[Setting]:
    """The settings that turn CMA off for ``lib``'s flavour."""
    if lib.cray:
        return [Setting(library="mpich", flavour=knobs.CRAY, name=knobs.CRAY_MODE, value="NONE",
                        type="enum", default=lib.mode_default)]
    return [Setting(library="mpich", flavour=knobs.UPSTREAM, name=knobs.CMA_ENABLE, value=0, type="int",
                    default=lib.cma_enable_default, versions=knobs.knob(knobs.CMA_ENABLE).versions)]


def enable_settings(lib: Library, threshold: int) -> list[Setting]:
    """The settings that use CMA from ``threshold`` bytes for ``lib``'s flavour."""
    if lib.cray:
        return [Setting(library="mpich", flavour=knobs.CRAY, name=knobs.CRAY_MODE, value="CMA",
                        type="enum", default=lib.mode_default,
                        is_default=lib.mode_default == "CMA"),
                Setting(library="mpich", flavour=knobs.CRAY, name=knobs.CRAY_SIZE, value=int(threshold),
                        type="bytes", unit="bytes", default=lib.threshold_default,
                        is_default=lib.threshold_default == threshold)]
    return [Setting(library="mpich", flavour=knobs.UPSTREAM, name=knobs.CMA_ENABLE, value=1, type="int",
                    default=lib.cma_enable_default, versions=knobs.knob(knobs.CMA_ENABLE).versions,
                    is_default=lib.cma_enable_default == 1),
            Setting(library="mpich", flavour=knobs.UPSTREAM, name=knobs.CMA_THRESHOLD,
                    value=int(threshold), type="bytes", unit="bytes",
                    default=lib.threshold_default, versions=knobs.knob(knobs.CMA_THRESHOLD).versions,
                    is_default=lib.threshold_default == threshold)]


def uses_cma_by_default(lib: Library, facts: Optional[Facts]) -> bool:
    """Whether ``lib`` uses CMA when nothing is set (Cray: mode CMA; MPICH: enable 1)."""
    if lib.cray:
        return lib.mode_default == "CMA"
    return lib.upstream_mpich and lib.cma_enable_default == 1


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
    return "; ".join(f"{fmt_bytes(v.nbytes)}: latency {v.lat_verdict}, bandwidth {v.bw_verdict}"
                     for v in sorted(ahead, key=lambda v: v.nbytes))


def sweep_advice(sweeps: Sequence[Evidence], lib: Library, facts: Facts,
                 base_ids: list[str], substituted: Optional[str] = None
                 ) -> tuple[list[Recommendation], list[Finding]]:
    """Recommendation and findings of the issue-4 rule (``advisor_mpich_cma.threshold``) on
    separate-launch sweeps: the smallest size from which CMA wins on both measures and never
    loses, held by every rank pair; where no threshold wins everywhere, minimax regret over
    the sweeps' rounds (``minimax_advice``).  ``base_ids``: the evidence ids every advice
    cites; ``substituted``: why ``sane_library`` replaced the default, if it did."""
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
    table = " | ".join(f"{ev.id}: {verdict_table(t.verdicts)}" for ev, t in per_pair)
    found = [t for _, t in per_pair if t.nbytes is not None]
    default_name = knobs.CRAY_SIZE if lib.cray else knobs.CMA_THRESHOLD
    if len(found) == len(per_pair):
        thr = max(t.nbytes for t in found)  # one threshold that holds for every pair
        strict = all(t.strict for t in found)
        runs = min(v.runs for t in found for v in t.verdicts)
        confidence = ("high" if strict else "medium") if runs >= 3 else "low"
        measured, note = default_measured(lib, substituted)
        if not measured:  # issue 25 item 8: the comparison did not hold the default as it is
            confidence = LEVELS[max(0, LEVELS.index(confidence) - 1)]
            findings.append(Finding(
                id="cma-default-not-measured", severity="warning", evidence=ids,
                message=f"the library default is not measured as itself: {note}; the "
                        f"confidence is one step lower ({confidence})"))
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
                 if is_default else f"Use CMA from {thr} bytes ({fmt_bytes(thr)})")
        recs.append(Recommendation(
            id="cma-threshold", title=title, settings=enable_settings(lib, thr),
            confidence=confidence, evidence=ids, verifiable=True,
            rationale=(f"CMA wins on both latency and bandwidth at {thr} bytes{pairs}, each "
                       f"win with a 95 % CI beyond the measured noise floor, and "
                       + ("at every larger size" if strict else
                          "is worse at no larger size (some are indistinguishable)")
                       + f"; it replaces the "
                       f"default {default_name}={lib.threshold_default} (from "
                       f"{lib.defaults_source}). " + around(per_pair, thr))))
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
        if uses_cma_by_default(lib, facts) and loss_in_use:
            recs.append(Recommendation(
                id="cma-disable", title="Disable CMA: it is slower than the POSIX path here",
                settings=disable_settings(lib), confidence="medium", evidence=ids,
                verifiable=True, rationale="measured: CMA loses and never wins. " + table))
    else:
        # CMA wins at some sizes and loses at larger ones: no threshold wins everywhere, but one
        # still loses least; decide by minimax regret over the rounds (issue 13)
        r, f = minimax_advice([ev for ev, _ in per_pair], lib, base_ids, substituted)
        recs += r
        findings += f
        findings.append(Finding(
            id="cma-no-threshold", severity="info", evidence=ids,
            message="CMA wins at some sizes but loses at larger ones: no threshold wins at every "
                    "size (the CMA path has no upper threshold), so the threshold that loses "
                    "least was chosen. " + table))
    return recs, findings


def _none(t) -> Optional[int]:
    return None if t is None or int(t) < 0 else int(t)


def minimax_advice(evs: Sequence[Evidence], lib: Library, base_ids: list[str],
                   substituted: Optional[str] = None
                   ) -> tuple[list[Recommendation], list[Finding]]:
    """Recommendation and findings of the minimax-regret rule (``advisor_mpich_cma.minimax``)
    on paired evidence.  The title and rationale carry the stability; a stability under
    ``advisor.measure.STABLE_SHARE`` makes the confidence "low" and says why.

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
    ``cma-thp-not-given``.

    Every text (title, rationale, ``cma-regret-left``, ``cma-traffic-split``,
    ``cma-advice-unstable``, ``cma-default-not-measured``) comes from one
    ``advisor_mpich_cma.story.DecisionRecord``, the record ``paired`` stores as ``cma-decision``;
    ``substituted`` (why ``sane_library`` replaced the default) marks the default as not
    measured as itself."""
    evs, dropped = usable_kinds(evs)
    story = record_of(evs, lib, substituted)
    d = story.d if story is not None else None
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
    if len(kinds) > 1:
        per_kind = kind_values(evs, lib)
        findings.append(Finding(
            id="cma-threshold-per-kind", severity="info", evidence=ids,
            message="each buffer kind decided alone: " + "; ".join(
                f"{KIND_NAMES.get(k, k)}: "
                f"{thr_name(_none(per_kind.get(f'advice_threshold_bytes:{k}')))}"
                f" (stability {float(per_kind.get(f'stability:{k}', 0.0)):.2f})" for k in kinds)
            + ". The recommendation loses least over every kind: one threshold serves a "
              "process whose buffers and traffic are of several kinds (with "
              "glibc.malloc.hugetlb=1 only malloc's mmap'ed chunks are THP-backed; a halo "
              "exchange sends from a buffer per neighbour, a solver may reuse one)"))
    # title, rationale, findings and the cma-decision values: all from the one record
    title, why, confidence = story.title(), story.rationale(lib), story.confidence
    if d.advice is None:
        if uses_cma_by_default(lib, None):
            recs.append(Recommendation(
                id="cma-disable", title=title, settings=disable_settings(lib),
                confidence=confidence, evidence=ids, verifiable=True, rationale=why))
        else:
            findings.append(Finding(id="cma-slower", severity="info", evidence=ids,
                                    message="keeping CMA off (the default) loses least. " + why))
    else:
        recs.append(Recommendation(
            id="cma-threshold", title=title, settings=enable_settings(lib, d.advice),
            confidence=confidence, evidence=ids, verifiable=True, rationale=why))
    findings += story.findings(ids)
    return recs, findings
