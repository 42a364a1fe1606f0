"""The pure half of the openmpi probe: evidence + facts -> findings and recommendations.

No I/O, no clock, no environment.  Reads the records described in ``advisor_openmpi.evidence``:

* ``ompi-selection``: finding ``ompi-path-selected`` (which path carried the messages);
* ``ompi-cma-siblings``: when the sibling test failed, finding ``cma-unusable-fallback``
  ("CMA unusable: Open MPI will use copy-in/copy-out", with the cause and remedies of
  ``advisor.measure.mpi.causes``); no setting that names CMA is then recommended;
* ``ompi-paths``: recommendation ``ompi-path`` (``advisor_openmpi.decide``: minimax regret,
  a change only when it beats the default beyond noise), with per-size ratios and CIs;
* ``ompi-limits``: recommendation ``ompi-eager-limit`` (ob1) or ``ucx-rndv-thresh`` (ucx).

Version-aware: Open MPI 4.1 gets the vader names (``advisor_openmpi.paths``).
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor.libraries.openmpi import version as openmpi_version
from advisor.measure import STABLE_SHARE, relabel_all, veto
from advisor.measure.mpi.causes import remedies_of
from advisor.measure.mpi.usability import sibling_causes
from advisor.models import Advice, Evidence, Facts, Finding, Recommendation, Setting

from advisor_openmpi import knobs
from advisor_openmpi import paths
from advisor_openmpi.decide import N_STABILITY, Decision, decide, fmt_bytes, traffic_split
from advisor_openmpi.evidence import (BW, LAT, LIMITS, PATHS, SELECTION,
                                      SELECTION_UCX, SIBLING, cma_usable)

FALLBACK_MESSAGE = "CMA unusable: Open MPI will use copy-in/copy-out"


def names_cma(s: Setting) -> bool:
    """True for a setting whose value names CMA (``OMPI_MCA_smsc=cma``, ``UCX_TLS=...cma``,
    ``^cma`` too): never recommended where CMA cannot work."""
    return "cma" in str(s.value).lower()


def _confidence(d: Decision) -> str:
    """"low" below 3 launches or below the stability policy; "high" for a change that wins
    beyond noise at 2 or more sizes; else "medium"."""
    if d.rounds < 3 or d.stability < STABLE_SHARE:
        return "low"
    if d.advice == d.baseline:
        return "medium"
    return "high" if len(d.wins(d.advice)) >= 2 else "medium"


def _stability_note(d: Decision) -> str:
    return (f" Stability {d.stability:.2f}: the share of {N_STABILITY} resamples of the "
            f"{d.rounds} launches per configuration that give this advice (policy "
            f"{STABLE_SHARE:.2f}).")


def _path_settings(path: str, version: Optional[str], *, confirm: bool) -> list[Setting]:
    out = []
    for name, value in paths.settings_of(path, version).items():
        lib = knobs.knob(name).library if name in {k.name for k in knobs.KNOBS} else knobs.OPENMPI
        out.append(Setting(library=lib, name=name, value=value, type="str", default="",
                           is_default=confirm))
    return out


def _sel_findings(evidence: Sequence[Evidence]) -> list[Finding]:
    out = []
    sel = Evidence.find(evidence, SELECTION)
    if sel is not None and sel.values.get("path"):
        v = sel.values
        declined = f"; declined: {v['pml_declined']}" if v.get("pml_declined") else ""
        ucx = (f"; UCX support level here: {v['ucx_support_level']}"
               if v.get("ucx_support_level") else "")
        out.append(Finding(
            id="ompi-path-selected", severity="info", evidence=[SELECTION],
            message=(f"Open MPI's default carried the messages over {v['path']} (PML "
                     f"{v.get('pml')}, BTL to the peer {v.get('btl_peer')}, single copy "
                     f"{v.get('smsc')}{declined}{ucx}), read at verbose level")))
    ucx = Evidence.find(evidence, SELECTION_UCX)
    if ucx is not None and ucx.values.get("pml") == "ucx":
        rows = [f"{k.split(':', 1)[1]} bytes: {v}" for k, v in ucx.values.items()
                if k.startswith("ucx_proto:")]
        if rows:
            out.append(Finding(
                id="ompi-ucx-protocols", severity="info", evidence=[SELECTION_UCX],
                message="with the ucx PML, UCX sends intra-node tagged messages as: "
                        + "; ".join(rows)))
    return out


def _fallback(evidence: Sequence[Evidence], facts: Facts) -> list[Finding]:
    sib = Evidence.find(evidence, SIBLING)
    v = sib.values if sib else {}
    causes = sibling_causes(v, facts)
    sel = Evidence.find(evidence, SELECTION)
    selected = (f" Open MPI still selects smsc {sel.values['smsc']} here and tries "
                "process_vm_readv for each rendezvous message, then silently copies"
                if sel is not None and sel.values.get("smsc") not in (None, "none") else "")
    remedies = [r for r in remedies_of(causes) if "MPIR_CVAR" not in r and "MPICH" not in r]
    remedies.append("or accept the copy-in/copy-out path (OMPI_MCA_smsc=^cma only skips the "
                    "failing calls)")
    return [Finding(
        id="cma-unusable-fallback", severity="warning",
        message=(f"{FALLBACK_MESSAGE}: the sibling process_vm_readv test failed "
                 f"({v.get('result')}): " + "; ".join(c.message for c in causes) + "."
                 + selected + "."),
        remedy="; ".join(remedies), evidence=[SIBLING] + ([SELECTION] if sel else []))]


def _path_advice(evidence, version, cma_ok) -> tuple[list[Recommendation], list[Finding]]:
    ev = Evidence.find(evidence, PATHS)
    d = decide(ev) if ev is not None else None
    if d is None:
        return [], []
    sel = Evidence.find(evidence, SELECTION)
    default_path = sel.values.get("path") if sel else ev.values.get("default_path")
    shown = default_path
    if not cma_ok and "cma" in str(default_path):
        # Open MPI still selects smsc cma; every single-copy read then fails and it copies
        shown = f"{default_path}, CMA unusable here: copy-in/copy-out"
    table = " | ".join(f"{c}: " + "; ".join(v.text() for v in vs)
                       for c, vs in d.verdicts.items())
    ids = [PATHS] + ([SELECTION] if sel else [])
    findings = [Finding(id="ompi-paths-summary", severity="info", evidence=ids, message=(
        f"each path vs the default ({shown}) per size (ratio > 1: the path is better; "
        f"95 % CI; verdict against the A/A noise floor): {table}"))]
    skipped = [f"{k.split(':', 1)[1]} ({v})" for k, v in ev.values.items()
               if k.startswith("skipped:")]
    regrets = ", ".join(f"{c} {1 - w:.3f}" for c, w in d.worst.items())
    rationale = (f"minimax regret over sizes and metrics ({regrets}); {d.why}. Not measured: "
                 + ("; ".join(skipped) or "none") + "." + _stability_note(d))
    split = traffic_split(ev, d)
    if split:  # one story: the title never says "nothing beats it" beside this finding
        findings.append(_split_finding(split, d, shown, ids))
    if d.advice == d.baseline:
        confirm = {"ob1+sm+smsc/cma": paths.OB1_CMA, "ob1+sm copy-in/copy-out": paths.OB1_COPY,
                   "ucx": paths.UCX}.get(str(default_path))
        settings = _path_settings(confirm, version, confirm=True) if confirm else []
        why_kept = ("no other path is better at every size and metric without losing "
                    "elsewhere (see ompi-traffic-split)" if split else
                    "no other path beats it beyond noise here")
        rec = Recommendation(
            id="ompi-path", title=f"Keep Open MPI's default path ({shown}): {why_kept}",
            settings=settings, rationale=rationale,
            confidence=_confidence(d), evidence=ids, verifiable=False)
    else:
        rec = Recommendation(
            id="ompi-path", title=f"Use {paths.DESCRIPTION[d.advice]}",
            settings=_path_settings(d.advice, version, confirm=False), rationale=(
                f"replaces the default selection ({shown}; OMPI_MCA_pml and "
                f"OMPI_MCA_smsc unset). " + rationale), confidence=_confidence(d),
            evidence=ids, verifiable=True)
    if not cma_ok:
        rec = rec.model_copy(update={"settings": [s for s in rec.settings if not names_cma(s)]})
    return [rec], findings


def _split_finding(split: dict, d: Decision, shown: str, ids: list[str]) -> Finding:
    """``ompi-traffic-split``: which path serves which traffic better than the advice, where,
    and by how much (ratios > 1: better than the advice; 95 % CI; beyond the A/A floor)."""
    kind = {LAT: "latency-bound traffic (ping-pong)",
            BW: "bandwidth-bound traffic (osu_bw window)"}
    adv = shown if d.advice == d.baseline else d.advice
    parts = []
    for metric, vs in split.items():
        by_cfg: dict[str, list] = {}
        for v in vs:
            by_cfg.setdefault(v.config, []).append(v)
        parts.append(f"{kind.get(metric, metric)}: " + "; ".join(
            f"{c} at " + ", ".join(f"{fmt_bytes(v.nbytes)} x{v.ratio:.2f} "
                                   f"[{v.ci_low:.2f}, {v.ci_high:.2f}]" for v in cv)
            for c, cv in by_cfg.items()))
    if d.best == d.advice:
        tail = (f"The advice loses least over all sizes and metrics (minimax regret "
                f"{1 - d.worst[d.advice]:.3f})")
    else:  # the same reason d.why gives: a change must be worse nowhere
        tail = (f"{d.best} has the smallest regret ({1 - d.worst[d.best]:.3f} vs "
                f"{1 - d.worst[d.advice]:.3f}) but is worse than {adv} beyond noise elsewhere, "
                f"and a change must be worse nowhere, so {adv} is kept")
    return Finding(id="ompi-traffic-split", severity="info", evidence=ids, message=(
        f"no path wins everywhere: better than the advice ({adv}) beyond noise for "
        + " | ".join(parts) + f". {tail}; a site whose jobs are mostly one kind of traffic "
        f"may prefer that kind's path"))


#: ``ompi_info`` help of btl_sm_eager_limit (5.0.11): "Maximum size (in bytes, including
#: header) of "short" messages": a message of exactly the limit does not fit.
HEADER_NOTE = ("The sm eager limit counts Open MPI's match header (ompi_info: \"including "
               "header\"), so a message of exactly the limit already goes by rendezvous")


def _limit_advice(evidence, version) -> list[Recommendation]:
    ev = Evidence.find(evidence, LIMITS)
    if ev is None:
        return []
    path = str(ev.values.get("path"))
    d = decide(ev, baseline=path)
    if d is None:
        return []
    var = str(ev.values.get("variable"))
    default = int(ev.values.get("default_bytes") or 0)
    rec_id = "ucx-rndv-thresh" if var == knobs.UCX_RNDV_THRESH else "ompi-eager-limit"
    lib = knobs.UCX if var.startswith("UCX_") else knobs.OPENMPI
    default_v = "auto" if var == knobs.UCX_RNDV_THRESH else default
    table = " | ".join(f"{c}: " + "; ".join(v.text() for v in vs) for c, vs in
                       d.verdicts.items())
    tried = ", ".join(str(ev.values.get(f"setting:{c}", c)) for c in d.verdicts)
    table += f". Variants measured: {tried or 'none'}"
    if var in (knobs.SM_EAGER, knobs.VADER_EAGER):
        table += f". {HEADER_NOTE}"
    on = "the default path" if path == paths.DEFAULT else path
    if d.advice == path:
        return [Recommendation(
            id=rec_id, title=f"Keep the default {var} ({default_v}) on {on}",
            settings=[Setting(library=lib, name=var, value=default_v, type="bytes"
                              if default else "str", unit="bytes" if default else None,
                              default=default_v, is_default=True)],
            rationale=f"{d.why}. Per size vs the default limit: {table}." + _stability_note(d),
            confidence=_confidence(d), evidence=[LIMITS])]
    value = int(str(ev.values.get(f"setting:{d.advice}", "=0")).split("=", 1)[1])
    settings = [Setting(library=lib, name=var, value=value, type="bytes", unit="bytes",
                        default=default_v)]
    return [Recommendation(
        id=rec_id, title=f"Set {var}={value} on {on}", settings=settings,
        rationale=f"replaces the default {default_v}: {d.why}. Per size: {table}."
                  + _stability_note(d),
        confidence=_confidence(d), evidence=[LIMITS], verifiable=True)]


def recommend(evidence: Sequence[Evidence], facts: Facts) -> Advice:
    """Findings and recommendations (pure; see the module docstring).  The evidence is read
    through ``advisor.measure.relabel`` (artefact points carry no bandwidth) and the advice goes
    through ``advisor.measure.veto`` (an artefact lowers or withdraws what rests on it)."""
    evidence = relabel_all(evidence)
    version = openmpi_version(facts)
    findings = _sel_findings(evidence)
    cma_ok = cma_usable(evidence) is not False
    if not cma_ok:
        findings += _fallback(evidence, facts)
    recs, f = _path_advice(evidence, version, cma_ok)
    findings += f
    recs += _limit_advice(evidence, version)
    if not cma_ok:
        recs = [r.model_copy(update={"settings": [s for s in r.settings if not names_cma(s)]})
                for r in recs]
    return veto(Advice(recommendations=recs, findings=findings), evidence)
