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
    reported figures such as a field case); ``touched_bps`` in bytes/s; ``untouched_bps``
    the untouched figure (bytes/s) only while the point still carries it (a point labelled and
    stripped by ``label_artefacts`` has none: it is not a bandwidth, only the ratio is kept).
    """

    ratio: float
    ci_low: Optional[float]
    ci_high: Optional[float]
    untouched_bps: Optional[float]
    touched_bps: float

    def significant(self) -> bool:
        """True when the CI excludes 1 (or, without a CI, the ratio is above 1)."""
        if self.ci_low is not None:
            return self.ci_low > 1.0
        return self.ratio > 1.0


def zero_page_inflation(ev: Evidence, series: Optional[str] = None) -> Optional[Inflation]:
    """Inflation of ``ev`` (untouched vs random-filled source) or None when either is missing.

    ``series``: the series to read (default: the first that has both points).  The ratio is
    recomputed from the medians while the untouched point still has samples (recorded single
    figures, e.g. a field case), else read from ``ev.values['<series>.inflation']`` (written by
    the measurement, or by ``label_artefacts`` before it strips the point); the CI from
    ``'<series>.inflation_ci_low'|'_ci_high'`` (harness ``compare``).
    """
    for s in ev.series:
        if series is not None and s.name != series:
            continue
        u, r = s.point(UNTOUCHED), s.point(RANDOM)
        if u is None or r is None:
            continue
        mu, mr = point_median(u), point_median(r)
        recorded = ev.values.get(f"{s.name}.inflation")
        if not mr or not (mu or isinstance(recorded, (int, float))):
            continue
        lo = ev.values.get(f"{s.name}.inflation_ci_low")
        hi = ev.values.get(f"{s.name}.inflation_ci_high")
        return Inflation(
            ratio=mu / mr if mu else float(recorded),  # type: ignore[arg-type]
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
    """``ev`` with the points that are not physical bandwidths labelled and stored without a
    bandwidth (``advisor.measure.artefact_point``: label kept, no samples, no statistics).

    - a point read from an untouched source (label ``untouched``) is a zero-page artefact; the
      inflation it shows (``<series>.inflation``, median untouched / median random-filled) is
      recorded in ``values`` first when the measurement did not record it, so the finding
      keeps its ratio while the point keeps no bandwidth;
    - a bandwidth point above ``factor`` x the copy ceiling of the same run (``Stats`` -> its
      max, or bytes/s) is replaced by the harness' ``checked_point`` (clpeak's zero-copy rule
      via ``advisor.measure.ceiling.plausibility``);
    - a point already labelled keeps its label and loses its samples and statistics.
    ``ceiling`` None skips the second rule.
    """
    from advisor.measure import artefact_point, checked_point

    values = dict(ev.values)
    out = []
    for s in ev.series:
        pts = []
        u, r = s.point(UNTOUCHED), s.point(RANDOM)
        mu = point_median(u) if u is not None and u.artefact is None else None
        mr = point_median(r) if r is not None else None
        if s.unit == BPS and mu and mr and f"{s.name}.inflation" not in values:
            values[f"{s.name}.inflation"] = mu / mr
        for p in s.points:
            if p.artefact is not None:
                p = artefact_point(p)
            elif s.unit == BPS:
                if p.label == UNTOUCHED:
                    p = artefact_point(p, ZERO_PAGE_ARTEFACT)
                elif ceiling is not None:
                    p = checked_point(p, ceiling, factor=factor)
            pts.append(p)
        out.append(s.model_copy(update={"points": pts}))
    return ev.model_copy(update={"series": out, "values": values})
