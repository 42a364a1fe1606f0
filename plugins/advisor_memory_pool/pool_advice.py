"""The pool-configuration advice both memory-pool probes give (pure): the recommended block and
alignment settings of DLA-Future and Umpire, and the findings on the user's own pool settings
(backing blocks that are not large-page multiples, alignment waste, a limit below the largest
request plus the grow-by).

Umpire pools request block + alignment bytes from their backing allocator (LLNL/Umpire#881), so
a backing block is a large-page multiple only when block + alignment is
(``model.umpire_backing_bytes``); the configurations compared are ``model.choose``'s.
"""

from __future__ import annotations

from typing import Optional

from advisor.models import Finding, Recommendation, Setting

from . import knobs, model
from .workload import Workload


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


def pool_findings(side: str, w: Workload, choice: model.Choice, large_page: int,
                   budget: Optional[int], ev_ids: list[str]) -> list[Finding]:
    """Findings on ``w``'s current pool settings against ``choice`` (``side`` "host"/"device",
    ``large_page`` and ``budget`` in bytes, None: no budget known), then ``grow_findings``."""
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
    return out + grow_findings(side, choice, ev_ids)


def grow_findings(side: str, choice: model.Choice, ev_ids: list[str]) -> list[Finding]:
    """The ``<side>-pool-limit-below-request-plus-grow`` finding when the pool limit leaves no
    room for the largest request plus the 1 GiB grow-by; [] otherwise."""
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


def pool_recommendation(side: str, choice: model.Choice, large_page: int, lp_source: str,
                         confidence: str, ev_ids: list[str], extra: str = "") -> Recommendation:
    """The ``<side>-pool-large-page-blocks`` recommendation of ``choice``'s best configuration
    (DLA-Future and Umpire settings), ``extra`` appended to its rationale."""
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

