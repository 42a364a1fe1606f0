"""``advisor fleet report``: classes, class profiles, outlier nodes and node states of a fleet
directory (``DIR/<node>.toml``, one per node, written by ``advisor probe -o``).

Steps: summarize every node file (``advisor.fleet.nodes``; a bad file is a ``failed`` node);
group readable nodes by ``Facts.class_fingerprint``; per class and headline figure apply the
outlier rules (``advisor.fleet.outliers``); per class pool the evidence of its healthy nodes and
re-derive the advice (``advisor.fleet.pool``), written to ``DIR/classes/<class>.toml`` with the
class's band of each headline figure (its ``[fleet]`` table, ``advisor.models_fleet``: what
``advisor check`` holds a node to).

Node states, kept apart: ``ok``; ``outlier`` (a figure flagged by a rule); ``failed`` (the file
could not be read as a profile, or a probe in it failed); ``no-result`` (an expected node without
a file); ``not-applicable`` (a readable profile where no probe applied).

Public API: :func:`build_report` -> :class:`FleetReport` (``to_json()``, ``flagged_hostlist``;
its tables are ``advisor.report.tables.fleet_tables``); :func:`compress_hostlist`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from advisor.fleet.outliers import (DEFAULT_K, MAD_FLOOR_REL, Flag, baseline_flags,
                                    figure_matches, floor_flags, robust_flags)

__all__ = ["STATES", "FLAGGED_STATES", "NodeRow", "ClassRow", "FleetReport", "build_report",
           "compress_hostlist"]

STATES = ("ok", "outlier", "failed", "no-result", "not-applicable")
#: States whose nodes go into the hostlist an admin may drain.
FLAGGED_STATES = ("outlier", "failed", "no-result")


def compress_hostlist(names: Sequence[str]) -> str:
    """Slurm hostlist of ``names`` (``node[1-3,7]``) by python-hostlist; names it cannot
    compress (odd characters) are joined with commas."""
    if not names:
        return ""
    import hostlist

    try:
        return hostlist.collect_hostlist(list(names))
    except Exception:  # noqa: BLE001 - hostlist.BadHostlist and odd names
        return ",".join(sorted(names))


@dataclass
class NodeRow:
    """One node: its state, class, the reason (one line) and its flags."""

    name: str
    state: str
    class_id: Optional[str] = None
    reason: Optional[str] = None
    flags: list = field(default_factory=list)


@dataclass
class ClassRow:
    """One machine class: its nodes, the class profile written, the figures' medians."""

    class_id: str
    nodes: list
    profile_path: Optional[str]
    pooled: int
    medians: dict = field(default_factory=dict)
    error: Optional[str] = None


@dataclass
class FleetReport:
    """What ``advisor fleet report`` prints (pure data; the CLI renders it)."""

    directory: str
    k: float
    nodes: list
    classes: list
    flags: list
    #: one line per probe whose ``headline`` failed (``advisor.steps`` error text, the nodes)
    warnings: list = field(default_factory=list)
    #: the robust rule's least MAD, a fraction of the median (``advisor.fleet.outliers``)
    mad_floor: float = MAD_FLOOR_REL

    def names(self, state: str) -> list[str]:
        return [n.name for n in self.nodes if n.state == state]

    @property
    def flagged(self) -> list[str]:
        return [n.name for n in self.nodes if n.state in FLAGGED_STATES]

    @property
    def flagged_hostlist(self) -> str:
        """Slurm hostlist of the outlier, failed and no-result nodes (e.g. for
        ``scontrol update nodename=... state=drain``; the tool never drains)."""
        return compress_hostlist(self.flagged)

    def counts(self) -> dict[str, int]:
        return {s: len(self.names(s)) for s in STATES}

    def to_json(self) -> dict:
        """The JSON report: counts, hostlists per state, classes (with profile paths), nodes."""
        return {
            "directory": self.directory, "k": self.k, "mad_floor": self.mad_floor,
            "counts": self.counts(),
            "hostlists": {s: compress_hostlist(self.names(s)) for s in STATES},
            "flagged_hostlist": self.flagged_hostlist,
            "classes": [{"class": c.class_id, "nodes": len(c.nodes),
                         "hostlist": compress_hostlist(c.nodes), "profile": c.profile_path,
                         "pooled_nodes": c.pooled, "medians": c.medians,
                         **({"error": c.error} if c.error else {})} for c in self.classes],
            "nodes": [{"name": n.name, "state": n.state, "class": n.class_id,
                       "reason": n.reason,
                       "flags": [{"figure": f.figure, "rule": f.rule, "value": f.value,
                                  "low": f.low, "high": f.high, "reason": f.reason}
                                 for f in n.flags]} for n in self.nodes],
        }


def _load_probes(probes: Optional[Mapping[str, Any]]) -> Mapping[str, Any]:
    if probes is not None:
        return probes
    from advisor.plugins import load

    return load().probes


def _baseline_figures(path: Path, probes: Mapping[str, Any],
                      warnings: list[str]) -> dict[str, float]:
    """The baseline profile's headline figures; a probe whose ``headline`` fails adds one line
    to ``warnings`` (no baseline rule for its figures)."""
    from advisor.fleet.headline import headlines_of
    from advisor.profile import load_profile

    prof = load_profile(path)  # a bad baseline is the user's bad input: raises ProfileError
    figures: dict[str, float] = {}
    for r in prof.results:
        if r.status == "ok" and r.probe in probes:
            faults: list[str] = []
            for k, v in headlines_of(probes[r.probe], r.evidence, faults=faults).items():
                figures[f"{r.probe}:{k}"] = v
            warnings += [f"headline figures of {r.probe} in the baseline {path} left out: {f}"
                         for f in faults]
    return figures


def build_report(directory: Path, *, k: float = DEFAULT_K, mad_floor: float = MAD_FLOOR_REL,
                 baseline: Optional[Path] = None,
                 tolerance: Optional[float] = None, floors: Optional[dict] = None,
                 expected: Optional[Sequence[str]] = None,
                 probes: Optional[Mapping[str, Any]] = None,
                 write_profiles: bool = True) -> FleetReport:
    """Report on the node profiles in ``directory``; writes ``directory/classes/<class>.toml``.

    :param k: MAD multiple of the robust rule (Intel Cluster Checker's 6 by default).
    :param mad_floor: the least MAD of the robust rule, a fraction of the class's median
        (``advisor.fleet.outliers``: 1 % by default).
    :param baseline: a profile whose headline figures every node is held to, within
        ``tolerance`` (a fraction, default 0.05: SuperBench's ±5 %).
    :param floors: figure (``name`` or ``probe:name``) -> absolute floor (a maximum for times).
    :param expected: node names that should have a file; missing ones are ``no-result``.
    :param probes: probe name -> probe (default: the installed plugins).
    :raises BadInputError: ``directory`` is not a directory; the baseline is not a profile.
    """
    from advisor.errors import BadInputError
    from advisor.fleet.nodes import summarize_dir

    directory = Path(directory)
    if not directory.is_dir():
        raise BadInputError(f"{directory}: not a directory of node profiles")
    probes = _load_probes(probes)
    warnings: list[str] = []
    base = _baseline_figures(Path(baseline), probes, warnings) if baseline is not None else {}
    tol = 0.05 if tolerance is None else tolerance
    summaries = summarize_dir(directory, probes)
    if not summaries and not expected:
        raise BadInputError(f"{directory}: no node profiles (<node>.toml) in it; is it the "
                            "directory 'advisor fleet probe --out' wrote?")
    known = {f for s in summaries for f in s.headlines}
    for name in floors or {}:
        if known and not any(figure_matches(f, name) for f in known):
            raise BadInputError(f"--floor {name}: no node has this headline figure; the nodes "
                                f"have: {', '.join(sorted(known))}")
    rows: dict[str, NodeRow] = {}
    by_class: dict[str, list] = {}
    for s in summaries:
        rows[s.name] = NodeRow(s.name, "failed", s.class_id, s.reason)
        if s.state == "read":
            by_class.setdefault(s.class_id, []).append(s)
    for name in expected or ():
        if name not in rows:
            rows[name] = NodeRow(name, "no-result", None, "no profile file in the directory")
    flags: list[Flag] = []
    for members in by_class.values():
        figures = sorted({f for s in members for f in s.headlines})
        for fig in figures:
            vals = {s.name: s.headlines[fig] for s in members if fig in s.headlines}
            flags += robust_flags(vals, fig, k, mad_floor)
            if fig in base:
                flags += baseline_flags(vals, fig, base[fig], tol)
            for name, limit in (floors or {}).items():
                if figure_matches(fig, name):
                    flags += floor_flags(vals, fig, float(limit))
    for f in flags:
        rows[f.node].flags.append(f)
    for s in summaries:
        if s.state != "read":
            continue
        row = rows[s.name]
        failed = [f"{p}: failed ({why})" if why else f"{p}: failed"
                  for p, (st, why) in s.results.items() if st == "failed"]
        if row.flags:
            row.state, row.reason = "outlier", "; ".join(f.reason for f in row.flags)
        elif failed:
            row.state, row.reason = "failed", "; ".join(failed)
        elif any(st == "ok" for st, _ in s.results.values()):
            row.state, row.reason = "ok", None
        else:
            row.state = "not-applicable"
            row.reason = "; ".join(f"{p}: {why or st}" for p, (st, why) in s.results.items()) \
                or "no probe results"
    classes = [_write_class(directory, cid, members, rows, probes, write_profiles, k, mad_floor)
               for cid, members in sorted(by_class.items())]
    return FleetReport(str(directory), k, sorted(rows.values(), key=lambda r: r.name), classes,
                       flags, warnings + _headline_warnings(summaries)
                       + _open_band_warnings(by_class, k, mad_floor), mad_floor)


def _open_band_warnings(by_class: Mapping[str, list], k: float,
                        mad_floor: float = MAD_FLOOR_REL) -> list[str]:
    """One line per class figure whose robust band reaches down to 0 or below (its median
    positive): no node can fall below it, so neither this report nor ``advisor check`` can flag
    a slow node on it (seen: three quick probes of one shared VM, low = -1.1e9 bytes/s).  Not
    for a time (``is_time_figure``): its low side is the fast one, and a slow node still lies
    above the band."""
    from advisor.fleet.outliers import is_time_figure, robust_band

    out = []
    for cid, members in sorted(by_class.items()):
        for fig in sorted({f for s in members for f in s.headlines if not is_time_figure(f)}):
            band = robust_band({s.name: s.headlines[fig] for s in members
                                if fig in s.headlines}, k, mad_floor)
            if band is not None and band[2] > 0 and band[0] <= 0:
                lo, _hi, med, mad = band
                why = (f"the MAD floor holds the MAD at {mad_floor:g} of the median (a "
                       "smaller --mad-floor or --k)" if mad <= mad_floor * med else
                       f"its nodes differ by {mad / med:.0%} of the median (more nodes, a "
                       "quieter partition or a smaller --k)")
                out.append(f"class {cid}: the band of {fig} reaches {lo:.3g} (median {med:.3g}"
                           f" - {k:g}·MAD {mad:.3g}): a slow node cannot be flagged on it; "
                           + why)
    return out


def _headline_warnings(summaries: Sequence[Any]) -> list[str]:
    """One line per probe whose ``headline`` failed on some nodes: its first error text and
    the nodes (their figures of that probe are left out of the outlier rules)."""
    by_probe: dict[str, list] = {}
    for s in summaries:
        for probe, error in s.faults.items():
            by_probe.setdefault(probe, []).append((s.name, error))
    return [f"headline figures of {probe} left out on {len(got)} node(s) "
            f"({compress_hostlist([n for n, _ in got])}): {got[0][1]}"
            for probe, got in sorted(by_probe.items())]


def _fleet_record(cid: str, members: list, names: list, k: float,
                  mad_floor: float = MAD_FLOOR_REL):
    """The class profile's ``[fleet]`` table (``advisor.models_fleet.FleetClass``): per headline
    figure the band of :func:`advisor.fleet.outliers.band_record` over all the class's nodes
    with the figure, the very values the robust rule judged (``build_report``)."""
    from advisor.fleet.outliers import band_record
    from advisor.models_fleet import FleetClass

    figures = sorted({f for s in members for f in s.headlines})
    bands = {f: band_record({s.name: s.headlines[f] for s in members if f in s.headlines}, f, k,
                            mad_floor)
             for f in figures}
    return FleetClass(class_id=cid, nodes=len(names), hostlist=compress_hostlist(names), k=k,
                      mad_floor=mad_floor, headlines=bands)


def _write_class(directory: Path, cid: str, members: list, rows: Mapping[str, NodeRow],
                 probes: Mapping[str, Any], write: bool, k: float = DEFAULT_K,
                 mad_floor: float = MAD_FLOOR_REL) -> ClassRow:
    """Pool, re-recommend and write one class profile (see ``advisor.fleet.pool``), with its
    ``[fleet]`` bands at ``k`` (:func:`_fleet_record`)."""
    import statistics

    from advisor.errors import BadInputError
    from advisor.fleet.pool import POOL_NODES, class_profile
    from advisor.profile import load_profile
    from advisor.save import save_profile

    names = [s.name for s in members]
    healthy = [s for s in members if rows[s.name].state in ("ok", "not-applicable")] or \
        [s for s in members if rows[s.name].state != "failed"] or members
    step = max(1, -(-len(healthy) // POOL_NODES))
    chosen = healthy[::step][:POOL_NODES]
    figures = sorted({f for s in members for f in s.headlines})
    medians = {f: statistics.median(s.headlines[f] for s in healthy if f in s.headlines)
               for f in figures if any(f in s.headlines for s in healthy)}
    row = ClassRow(cid, names, None, len(chosen), medians)
    try:
        profs = [load_profile(s.path) for s in chosen]
        prof = class_profile(cid, profs, probes, n_nodes=len(names),
                             hostlist=compress_hostlist(names))
        prof = prof.model_copy(update={"fleet": _fleet_record(cid, members, names, k, mad_floor)})
        path = directory / "classes" / f"{cid}.toml"
        if write:
            path.parent.mkdir(exist_ok=True)
            save_profile(prof, path)
        row.profile_path = str(path)
    except (BadInputError, OSError, ValueError) as exc:  # a file changed under us, disk full
        row.error = " ".join(str(exc).split())
    return row
