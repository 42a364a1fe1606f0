"""The zero-page artefact: a copy from never-written memory reads the kernel's shared zero
page, so its "bandwidth" is not a memory bandwidth (pure).

- :func:`zero_page_inflation` -> ``Inflation``: untouched / touched bandwidth of one record.
- :func:`label_artefacts` -> ``Evidence`` with zero-page and above-ceiling points labelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from advisor.models import Evidence, Stats

from advisor_host_buffer.evidence import (BPS, CLPEAK_CEILING_FACTOR, RANDOM, UNTOUCHED,
                                          ZERO_PAGE_ARTEFACT, point_median)


@dataclass(frozen=True)
class Inflation:
    """How much an untouched source overstates a copy bandwidth.

    ``ratio`` = median(untouched) / median(random-filled), > 1 means inflated; ``ci_low`` /
    ``ci_high`` the confidence interval of the ratio when it was measured (None for single
    reported figures such as a field case); ``untouched_bps`` / ``touched_bps`` in bytes/s.
    """

    ratio: float
    ci_low: Optional[float]
    ci_high: Optional[float]
    untouched_bps: float
    touched_bps: float

    def significant(self) -> bool:
        """True when the CI excludes 1 (or, without a CI, the ratio is above 1)."""
        if self.ci_low is not None:
            return self.ci_low > 1.0
        return self.ratio > 1.0


def zero_page_inflation(ev: Evidence, series: Optional[str] = None) -> Optional[Inflation]:
    """Inflation of ``ev`` (untouched vs random-filled source) or None when either is missing.

    ``series``: the series to read (default: the first that has both points).  The CI comes from
    ``ev.values['<series>.inflation_ci_low'|'_ci_high']`` written by the measurement (harness
    ``compare``); the ratio is recomputed from the medians so recorded single figures work too.
    """
    for s in ev.series:
        if series is not None and s.name != series:
            continue
        u, r = s.point(UNTOUCHED), s.point(RANDOM)
        if u is None or r is None:
            continue
        mu, mr = point_median(u), point_median(r)
        if not mu or not mr:
            continue
        lo = ev.values.get(f"{s.name}.inflation_ci_low")
        hi = ev.values.get(f"{s.name}.inflation_ci_high")
        return Inflation(
            ratio=mu / mr,
            ci_low=float(lo) if lo is not None else None,
            ci_high=float(hi) if hi is not None else None,
            untouched_bps=mu,
            touched_bps=mr,
        )
    return None


def untouched_only(ev: Evidence) -> list[str]:
    """``"<series>/<label>"`` of the untouched-source points of ``ev`` in series that have no
    random-filled point to compare with ([] when every series has one, or none is untouched)."""
    out = []
    for s in ev.series:
        labels = {p.label for p in s.points}
        if RANDOM in labels:
            continue
        out += [f"{s.name}/{p.label}" for p in s.points
                if p.label is not None and p.label.startswith(UNTOUCHED)]
    return out


def label_artefacts(
    ev: Evidence, ceiling: "Optional[Stats | float]", *, factor: float = CLPEAK_CEILING_FACTOR
) -> Evidence:
    """``ev`` with the points that are not physical bandwidths labelled (``Point.artefact``).

    - a point read from an untouched source (label ``untouched``) is a zero-page artefact; its
      samples stay (they are the numerator of the measured inflation) under that label, and
      every consumer of bandwidths (:func:`sweep_points`, :func:`reference_bandwidths`) skips
      labelled points;
    - a bandwidth point above ``factor`` x the copy ceiling of the same run (``Stats`` -> its
      max, or bytes/s) is replaced by the harness' ``checked_point``: label, no samples, no
      statistics (clpeak's zero-copy rule via ``advisor.measure.ceiling.plausibility``).
    Existing labels are kept; ``ceiling`` None skips the second rule.
    """
    from advisor.measure import checked_point

    out = []
    for s in ev.series:
        pts = []
        for p in s.points:
            if p.artefact is None and s.unit == BPS:
                if p.label == UNTOUCHED:
                    p = p.model_copy(update={"artefact": ZERO_PAGE_ARTEFACT})
                elif ceiling is not None:
                    p = checked_point(p, ceiling, factor=factor)
            pts.append(p)
        out.append(s.model_copy(update={"points": pts}))
    return ev.model_copy(update={"series": out})
