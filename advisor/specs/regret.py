"""Building blocks of a per-size regret figure (issue 27), shared by the probes that draw one
(mpich-cma's thresholds, openmpi's paths): pure, no I/O, no drawing.

A regret figure shows, per measured message size (bytes), how much slower a configuration is
than the best candidate measured at that size, in percent.  Its grammar, the same in every
probe: the default as rings and the advice as dots (``FigureSeries.marker``; a dot inside a ring
where they are equal), which candidate is best at each size as shaded x ranges
(:func:`best_bands`, named again in a note by :func:`best_note` for the terminal plot, which
draws no bands), the sizes where the advice loses beyond noise as diamonds, and each worst
regret beyond noise as a horizontal marker (:func:`ceiling_markers`: what the minimax compares).
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor.specs.figures import FigureBand, FigureMarker, FigureSeries
from advisor.specs.units import format_bytes

__all__ = ["span_text", "sizes_text", "label_runs", "best_bands", "best_note",
           "ceiling_markers", "diamonds", "verdict", "trade_off_note"]


def span_text(run: Sequence[int]) -> str:
    """``"1-6 KiB"``, ``"8 KiB-16 MiB"``, ``"16 MiB"``: a run of sizes (bytes) as first-last."""
    lo, hi = format_bytes(run[0]), format_bytes(run[-1])
    if lo == hi:
        return lo
    a, ua = lo.split(" ")
    b, ub = hi.split(" ")
    return f"{a}-{b} {ub}" if ua == ub else f"{lo}-{hi}"


def label_runs(labelled: Sequence[tuple[int, str]]) -> list[tuple[str, list[int]]]:
    """Runs of consecutive ``(bytes, label)`` items (ascending sizes) with the same label:
    ``[("best: ucx", [256, 512]), ...]``."""
    out: list[tuple[str, list[int]]] = []
    for n, label in labelled:
        if out and out[-1][0] == label:
            out[-1][1].append(n)
        else:
            out.append((label, [n]))
    return out


def sizes_text(sizes: Sequence[int], keep: Sequence[bool]) -> str:
    """``"1-6 KiB, 16 MiB"``: the runs of consecutive ``sizes`` whose ``keep`` is True."""
    runs = label_runs([(n, "kept" if k else "") for n, k in zip(sizes, keep)])
    return ", ".join(span_text(r) for label, r in runs if label)


def best_bands(runs: Sequence[tuple[str, list[int]]]) -> list[FigureBand]:
    """One x band per run (``label_runs`` of the best candidate's name per size); edges halfway
    (geometric mean) between neighbouring measured sizes, the outer ones at the first and last
    measured size (the x range stays the data's)."""
    out = []
    for i, (name, sizes) in enumerate(runs):
        low = (sizes[0] * runs[i - 1][1][-1]) ** 0.5 if i else sizes[0]
        high = (sizes[-1] * runs[i + 1][1][0]) ** 0.5 if i + 1 < len(runs) else sizes[-1]
        out.append(FigureBand(axis="x", low=float(low), high=float(high), label=name))
    return out


def best_note(runs: Sequence[tuple[str, list[int]]]) -> str:
    """``"best: CMA off at 1-6 KiB, CMA on at 8 KiB-16 MiB"`` (measured sizes; each run's label
    without its ``"best: "``): the text twin of :func:`best_bands`."""
    return "best: " + ", ".join(f"{name.removeprefix('best: ')} at {span_text(sizes)}"
                                for name, sizes in runs)


def ceiling_markers(ceilings: dict[str, tuple[float, bool]]) -> list[FigureMarker]:
    """A horizontal marker per role (``default``/``advised``) at its worst regret (percent)
    where that regret is beyond noise (``(worst, beyond)``); none where it is not (it would lie
    on the 0 line under the series); one for both where they are equal."""
    shown = {role: worst for role, (worst, beyond) in ceilings.items() if beyond}
    if len(shown) == 2 and shown["default"] == shown["advised"]:  # one line, not two on top
        return [FigureMarker(axis="y", value=shown["advised"], role="advised",
                             label="worst regret of the default = advice")]
    return [FigureMarker(axis="y", value=worst, role=role,
                         label=f"worst regret of the {'advice' if role == 'advised' else role}")
            for role, worst in shown.items()]


def diamonds(sizes: Sequence[int], regret: dict[int, float], *,
             evidence: Optional[str]) -> FigureSeries:
    """The sizes where the advice is worse than the best beyond noise, at its regret there
    (percent): large diamonds, listed before the rings and dots so those stay on top."""
    return FigureSeries(label="advice worse beyond noise", role="advised", kind="points",
                        marker="diamond", evidence=evidence, x=[float(n) for n in sizes],
                        y=[regret[n] for n in sizes])


def verdict(who: str, regret: dict[int, float], beyond: dict[int, bool]) -> tuple[str, bool]:
    """One clause on a candidate's regret (``regret``: bytes -> percent, ascending sizes;
    ``beyond``: bytes -> worse than the best beyond noise there), and whether it is worse
    beyond noise anywhere: ``"advice (64 KiB): up to 15 % at 16 MiB (beyond noise at
    16 MiB)"``, ``"default: regret 0 at every size"``."""
    n = max(regret, key=lambda m: regret[m])
    if not any(beyond.values()):
        return (f"{who}: " + ("regret 0 at every size" if regret[n] == 0 else
                              f"within noise of the best at every size (worst {regret[n]:.2g} %)"),
                False)
    sizes = list(regret)
    return (f"{who}: up to {regret[n]:.3g} % at {format_bytes(n)} (beyond noise at "
            f"{sizes_text(sizes, [beyond.get(m, False) for m in sizes])})", True)


def trade_off_note(lost: bool, fine: Optional[Sequence[str]], what: str,
                   winners: str = "") -> str:
    """The trade-off line: ``lost``: the advice is worse than the best beyond noise somewhere;
    ``fine``: the candidates (``what``: "threshold", "path") within noise of the best at every
    size (None: not known); ``winners``: who beats the advice where it loses
    (``"ucx at 256 B-4 KiB"``)."""
    if not lost:
        return "no trade-off: the advice is within noise of the best at every size"
    where = f"; {winners}" if winners else ""
    if fine is None:
        return f"the advice loses beyond noise somewhere{where}"
    if not fine:
        return f"trade-off: no {what} is within noise of the best at every size{where}"
    return f"within noise of the best at every size: {', '.join(fine[:3])}{where}"
