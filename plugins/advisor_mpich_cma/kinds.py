"""The buffer kinds of the paired measurement (``advisor_mpich_cma.paired``): which kinds a
probe measures here, at which sizes and with how many rounds (pure but for the THP mode read
from sysfs when the facts lack it).

Kinds (``advisor_mpich_cma.evidence``): ``base`` (4 KiB pages, one reused buffer, as osu_bw),
``msgbuf`` (base pages, a buffer per message of a window, as halo exchanges send) and ``thp``
(THP-backed buffers).
"""

from __future__ import annotations

from advisor.probe import MeasureContext

from advisor_mpich_cma.evidence import BASE, MSGBUF, THP

#: The per-message pattern is measured up to this size (bytes): the crossover region (the
#: winners moved at 8-32 KiB, the crossover is 128 KiB, background.md §4) with room; above it
#: the candidates that differ there are CMA off and thresholds above 1 MiB, which the base
#: kind already scores.  A cost bound: a window of per-message buffers is up to 64 MiB.
MSGBUF_UP_TO_BYTES = 1 << 20
#: THP-backed buffers are measured only from this size (bytes).  The buffer kind changed CMA's
#: verdict only from 128 KiB up on the AMD VM (background.md §4: crossover 128 KiB for both
#: kinds, the kinds differing at 4-16 MiB); 64 KiB is the grid point below that, so the THP
#: crossover can still be bracketed; below it the base-page evidence alone decides.
THP_FROM_BYTES = 64 << 10
#: The THP kind runs 1/THP_ROUNDS_DIVISOR of the base kind's rounds (at least 2): at 2-16 MiB a
#: batch is at least one message per switch whatever the target seconds, so rounds, not
#: seconds, set the cost there (measured: the full probe went from 35 s to 60 s with THP at
#: every size and full rounds, on the 2-core VM).  The THP kind is a second constraint on a
#: decision the base kind also makes; the stability bootstrap reports when its pairs are too
#: few.
THP_ROUNDS_DIVISOR = 2

def page_kinds(ctx: MeasureContext) -> list[str]:
    """Buffer kinds to measure: ``"base"`` (4 KiB pages, one reused buffer) and ``"msgbuf"``
    (base pages, a buffer per message) always (``--option traffic=reused`` drops the second),
    ``"thp"`` (THP-backed) where the THP mode (facts, else sysfs) is ``always`` or
    ``madvise``: applications get THP-backed buffers there (by default, or through
    host-buffer's ``glibc.malloc.hugetlb=1``)."""
    from advisor.measure import thp_mode

    mode = ctx.facts.memory.thp_enabled or thp_mode()
    msgbuf = [MSGBUF] if ctx.options.get("traffic", "both") != "reused" else []
    return [BASE] + msgbuf + ([THP] if mode in ("always", "madvise") else [])


def kind_sizes(kind: str, sizes, quick: bool = False) -> list[int]:
    """Sizes measured for a kind (bytes): all for base pages, THP only from ``THP_FROM_BYTES``
    up, per-message buffers only up to ``MSGBUF_UP_TO_BYTES`` (all when none qualifies)."""
    if kind == THP:
        return [n for n in sizes if n >= THP_FROM_BYTES] or list(sizes)
    if kind == MSGBUF:
        return [n for n in sizes if n <= MSGBUF_UP_TO_BYTES] or list(sizes)
    return list(sizes)


def kind_rounds(kind: str, rounds: int) -> int:
    """Paired rounds of a kind: ``rounds`` for base pages, ``rounds // THP_ROUNDS_DIVISOR`` (at
    least 2) for THP-backed buffers and per-message buffers (second constraints on the
    decision the base kind also makes)."""
    return max(2, rounds // THP_ROUNDS_DIVISOR) if kind in (THP, MSGBUF) else rounds
