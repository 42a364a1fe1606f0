"""``advisor lint`` for the memory-pool probes: the pool settings of one side (host or device)
of an environment checked against the facts (pure)."""

from __future__ import annotations

from typing import Optional

from advisor.models import Facts, Finding

from . import knobs, model
from .evidence import host_large_page

def _env_int(env: dict, name: str) -> tuple[Optional[str], Optional[int]]:
    """``(name, value)`` when ``env`` sets ``name``; the value as a plain non-negative integer,
    else None (the lint engine reports bad values from the knob records)."""
    if name not in env:
        return None, None
    text = str(env[name]).strip()
    return name, int(text) if text.isdigit() else None


def lint_env(env: dict, facts: Facts, side: str) -> list[Finding]:
    """``advisor lint`` checks of one pool side ("host"/"device") of DLA-Future's Umpire pools.

    * an alignment that is not a power of two is an error: Umpire's aligned allocation rounds
      addresses with the mask ``~(alignment - 1)`` (``src/umpire/strategy/mixins/
      AlignedAllocation.cpp``), which only aligns for powers of two;
    * a next block whose backing allocation (block + alignment, LLNL/Umpire#881) is not a
      multiple of the large page (host: the THP PMD size of ``facts``, not checked with THP
      'never'; device: NVIDIA's 2 MiB) is a warning: every new block is slow on first use.
      Unset fields take DLA-Future's defaults.
    """
    out: list[Finding] = []
    an, align = _env_int(env, knobs.dlaf_name(side, "ALIGNMENT_BYTES"))
    bn, block = _env_int(env, knobs.dlaf_name(side, "NEXT_BLOCK_BYTES"))
    if an and align is not None and (align <= 0 or align & (align - 1)):
        out.append(Finding(
            id=f"{side}-pool-alignment-not-power-of-two", severity="error",
            message=(f"{an}={align} is not a power of two: Umpire aligns with the mask "
                     "~(alignment - 1), so allocations come back misaligned"),
            remedy=f"use a power of two, e.g. {1 << max(0, align.bit_length() - 1) or 1}"))
        return out
    if not (an or bn) or (an and align is None) or (bn and block is None):
        return out
    if side == "host" and model.parse_thp_mode(facts.memory.thp_enabled) == "never":
        return out  # base pages whatever the alignment: nothing to gain
    d = model.DLAF_DEFAULT
    block = d.next_block_bytes if block is None else block
    align = d.alignment_bytes if align is None else align
    lp, lp_src = (host_large_page(facts) if side == "host" else
                  (model.NVIDIA_DEVICE_LARGE_PAGE_BYTES, "NVIDIA GPU large page"))
    backing = model.umpire_backing_bytes(block, align)
    if block and not model.is_multiple(backing, lp):
        out.append(Finding(
            id=f"{side}-pool-block-not-large-page-multiple", severity="warning",
            message=(f"{bn or an}: {side} pool blocks are backed by {block} + {align} = "
                     f"{backing} B, not a multiple of the {lp} B large page ({lp_src}): each "
                     "new block is slow on first use (LLNL/Umpire#881)"),
            remedy=(f"choose {knobs.dlaf_name(side, 'NEXT_BLOCK_BYTES')} and "
                    f"{knobs.dlaf_name(side, 'ALIGNMENT_BYTES')} so that their sum is a multiple "
                    f"of {lp} B ('advisor probe --plugin memory-pool' computes them)")))
    return out
