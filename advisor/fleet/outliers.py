"""Outlier rules of the fleet report, per class and headline figure (pure).

* Robust rule: a value outside median ± k·MAD of its class, k = :data:`DEFAULT_K` (6) by
  default.  This is the rule of Intel Cluster Checker ("a value is an outlier when it lies more
  than 6 median absolute deviations from the median", configurable), cited in issue 15.  MAD is
  the raw median absolute deviation (``scipy.stats.median_abs_deviation`` with ``scale=1``; numpy
  computes it here, scipy is not a dependency).  It needs :data:`MIN_NODES` values: with two, the
  median is their mean and neither can be told apart.  The MAD is held at least a fraction of
  the median, the *MAD floor* (``mad_floor``; :data:`MAD_FLOOR_REL`, 1 %, by default), so
  identical copies (MAD 0) do not flag a node for sub-noise differences: the smallest A/A noise
  floor the shipped profile records (host-buffer ``memcpy-sweep`` ``aa_noise_floor.4194304``) is
  0.8 %.  A site whose nodes measure less steadily than that sets its own (``[fleet]
  mad_floor``, ``advisor fleet report --mad-floor``): on a shared 2-core VM, one node's memcpy
  headline at 256 MiB read 6.99-11.96 GB/s in 8 fresh processes (MAD 10 % of the median), and
  with four such nodes a MAD floor of 1 % let chance alone flag a healthy one
  (``tests/slurm/test_fleet_probe.py``).
* Baseline rule: ``|value / baseline - 1| > tolerance`` (SuperBench's ±5 % against a baseline).
* Floors: a per-figure absolute limit (Azure HPC health checks' per-node-type floors): a minimum
  for rates (figure names ending ``_per_s``), a maximum for times (ending ``_s``); other units
  are minima.

Public API: :func:`robust_flags`, :func:`baseline_flags`, :func:`floor_flags`, :class:`Flag`,
:func:`robust_band` and :func:`band_record` (the band a class profile stores for ``advisor
check``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np

__all__ = ["DEFAULT_K", "MIN_NODES", "MAD_FLOOR_REL", "Flag", "robust_band", "robust_flags",
           "baseline_flags", "floor_flags", "figure_matches", "band_record", "is_time_figure"]

DEFAULT_K = 6.0
MIN_NODES = 3
MAD_FLOOR_REL = 0.01


@dataclass(frozen=True)
class Flag:
    """One node flagged on one figure: ``rule`` is ``mad``, ``baseline`` or ``floor``;
    ``low``/``high`` the accepted band (None: open); ``reason`` one line for people."""

    node: str
    figure: str
    rule: str
    value: float
    low: Optional[float]
    high: Optional[float]
    reason: str


def robust_band(values: Mapping[str, float], k: float = DEFAULT_K,
                mad_floor: float = MAD_FLOOR_REL) -> Optional[tuple]:
    """The robust rule's accepted band of one class's figure: ``(low, high, median, mad)``
    with ``low, high = median -/+ k·MAD``, the MAD held at least ``mad_floor`` (a fraction) of
    the median; None below :data:`MIN_NODES` values.  ``values``: node -> value."""
    if len(values) < MIN_NODES:
        return None
    x = np.fromiter(values.values(), dtype=float, count=len(values))
    med = float(np.median(x))
    mad = max(float(np.median(np.abs(x - med))), mad_floor * abs(med))
    return med - k * mad, med + k * mad, med, mad


def band_record(values: Mapping[str, float], figure: str, k: float = DEFAULT_K,
                mad_floor: float = MAD_FLOOR_REL):
    """The robust band of one class's ``figure`` as a class profile stores it
    (``advisor.models_fleet.HeadlineBand``): :func:`robust_band`'s low, high, median and MAD,
    ``k``, the node count and the unit; below :data:`MIN_NODES` values only the median (no band,
    no MAD).  ``values``: node -> value (not empty)."""
    from advisor.models_fleet import HeadlineBand
    from advisor.specs.headline import headline_unit

    band = robust_band(values, k, mad_floor)
    unit = headline_unit(figure.split(":", 1)[-1])
    if band is None:
        med = float(np.median(np.fromiter(values.values(), dtype=float, count=len(values))))
        return HeadlineBand(median=med, k=k, nodes=len(values), unit=unit)
    lo, hi, med, mad = band
    return HeadlineBand(median=med, mad=mad, k=k, low=lo, high=hi, nodes=len(values), unit=unit)


def robust_flags(values: Mapping[str, float], figure: str, k: float = DEFAULT_K,
                 mad_floor: float = MAD_FLOOR_REL) -> list[Flag]:
    """Nodes of one class whose ``figure`` lies outside median ± k·MAD (:func:`robust_band`,
    the MAD held at least ``mad_floor`` of the median); none below :data:`MIN_NODES` values.
    ``values``: node -> value."""
    band = robust_band(values, k, mad_floor)
    if band is None:
        return []
    lo, hi, med, mad = band
    return [Flag(n, figure, "mad", float(v), lo, hi,
                 f"{figure} = {v:.4g}, {'below' if v < lo else 'above'} its class's "
                 f"band [{lo:.4g}, {hi:.4g}] (median {med:.4g} ± {k:g}·MAD, MAD {mad:.3g})")
            for n, v in values.items() if v < lo or v > hi]


def baseline_flags(values: Mapping[str, float], figure: str, baseline: float,
                   tolerance: float) -> list[Flag]:
    """Nodes whose ``figure`` differs from ``baseline`` by more than ``tolerance`` (a fraction)."""
    lo, hi = baseline * (1 - tolerance), baseline * (1 + tolerance)
    lo, hi = min(lo, hi), max(lo, hi)
    return [Flag(n, figure, "baseline", v, lo, hi,
                 f"{figure} = {v:.4g}, {v / baseline - 1:+.1%} from the baseline {baseline:.4g} "
                 f"(tolerance ±{tolerance:.0%})")
            for n, v in values.items() if not (lo <= v <= hi)]


def figure_matches(key: str, name: str) -> bool:
    """Whether the floor ``name`` (``figure`` or ``probe:figure``) names ``key``
    (``probe:figure``)."""
    return key == name or key.split(":", 1)[-1] == name


def is_time_figure(figure: str) -> bool:
    """Whether ``figure`` (``name`` or ``probe:name``) is a time, where higher is worse: its
    name ends ``_s`` and not ``_per_s`` (``advisor.specs.headline.headline_unit``)."""
    return figure.endswith("_s") and not figure.endswith("_per_s")


def floor_flags(values: Mapping[str, float], figure: str, limit: float) -> list[Flag]:
    """Nodes below the floor ``limit`` (a maximum for figures in seconds, see module doc)."""
    if is_time_figure(figure):
        return [Flag(n, figure, "floor", v, None, limit,
                     f"{figure} = {v:.4g}, above the limit {limit:.4g}")
                for n, v in values.items() if v > limit]
    return [Flag(n, figure, "floor", v, limit, None,
                 f"{figure} = {v:.4g}, below the floor {limit:.4g}")
            for n, v in values.items() if v < limit]
