"""``advisor check``'s verdict on one node against its class profile (pure).

A node is **healthy** when its class facts equal the class profile's
(``advisor.machine_class.class_differences``: each differing fact is named) and every headline
figure measured here lies inside the band the class profile stores for it
(``[fleet.headlines."probe:figure"]``, ``advisor.models_fleet``, written by ``advisor fleet
report`` from ``advisor.fleet.outliers.robust_band``: median ± k·MAD of the class's nodes).  A
figure whose band has no bounds (fewer than 3 nodes had it) is reported and never drifts.
Only the worse side of a band is a drift, by the figure's name as the fleet's floors read it
(``advisor.fleet.outliers.floor_flags``): a rate (``*_per_s``) below its band, a time
(``*_s``) above it; a figure of another unit on either side.  A node faster than its class is
not unhealthy: it is reported (``better``), not drained.
Otherwise the node has **drifted**; each reason is one line, facts first, then figures in
name order, then measurements that failed.

Public API: :class:`FigureCheck`, :class:`CheckResult`, :func:`verdict`, :func:`fact_reason`,
:func:`figure_reason`, :func:`plain_line`.  The measurement that feeds it is ``advisor.fleet.check_run``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

__all__ = ["FigureCheck", "CheckResult", "verdict", "fact_reason", "figure_reason",
           "plain_line", "UNSAFE_IN_LINE"]


@dataclass(frozen=True)
class FigureCheck:
    """One headline figure of this node against its class's band (units: the figure's)."""

    figure: str
    value: float
    low: Optional[float]
    high: Optional[float]
    median: float
    unit: str

    @property
    def inside(self) -> bool:
        """Inside ``[low, high]`` (an open bound accepts every value)."""
        return (self.low is None or self.value >= self.low) and \
            (self.high is None or self.value <= self.high)

    @property
    def better(self) -> bool:
        """Outside the band on its better side (module docstring): a rate above, a time below."""
        if self.figure.endswith("_per_s"):
            return self.high is not None and self.value > self.high
        if self.figure.endswith("_s"):
            return self.low is not None and self.value < self.low
        return False

    @property
    def ok(self) -> bool:
        """Not a drift: inside the band, or outside it on the better side."""
        return self.inside or self.better


@dataclass(frozen=True)
class CheckResult:
    """What ``advisor check`` prints: ``facts`` are ``(dotted name, expected, found)`` of the
    differing class facts; ``failed`` one line per measurement that gave no figure;
    ``skipped`` the figures of the band that nothing here can measure briefly; ``took_s`` the
    wall time of the check in seconds."""

    node: str
    facts: Sequence[tuple[str, Any, Any]]
    figures: Sequence[FigureCheck]
    failed: Sequence[str] = ()
    skipped: Sequence[str] = ()
    took_s: float = 0.0
    reasons: Sequence[str] = field(default=())

    @property
    def state(self) -> str:
        """``healthy`` or ``drifted``."""
        return "drifted" if self.reasons else "healthy"

    def to_json(self) -> dict:
        """The ``--json`` object (docs/cluster.md, "Node health"): node, state, reasons, the
        differing facts, every measured figure with its band, took_s."""
        return {
            "node": self.node, "state": self.state, "reasons": list(self.reasons),
            "facts": [{"fact": k, "expected": _plain(a), "found": _plain(b)}
                      for k, a, b in self.facts],
            "figures": [{"figure": f.figure, "value": f.value, "low": f.low, "high": f.high,
                         "median": f.median, "unit": f.unit, "ok": f.ok, "inside": f.inside}
                        for f in self.figures],
            "took_s": round(self.took_s, 3),
        }


def _plain(v: Any) -> Any:
    """A fact's value as JSON carries it (lists and dicts as they are, others as text)."""
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        return str(v)


def fact_reason(name: str, expected: Any, found: Any) -> str:
    """``memory.thp_enabled = never here, the class has always`` (values as JSON writes them,
    strings bare; ``None`` as ``unknown``)."""
    def text(v: Any) -> str:
        if v is None:
            return "unknown"
        return v if isinstance(v, str) else json.dumps(_plain(v))

    return f"{name} = {text(found)} here, the class has {text(expected)}"


#: Characters a reason line loses in :func:`plain_line`: quotes, ``$``, backticks and
#: backslashes, which NHC's message handling cuts or re-reads (``die`` passes the message to
#: ``node-mark-offline`` through ``eval`` inside single quotes; ``check_cmd_output`` strips
#: ``"``, backticks and ``$`` from a matched line).
UNSAFE_IN_LINE = "'\"`$\\"


def plain_line(text: str) -> str:
    """``text`` on one printable line without :data:`UNSAFE_IN_LINE` (each becomes ``_``), for
    the ``drifted:`` lines a node health checker reads."""
    line = " ".join(str(text).split())
    line = "".join(ch if ch.isprintable() and ch not in UNSAFE_IN_LINE else "_" for ch in line)
    return line


def figure_reason(f: FigureCheck) -> str:
    """``host-buffer:memcpy_bandwidth_largest_bytes_per_s = 2.5e+09, below the class band
    [7.9e+09, 1.2e+10]`` (4 significant digits, the unit when known)."""
    side = "below" if f.low is not None and f.value < f.low else "above"
    unit = f" {f.unit}" if f.unit else ""
    lo = "-inf" if f.low is None else f"{f.low:.4g}"
    hi = "inf" if f.high is None else f"{f.high:.4g}"
    return (f"{f.figure} = {f.value:.4g}{unit}, {side} the class band [{lo}, {hi}] "
            f"(median {f.median:.4g})")


def verdict(node: str, differences: Sequence[tuple[str, Any, Any]],
            measured: Mapping[str, float], bands: Mapping[str, Any], *,
            failed: Sequence[str] = (), skipped: Sequence[str] = (),
            took_s: float = 0.0) -> CheckResult:
    """The check of ``node``: ``differences`` from ``class_differences(class facts, node
    facts)``; ``measured`` figure (``probe:name``) -> value measured here; ``bands`` figure ->
    ``advisor.models_fleet.HeadlineBand`` of the class profile (a measured figure without a
    band is left out); ``failed`` one line per failed measurement (each is a reason)."""
    figs = [FigureCheck(k, float(v), bands[k].low, bands[k].high, bands[k].median, bands[k].unit)
            for k, v in sorted(measured.items()) if k in bands]
    reasons = [fact_reason(*d) for d in differences]
    reasons += [figure_reason(f) for f in figs if not f.ok]
    reasons += list(failed)
    return CheckResult(node, list(differences), figs, list(failed), list(skipped), took_s,
                       reasons)
