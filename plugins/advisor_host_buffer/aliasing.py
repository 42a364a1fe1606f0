"""The aliasing control of the ``zero-page-memcpy`` stage: the harness' ``aliasing_artefact``
run during measurement (``measure_control``) and the finding it gives (``findings``, pure).

The random-source copy of that stage is timed at ``placed_pair``'s skewed placement; the control
times the same copy into a destination 0 mod 4 KiB from the source
(``advisor.measure.placed_pair_with_control``), where 4K aliasing blocks loads behind stores
(Intel Optimization Reference Manual, "4K aliasing").  A difference beyond noise means this
machine aliases, and benchmarks that place buffers a power of two apart measure the placement.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from advisor.measure import REL_PRECISION, aliasing_artefact, compare, noise_floor_from_aa
from advisor.models import Evidence, Finding

from . import evidence


def _ci(lo: Optional[float], hi: Optional[float]) -> str:
    return f" (95% CI {lo:.2f}-{hi:.2f})" if lo is not None and hi is not None else ""


def measure_control(smp, src, dst, aliased, first: list[float], nbytes: int,
                    seed: int) -> dict[str, Any]:
    """Time the aliasing control; return the ``aliasing.*`` values of ``zero-page-memcpy``.

    ``smp``: the stage's sampler (``sample`` with its settings); ``src``, ``dst``, ``aliased``:
    ``placed_pair_with_control``'s arrays of ``nbytes`` bytes; ``first``: the random-source
    copy's samples into ``dst`` (bytes/s).  After it, the same copy is timed into a view of its
    destination 0 mod 4 KiB from the source (the placement 4K aliasing needs), again skewed,
    and again aliased: A B A B, so a machine-state switch between two of them (this VM's copy
    bandwidth moves between a fast and a slow state, background.md section 4) shows up as an
    A/A disagreement instead of a placement effect.  Judged by the harness'
    ``aliasing_artefact`` against the largest of the two A/A disagreements and
    ``REL_PRECISION`` (5 %, the precision the sampler knows a median to; a smaller difference is
    not resolved).  Single A B runs on the 2-core VM gave a 0.59x "effect" that the repeat did
    not show (13 ms vs 13 ms at 128 MiB, twice).  The control copies are not stored as points
    (their ratio is the finding); ``aliasing.artefact`` holds the label when it fires.
    Returns ``{}`` when a run gave no sample (deadline)."""
    import numpy as np

    def bw(target) -> list[float]:
        return [nbytes / t for t in smp(lambda: np.copyto(target, src)).samples if t > 0]

    c1, s2, c2 = bw(aliased), bw(dst), bw(aliased)
    if not first or not c1 or not s2 or not c2:
        return {}
    floor = max(noise_floor_from_aa([first, s2]), noise_floor_from_aa([c1, c2]), REL_PRECISION)
    skewed, ctl = first + s2, c1 + c2
    c = compare(skewed, ctl, higher_is_better=True, noise_floor=floor, seed=seed)
    out: dict[str, Any] = {"aliasing.ratio": c.ratio, "aliasing.ci_low": c.ci_low,
                           "aliasing.ci_high": c.ci_high, "aliasing.noise_floor": floor,
                           "aliasing.verdict": c.verdict}
    label = aliasing_artefact(skewed, ctl, noise_floor=floor, seed=seed)
    if label:
        out["aliasing.artefact"] = label
    return out


def findings(ev: Sequence[Evidence]) -> list[Finding]:
    """The finding of the aliasing control recorded in ``zero-page-memcpy`` (pure):
    ``copy-aliasing-measured`` (warning) when ``aliasing_artefact`` fired, else
    ``copy-aliasing-none`` (info); [] when the record holds no control."""
    e = Evidence.find(ev, evidence.EV_ZERO_MEMCPY)
    r = e.values.get("aliasing.ratio") if e is not None else None
    if e is None or r is None:
        return []
    lo, hi = e.values.get("aliasing.ci_low"), e.values.get("aliasing.ci_high")
    floor = float(e.values.get("aliasing.noise_floor", 0.0))
    label = e.values.get("aliasing.artefact")
    size = evidence.fmt_bytes(int(e.values.get("nbytes", 0)))
    if label:
        return [Finding(
            id="copy-aliasing-measured", severity="warning", evidence=[e.id],
            message=(f"a {size} copy into a destination whose address shares the source's low "
                     f"12 bits ran {float(r):.2f}x{_ci(lo, hi)} the skewed placement's "
                     f"bandwidth, beyond the {floor:.1%} noise floor: this machine shows 4K "
                     "aliasing, so benchmarks that place buffers a power of two apart (two "
                     "equal mallocs of 2^k bytes) measure the placement, not the memory"),
            remedy="offset one buffer by half a page (2 KiB mod 4 KiB), as "
                   "advisor.measure.placed_pair does")]
    return [Finding(
        id="copy-aliasing-none", severity="info", evidence=[e.id],
        message=(f"a {size} copy ran {float(r):.2f}x{_ci(lo, hi)} into a destination 0 mod "
                 f"4 KiB from its source, within the {floor:.1%} noise floor: no 4K aliasing "
                 "measured here at this size"))]
