"""The minimax-regret decision (``advisor_mpich_cma.minimax``) on this plugin's evidence.

Shared by ``paired`` (which records the decision as ``cma-decision`` evidence) and
``recommend`` (which turns it into advice); pure.
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor.models import Evidence

from advisor_mpich_cma import minimax as R
from advisor_mpich_cma.evidence import Library, buffer_pages
from advisor_mpich_cma.story import DecisionRecord, default_measured

def default_candidate(lib: Library) -> Optional[int]:
    """The library's default as a ``minimax.decide`` candidate: its threshold in bytes when it
    uses CMA by default, None (CMA off) otherwise."""
    on = lib.mode_default == "CMA" if lib.cray else lib.cma_enable_default == 1
    return lib.threshold_default if on and lib.threshold_default is not None else None


def decision_of(evs: Sequence[Evidence], lib: Library):
    """``minimax.decide`` on the paired (or round-paired sweep) evidence ``evs``, or None when
    no size has paired results."""
    data = [R.paired_from_evidence(ev) for ev in evs]
    one = any(ev.values.get("machine_states") == "one" for ev in evs)
    try:
        return R.decide(data, default_candidate(lib), one_state=one)
    except ValueError:
        return None


def record_of(evs: Sequence[Evidence], lib: Library,
              substituted: Optional[str] = None) -> Optional[DecisionRecord]:
    """The ``DecisionRecord`` (decision, buffer kinds, whether the default is measured as itself)
    that the advice's texts and the ``cma-decision`` evidence are both drawn from; None when no
    size has paired results.  ``substituted``: why ``sane_library`` replaced the default."""
    d = decision_of(evs, lib)
    if d is None:
        return None
    ok, note = default_measured(lib, substituted)
    return DecisionRecord(d, tuple(sorted({buffer_pages(e) for e in evs})), ok, note)


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
