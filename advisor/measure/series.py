"""Warm-up in an ordered series: where first-use values end, and the series' shape.

Split from ``advisor.measure.stats``, which builds on :func:`finite_samples` here; only numpy is
used, imported lazily so ``import advisor.measure`` stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Optional, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["SeriesKind", "SeriesShape", "classify_series", "finite_samples", "split_warmup"]


def finite_samples(samples: Sequence[float]) -> "np.ndarray":
    """``samples`` as a flat float array.

    Raises:
        ValueError: no samples, or a NaN or infinite value among them.
    """
    import numpy as np

    a = np.asarray(samples, dtype=float).ravel()
    if a.size == 0:
        raise ValueError("no samples: statistics need at least one value")
    if not np.all(np.isfinite(a)):
        raise ValueError("samples contain NaN or infinite values")
    return a


# --------------------------------------------------------------------------- warm-up


def split_warmup(values: Sequence[float], *, higher_is_better: bool = False) -> int:
    """Number of leading first-use (warm-up) values in an ordered series.

    Rule (parameter-free, so no tuned threshold): a leading prefix ``values[:k]`` is warm-up
    when every value in it is *worse* than every later value (slower for times, lower for
    bandwidths) and farther from the later values' median than the full range (max - min) of
    the later values.  The smallest such ``k`` is taken and the rule is applied again to the
    rest, so a series that improves in steps (1 -> 2 -> 5 -> 10.5 -> 10.8 GB/s, first-touch
    page faults) is split where it settles.  At least two values are always left as steady state.

    Args:
        values: ordered measurements (seconds per call, or bytes/s with ``higher_is_better``).
        higher_is_better: orientation of ``values``.

    Returns:
        ``k`` in [0, len(values) - 2] (0 for fewer than three values).
    """
    import numpy as np

    x = np.asarray(values, dtype=float).ravel()
    if not higher_is_better:
        x = -x  # from here on, higher is better
    done = 0
    while x.size - done >= 3:
        rest = x[done:]
        n = rest.size
        # suffix minimum of rest[k:] for every k; prefix maximum of rest[:k]
        suf_min = np.minimum.accumulate(rest[::-1])[::-1]
        suf_max = np.maximum.accumulate(rest[::-1])[::-1]
        pre_max = np.maximum.accumulate(rest)
        found = 0
        ks = np.arange(1, n - 1)
        for k in ks[pre_max[ks - 1] < suf_min[ks]]:  # prefix entirely worse than the rest
            k = int(k)
            tail = rest[k:]
            med = float(np.median(tail))
            width = float(suf_max[k] - suf_min[k])
            if np.all(med - rest[:k] > width):
                found = k
                break
        if not found:
            break
        done += found
    return done


SeriesKind = Literal["steady", "first-use", "rising", "settling"]


@dataclass(frozen=True)
class SeriesShape:
    """What ``classify_series`` found.

    Attributes:
        kind: "steady" (no warm-up), "first-use" (one slow first value), "rising" (several
            values that improve monotonically before settling: first-touch page faults, caches,
            lazy set-up), "settling" (several warm-up values that do not improve at every step).
        warmup: number of leading warm-up values.
        monotonic: the warm-up values improve at every step.
        steady_median: median of the values after the warm-up (unit of the input).
        warmup_ratio: worst warm-up value relative to the steady median, oriented so that
            > 1 means the warm-up is worse (e.g. first call 2000x slower -> 2000.0).
    """

    kind: SeriesKind
    warmup: int
    monotonic: bool
    steady_median: float
    warmup_ratio: Optional[float]


def classify_series(values: Sequence[float], *, higher_is_better: bool = False) -> SeriesShape:
    """Classify an ordered series (iterations, or runs in fresh processes) by its warm-up.

    Args:
        values: ordered values, at least one.
        higher_is_better: True for bandwidths.

    Returns:
        ``SeriesShape``.

    Raises:
        ValueError: empty or non-finite values.
    """
    import numpy as np

    x = finite_samples(values)
    k = split_warmup(x, higher_is_better=higher_is_better)
    steady = x[k:]
    med = float(np.median(steady))
    if k == 0:
        return SeriesShape("steady", 0, False, med, None)
    warm = x[:k]
    steps = np.diff(x[: k + 1])
    monotonic = bool(np.all(steps > 0) if higher_is_better else np.all(steps < 0))
    worst = float(warm.min() if higher_is_better else warm.max())
    ratio = (med / worst if higher_is_better else worst / med) if worst > 0 and med > 0 else None
    if k == 1:
        kind: SeriesKind = "first-use"
    elif monotonic:
        kind = "rising"
    else:
        kind = "settling"
    return SeriesShape(kind, k, monotonic, med, ratio)
