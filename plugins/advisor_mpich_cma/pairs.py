"""The input of the CMA threshold decision (``advisor_mpich_cma.minimax``): CMA-on and CMA-off
results taken in pairs, per rank pair and message size (``Paired``), and how they are read from
the probe's evidence (``paired_from_evidence``: a ``cma-paired`` record of the paired worker mode,
or a separate-launch ``cma-sweep``).  Latencies in seconds, bandwidths in bytes/s.  Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Evidence


@dataclass(frozen=True)
class Paired:
    """Paired results of one rank pair: ``sizes[j]`` with index-aligned lists per round."""

    name: str
    sizes: tuple[int, ...]
    lat_on: tuple[tuple[float, ...], ...]
    lat_off: tuple[tuple[float, ...], ...]
    bw_on: tuple[tuple[float, ...], ...]
    bw_off: tuple[tuple[float, ...], ...]

    #: Per size, per round: the launch (repeat) the round came from, index-aligned with the
    #: latency and bandwidth rounds; empty: every round from one launch.
    lat_launch: tuple[tuple[str, ...], ...] = ()
    bw_launch: tuple[tuple[str, ...], ...] = ()

    def pair_ratios(self, j: int) -> tuple["list[float]", "list[float]"]:
        """Per-pair ratios at size ``j``: (latency off/on, bandwidth on/off); > 1: CMA better."""
        lat = [off / on for on, off in zip(self.lat_on[j], self.lat_off[j]) if on > 0 and off > 0]
        bw = [on / off for on, off in zip(self.bw_on[j], self.bw_off[j]) if on > 0 and off > 0]
        return lat, bw

    def launches(self) -> list[str]:
        """The launches (repeats) this pair's rounds came from, in order of first appearance;
        ``[""]`` when none is recorded (one launch)."""
        seen = dict.fromkeys(x for rows in (*self.lat_launch, *self.bw_launch) for x in rows)
        return list(seen) or [""]

    def launch_ratios(self, j: int, launch: str) -> tuple["list[float]", "list[float]"]:
        """``pair_ratios`` of size ``j`` restricted to the rounds of ``launch`` (all rounds when
        no launch is recorded)."""
        def keep(on, off, tags):
            tags = tags or ("",) * len(on)
            return [(a, b) for a, b, t in zip(on, off, tags) if t == launch and a > 0 and b > 0]

        lt = self.lat_launch[j] if j < len(self.lat_launch) else ()
        bt = self.bw_launch[j] if j < len(self.bw_launch) else ()
        lat = [off / on for on, off in keep(self.lat_on[j], self.lat_off[j], lt)]
        bw = [on / off for on, off in keep(self.bw_on[j], self.bw_off[j], bt)]
        return lat, bw


def paired_from_evidence(ev: "Evidence", *, on: str = "cma-on", off: str = "cma-off",
                         lat: str = "latency", bw: str = "bandwidth") -> Paired:
    """``Paired`` from a ``cma-paired`` evidence (one point per size and launch, its label the
    launch's, samples = one value per round, index-aligned between on and off; rounds of
    several launches are tagged with their launch) or a separate-launch ``cma-sweep`` (one point per
    launch labelled ``run<i>``; a pair is the two launches of one round, each reduced to its
    median).  Artefact points (no samples) drop their round at that size."""
    import numpy as np

    paired = bool(ev.values.get("paired"))
    # (metric, bytes) -> {config: [(launch label, samples)]} for paired evidence (one point per
    # size and launch), {config@run: [median]} for a separate-launch sweep
    table: dict[tuple[str, int], dict] = {}
    for s in ev.series:
        metric, _, config = s.name.partition(":")
        if metric not in (lat, bw) or config not in (on, off):
            continue
        for pt in s.points:
            if pt.x is None:
                continue
            cell = table.setdefault((metric, int(pt.x)), {})
            if paired:
                cell.setdefault(config, []).append(
                    (pt.label or "", list(pt.samples) if not pt.artefact else []))
            elif pt.samples and not pt.artefact:
                cell.setdefault(f"{config}@{pt.label}", [float(np.median(pt.samples))])
    sizes = sorted({n for (_, n) in table})
    several = paired and any(len(v) > 1 for cell in table.values() for v in cell.values())

    def aligned(metric: str, n: int):
        """(on values, off values, launch of each round) at one size."""
        cell = table.get((metric, n), {})
        if paired:
            a_all, b_all = dict(cell.get(on, [])), dict(cell.get(off, []))
            xs, ys, tags = [], [], []
            for label in a_all:  # rounds pair up inside a launch, never across two
                a, b = a_all[label], b_all.get(label, [])
                k = min(len(a), len(b))
                xs += a[:k]
                ys += b[:k]
                tags += [label] * k
            return tuple(xs), tuple(ys), tuple(tags) if several else ()
        labels = sorted({k.split("@", 1)[1] for k in cell})
        both = [lb for lb in labels if f"{on}@{lb}" in cell and f"{off}@{lb}" in cell]
        return (tuple(cell[f"{on}@{lb}"][0] for lb in both),
                tuple(cell[f"{off}@{lb}"][0] for lb in both), ())

    la = [aligned(lat, n) for n in sizes]
    ba = [aligned(bw, n) for n in sizes]
    pair = ev.id.split(".", 1)[1] if "." in ev.id else ""
    launch_tags = several and any(x[2] for x in la + ba)
    return Paired(pair, tuple(sizes), tuple(x[0] for x in la), tuple(x[1] for x in la),
                  tuple(x[0] for x in ba), tuple(x[1] for x in ba),
                  lat_launch=tuple(x[2] for x in la) if launch_tags else (),
                  bw_launch=tuple(x[2] for x in ba) if launch_tags else ())
