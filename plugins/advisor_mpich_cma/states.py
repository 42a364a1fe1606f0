"""Is a series of measurements bimodal?  The fast/slow machine state of background.md §4 (pure).

Some VMs switch intra-node copies between a fast and a slow state, between launches and inside
one (CMA-off bandwidth 12-13 vs 7.3-7.8 GB/s at 64 KiB-1 MiB on this project's AMD VM).  That
state is a *condition* of the measurement, recorded next to it; it must not decide a verdict:

* paired (MPI_T) evidence takes every ratio between two adjacent batches, which share the state,
  so the state cancels and nothing else is done about it;
* the separate-launch fallback compares launches that may sit in different states.  Its
  fastest-half trimming (``threshold.kept_runs``) already compares within the fast mode when at
  least half of a configuration's launches are fast; where a configuration's per-launch medians
  are bimodal *and* its kept launches still hold both modes, ``threshold.analyse_sweep`` widens
  the noise floor to the measured state swing (the ratio of the two modes' centres minus 1), so
  a difference smaller than the swing is never called real.  Comparing only launches of the
  same mode was the other option; it was not taken because the 3-5 launches per configuration
  of a sweep leave too few same-mode pairs to compare at all.  One case no single series shows:
  every launch of one configuration slow and every launch of the other fast; that is why the
  paired mode runs first.

Method (``bimodality``), on the logarithms of the values (the state multiplies every rate):

1. Split: the two-group partition of the sorted values that maximises the between-group
   variance (Otsu 1979, "A threshold selection method from gray-level histograms", IEEE Trans.
   SMC 9:62; in one dimension the best 2-partition is contiguous in sorted order, Fisher 1958,
   "On grouping for maximum homogeneity", JASA 53:789), found exactly by trying every cut.
2. Gap criterion: the split is two modes when the groups' central ``LEVEL`` ranges (mean +-
   z * sd, z the normal quantile of ``LEVEL``, i.e. 1.96 for 95 %) do not overlap:
   ``mean_hi - mean_lo > z * (sd_lo + sd_hi)``.  That implies Ashman's D =
   sqrt(2) |mean_hi - mean_lo| / sqrt(sd_lo^2 + sd_hi^2) >= sqrt(2) z = 2.77, beyond the D > 2
   Ashman, Bird & Zepf (1994, AJ 108:2348) require for a clean separation of two modes;
   the other way round does not hold for a hard split: the halves of one normal sample give
   D = 2.65 but fail the gap criterion (separation 1.60 sd vs 2.36), which is why the criterion
   is the gap and not D alone.
3. Each group needs ``MIN_GROUP`` members (a spread needs two values); fewer values in all than
   ``2 * MIN_GROUP`` give "not bimodal" with ``testable`` False.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

#: Level of each mode's central range in the gap criterion: the project's CI level
#: (``advisor_mpich_cma.minimax.LEVEL``, DESIGN.md "Measurement hygiene").
LEVEL = 0.95
#: Smallest group: a standard deviation needs two values.
MIN_GROUP = 2


@dataclass(frozen=True)
class Bimodality:
    """Result of ``bimodality``.

    Attributes:
        bimodal: two modes by the gap criterion (module docstring).
        testable: enough values to test (``>= 2 * MIN_GROUP``).
        n: number of finite, positive values used.
        low_center, high_center: median of each group, in the values' unit (None if untestable).
        low_share: share of values in the low group (0..1).
        mode_ratio: high_center / low_center (>= 1; the state swing when bimodal).
        separation: (mean_hi - mean_lo) / (z * (sd_lo + sd_hi)) on log values (> 1: bimodal;
            inf when both groups have no spread).
        low_index: indices (into the input) of the low group.
    """

    bimodal: bool
    testable: bool
    n: int
    low_center: float | None = None
    high_center: float | None = None
    low_share: float = 0.0
    mode_ratio: float = 1.0
    separation: float = 0.0
    low_index: tuple[int, ...] = ()

    def as_values(self, prefix: str = "state") -> dict:
        """Flat ``Evidence.values`` keys: ``<prefix>.bimodal`` (bool), ``<prefix>.modes`` (1 or
        2), ``<prefix>.low_share`` / ``<prefix>.high_share`` (0..1), ``<prefix>.mode_ratio``
        (high/low centre), ``<prefix>.separation``, ``<prefix>.n``."""
        return {f"{prefix}.bimodal": self.bimodal, f"{prefix}.modes": 2 if self.bimodal else 1,
                f"{prefix}.low_share": round(self.low_share if self.bimodal else 0.0, 4),
                f"{prefix}.high_share": round(1.0 - self.low_share if self.bimodal else 1.0, 4),
                f"{prefix}.mode_ratio": round(self.mode_ratio if self.bimodal else 1.0, 4),
                f"{prefix}.separation": round(min(self.separation, 1e9), 4),
                f"{prefix}.n": self.n}


def bimodality(values: Sequence[float], *, level: float = LEVEL) -> Bimodality:
    """Two modes or one in ``values`` (any positive unit: bytes/s, seconds); see the module
    docstring for the method and the source of every constant.

    :param values: one series, e.g. the per-batch bandwidths of one configuration over the
        rounds of a paired launch, or the per-launch medians of one configuration.  Non-finite
        and non-positive values are ignored.
    :param level: level of each mode's central range (0 < level < 1).
    :raises ValueError: ``level`` outside (0, 1).
    """
    import numpy as np

    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    raw = np.asarray(list(values), dtype=float)
    keep = np.flatnonzero(np.isfinite(raw) & (raw > 0))
    n = int(keep.size)
    if n < 2 * MIN_GROUP:
        return Bimodality(False, False, n)
    order = keep[np.argsort(raw[keep], kind="stable")]
    x = np.log(raw[order])
    z = NormalDist().inv_cdf(0.5 + level / 2)
    # Otsu: between-group variance w0 w1 (m0 - m1)^2 at every cut k (low = x[:k])
    cs = np.cumsum(x)
    k = np.arange(MIN_GROUP, n - MIN_GROUP + 1)
    m0 = cs[k - 1] / k
    m1 = (cs[-1] - cs[k - 1]) / (n - k)
    between = k * (n - k) * (m1 - m0) ** 2
    cut = int(k[int(np.argmax(between))])
    lo, hi = x[:cut], x[cut:]
    spread = z * (float(np.std(lo, ddof=1)) + float(np.std(hi, ddof=1)))
    sep_abs = float(hi.mean() - lo.mean())
    separation = sep_abs / spread if spread > 0 else (float("inf") if sep_abs > 0 else 0.0)
    lo_c = float(np.exp(np.median(lo)))
    hi_c = float(np.exp(np.median(hi)))
    return Bimodality(bimodal=separation > 1.0, testable=True, n=n, low_center=lo_c,
                      high_center=hi_c, low_share=cut / n, mode_ratio=hi_c / lo_c,
                      separation=separation,
                      low_index=tuple(sorted(int(i) for i in order[:cut])))


def state_of_paired(per_size: Sequence[tuple[int, Sequence[float]]], *,
                    level: float = LEVEL) -> tuple[dict, dict]:
    """The machine state over the sizes of one paired launch.

    :param per_size: ``(bytes, per-round values)`` of the reference configuration (CMA off
        bandwidth in bytes/s: the copy path the state is defined on, background.md §4).
    :return: ``(values, notes)``: ``values`` has ``state.*`` keys (``Bimodality.as_values``;
        ``state.bimodal`` True when any size is bimodal, ``state.sizes_bimodal`` the count,
        ``state.sizes_tested`` the testable sizes, the other keys from the bimodal size whose
        rarer mode holds the largest share of the batches, the largest mode ratio among equals)
        and ``state.bimodal:<bytes>`` per testable size; ``notes`` one human line for
        ``Conditions.notes["machine_state"]``.

    Which size stands for the launches: whether they met both states
    (``advisor_mpich_cma.sequential.machine_states``) is read where both modes were met most
    evenly.  The size with the widest swing was taken before; in the four full probes recorded on
    the 2-core VM at 5-8 % steal (tests/data/mpich_cma/paired-stalls-5.0.2.json) it was each
    time a size whose slow mode was a few stray batches (2-6 % of them, 1.4-12.7 times slower;
    the hypervisor's stalls hit 1 KiB as well), while at other sizes of the same launches the
    two states of the copy path (x1.4-1.6, as background.md section 4 records them) each held
    a quarter or more of the batches.  All four were read as launches that met one state, and
    every candidate was tied by that rule (``minimax.decide(one_state=)``).
    """
    tests = [(int(n), bimodality(v, level=level)) for n, v in per_size]
    tested = [(n, b) for n, b in tests if b.testable]
    bim = [(n, b) for n, b in tested if b.bimodal]
    if bim:
        n_top, top = max(bim, key=lambda t: (min(t[1].low_share, 1.0 - t[1].low_share),
                                             t[1].mode_ratio))
    elif tested:
        n_top, top = max(tested, key=lambda t: t[1].separation)
    else:
        n_top, top = 0, Bimodality(False, False, 0)
    values = top.as_values()
    values["state.bimodal"] = bool(bim)
    values["state.modes"] = 2 if bim else 1
    values["state.sizes_bimodal"] = len(bim)
    values["state.sizes_tested"] = len(tested)
    for n, b in tested:
        values[f"state.bimodal:{n}"] = b.bimodal
    if bim:
        note = (f"bimodal at {len(bim)} of {len(tested)} sizes (fast/slow modes x"
                f"{top.mode_ratio:.2f} apart at {n_top} bytes, {top.low_share:.0%} of batches "
                f"in the slow mode); paired ratios cancel it")
    elif tested:
        note = f"one mode at all {len(tested)} tested sizes"
    else:
        note = "not tested (too few rounds)"
    return values, {"machine_state": note}
