"""The CuPy advice of the device memory-pool probe (pure): how CuPy's MemoryPool rounds and
backs requests (``cupy-backing-not-large-page-multiple``), the pool-limit bug of the installed
CuPy (``cupy-pool-limit-bug``, ``CUPY_LIMIT_BUG``) and the limit to set when ranks share a GPU or
the workload names one (``cupy-pool-limit``).

The CuPy version is the one ``Facts.python_packages`` recorded (``cupy`` or ``cupy-<cuda>``).
"""

from __future__ import annotations

from typing import Optional

from advisor.knobs import version_in
from advisor.models import Facts, Finding, Recommendation, Setting

from . import model
from .workload import WORKLOAD_ID, Workload

#: CuPy versions whose MemoryPool raises OutOfMemoryError under a limit without first freeing its
#: cached blocks: cupy/cupy#7678, fixed by #7679 (merged 2023-07-04, backported to the v12 line;
#: the v12.2.0 release notes list the backport).  set_limit exists since v6.0.0 (PR #2113).
CUPY_LIMIT_BUG = ">=6.0,<12.2"
CUPY_LIMIT_BUG_SOURCE = "cupy/cupy#7678, fix #7679 (2023), backported in v12.2.0"


def _cupy_version(facts: Facts) -> Optional[str]:
    """The CuPy version ``facts`` recorded, or None."""
    for k, v in facts.python_packages.items():
        if k == "cupy" or k.startswith("cupy-"):
            return v
    return None


def cupy_findings(facts: Facts, w: Workload, choice: model.Choice,
                   budget: Optional[int]) -> list[Finding]:
    """CuPy findings for the workload ``w`` under ``choice`` (``budget`` bytes or None); [] when
    the facts record no CuPy."""
    ver = _cupy_version(facts)
    if ver is None:
        return []
    limited = w.pool_limit_bytes is not None or w.pool_limit_fraction is not None or w.ranks_per_gpu > 1
    out: list[Finding] = []
    rep = model.evaluate(model.CUPY_DEFAULT, w.sizes, choice.best.large_page)
    if rep.misaligned:
        out.append(Finding(
            id="cupy-backing-not-large-page-multiple", severity="info",
            message=(f"CuPy's MemoryPool rounds requests to {model.CUPY_ROUND_BYTES} B and backs "
                     f"each new chunk with its own cudaMalloc, so buffers of "
                     f"{', '.join(str(b) for b in sorted(set(rep.misaligned)))} B are not "
                     f"multiples of the {choice.best.large_page} B large page; CuPy has no "
                     f"alignment setting"),
            remedy=f"round large (communication) buffer sizes up to multiples of "
                   f"{choice.best.large_page} B in the program"))
    if not version_in(ver, CUPY_LIMIT_BUG):
        return out
    return out + [Finding(
        id="cupy-pool-limit-bug", severity="warning" if limited else "info",
        message=(f"CuPy {ver} has the pool-limit bug ({CUPY_LIMIT_BUG_SOURCE}): with a limit set "
                 f"(set_limit or CUPY_GPU_MEMORY_LIMIT), MemoryPool raises OutOfMemoryError "
                 f"without first freeing its cached free blocks, even when it uses 0 bytes"
                 + ("" if limited else "; no limit is set in this workload")),
        remedy="upgrade CuPy to 12.2 or later, or call free_all_blocks() before large allocations")]


def cupy_recommendation(facts: Facts, w: Workload,
                        device_total: Optional[int]) -> Optional[Recommendation]:
    """``cupy-pool-limit`` when the workload names a pool limit or ranks share a GPU and CuPy is
    installed; None otherwise."""
    if _cupy_version(facts) is None:
        return None
    limit: Optional[str] = None
    why = ""
    if w.pool_limit_bytes is not None:
        limit, why = str(w.pool_limit_bytes), "the pool limit given for this workload"
    elif w.pool_limit_fraction is not None:
        limit, why = f"{w.pool_limit_fraction * 100:g}%", "the pool limit given for this workload"
    elif w.ranks_per_gpu > 1:
        limit = f"{100 // w.ranks_per_gpu}%"
        why = f"{w.ranks_per_gpu} ranks share each GPU: each rank's pool gets its share"
    if limit is None:
        return None
    return Recommendation(
        id="cupy-pool-limit", title="CuPy pool limit",
        settings=[Setting(library="cupy", name="CUPY_GPU_MEMORY_LIMIT", value=limit, type="str",
                          versions=">=6.0"),
                  Setting(library="cupy", name="pool_limit", value=limit, type="str", kind="config")],
        rationale=(f"limit CuPy's MemoryPool to {limit}: {why}. CuPy reads CUPY_GPU_MEMORY_LIMIT "
                   f"at start; advisor.runtime.configure_cupy(profile) applies it from Python. "
                   f"CuPy has no setting for pool alignment: round large buffer sizes up to "
                   f"2 MiB multiples in code."),
        confidence="medium", evidence=[WORKLOAD_ID])
