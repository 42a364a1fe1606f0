"""The Fleet section of ``advisor report``: per machine class and headline figure, the value of
every node with the class's outlier band, and the flagged nodes named.

It reads what ``advisor fleet report`` reads (``advisor.fleet.report.build_report`` on the
node directory, ``DIR/<node>.toml`` and their summary sidecars; no class profile is written
here) and draws the robust rule's band (``advisor.fleet.outliers.robust_band``: median ± k·MAD
per class and figure).  A headline's unit is the end of its name (``advisor.specs.headline``:
``..._bytes_per_s``, ``..._s``, ``..._bytes``); its figure is titled with the human name its
probe declares (``headline_titles``, read as data, never called), else one derived from the
name (``advisor.specs.headline.headline_title``); the name itself stays in the caption, as
``advisor fleet report --floor`` takes it.

Public API: :class:`FleetView`, :func:`fleet_view`, :func:`class_of_profile`,
:func:`probe_titles`, :data:`FLEET_PROBE` (``headline_unit`` is re-exported from
``advisor.specs.headline``, its home).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from advisor.specs.figures import FigureBand, FigureMarker, FigureSeries, FigureSpec
from advisor.specs.headline import headline_quantity, headline_title, headline_unit

__all__ = ["FLEET_PROBE", "FleetView", "fleet_view", "class_of_profile", "headline_unit",
           "fleet_footer", "probe_titles"]

#: Name under which fleet figures are filed (files ``fleet-<id>.png``).
FLEET_PROBE = "fleet"
#: Nodes up to which each node's name is a tick label; beyond, nodes are numbered.
NAMED_NODES = 24


@dataclass
class FleetView:
    """What the Fleet section shows: ``counts`` per node state, ``flagged`` as ``(node, state,
    class, why)`` rows, their Slurm ``hostlist``, and one figure per class and headline."""

    directory: str
    counts: dict[str, int]
    flagged: list[tuple[str, str, Optional[str], Optional[str]]]
    hostlist: str
    figures: list[FigureSpec] = field(default_factory=list)
    #: one line per probe whose ``headline`` failed (``FleetReport.warnings``)
    warnings: list[str] = field(default_factory=list)


def _figure_id(class_id: str, figure: str) -> str:
    import re

    return re.sub(r"[^a-z0-9-]+", "-", f"{class_id}-{figure}".lower()).strip("-") or "figure"


def probe_titles(probe: Any) -> Optional[Mapping[str, str]]:
    """A probe's ``headline_titles`` (figure name -> human title) when it declares them as a
    mapping; read without running plugin code (``inspect.getattr_static``: a property is
    not evaluated), so a node file's figure names only ever index a plain mapping."""
    import inspect

    got = inspect.getattr_static(probe, "headline_titles", None) if probe is not None else None
    return got if isinstance(got, Mapping) else None


def _spec(class_id: str, figure: str, values: dict[str, float], flagged: set[str],
          k: float, titles: Optional[Mapping[str, str]] = None,
          mad_floor: Optional[float] = None) -> FigureSpec:
    from advisor.fleet.outliers import MAD_FLOOR_REL, robust_band

    nodes = sorted(values)
    xs = {n: float(i) for i, n in enumerate(nodes)}
    ok = [n for n in nodes if n not in flagged]
    bad = [n for n in nodes if n in flagged]
    series = [FigureSeries(label="nodes", x=[xs[n] for n in ok], y=[values[n] for n in ok],
                           kind="points")]
    if bad:
        series.append(FigureSeries(label="flagged: " + ", ".join(bad[:6])
                                   + (" ..." if len(bad) > 6 else ""),
                                   x=[xs[n] for n in bad], y=[values[n] for n in bad],
                                   kind="points", role="default"))
    floor = MAD_FLOOR_REL if mad_floor is None else mad_floor
    band = robust_band(values, k, floor)
    bands, markers = [], []
    if band is not None:
        lo, hi, med, _mad = band
        bands.append(FigureBand(axis="y", low=lo, high=hi, label=f"outlier band (median ± "
                                f"{k:g}·MAD)"))
        markers.append(FigureMarker(axis="y", value=med, label="class median", role="note"))
    probe, _, name = figure.partition(":")
    title = headline_title(name, titles)
    return FigureSpec(
        id=_figure_id(class_id, figure), title=f"{title}\nper node, class {class_id}",
        caption=(f"Headline figure {name} ({title}) of probe {probe} on each of the "
                 f"{len(nodes)} nodes "
                 f"of machine class {class_id}, from their profiles; a node outside the band "
                 f"(median ± {k:g}·MAD of the class, Intel Cluster Checker's rule; the MAD "
                 f"held at least {floor:g} of the median) is flagged"
                 + ("" if band is not None else "; fewer than 3 nodes: no band")
                 + "."),
        x_label="node", x_unit="", y_label=headline_quantity(name), y_unit=headline_unit(name),
        series=[s for s in series if s.x], bands=bands, markers=markers,
        names={xs[n]: n for n in nodes} if len(nodes) <= NAMED_NODES else None,
        notes=[f"flagged: {', '.join(bad)}"] if bad else [])


def fleet_view(directory: Path, probes: Mapping[str, Any], *, k: Optional[float] = None,
               mad_floor: Optional[float] = None,
               only_class: Optional[str] = None) -> FleetView:
    """The Fleet section of the node profiles in ``directory`` (``only_class``: that class's
    figures alone).

    :param probes: probe name -> probe (their ``headline``), e.g. ``advisor.plugins.load().probes``.
    :param k: the MAD multiple (default ``advisor.fleet.outliers.DEFAULT_K``).
    :param mad_floor: the least MAD, a fraction of the median (default
        ``advisor.fleet.outliers.MAD_FLOOR_REL``).
    :raises BadInputError: ``directory`` is not a directory of node profiles.
    """
    from advisor.fleet.nodes import summarize_dir
    from advisor.fleet.outliers import DEFAULT_K, MAD_FLOOR_REL
    from advisor.fleet.report import FLAGGED_STATES, build_report

    k = DEFAULT_K if k is None else k
    mad_floor = MAD_FLOOR_REL if mad_floor is None else mad_floor
    rep = build_report(Path(directory), k=k, mad_floor=mad_floor, probes=probes,
                       write_profiles=False)
    flagged_by = {(f.node, f.figure) for f in rep.flags}
    summaries = [s for s in summarize_dir(Path(directory), probes) if s.state == "read"]
    by_class: dict[str, list] = {}
    for s in summaries:
        by_class.setdefault(s.class_id, []).append(s)
    specs = []
    for cid, members in sorted(by_class.items()):
        if only_class is not None and cid != only_class:
            continue
        for fig in sorted({f for s in members for f in s.headlines}):
            values = {s.name: s.headlines[fig] for s in members if fig in s.headlines}
            specs.append(_spec(cid, fig, values, {n for n in values if (n, fig) in flagged_by},
                               k, probe_titles(probes.get(fig.partition(":")[0])),
                               mad_floor))
    rows = [(n.name, n.state, n.class_id, n.reason) for n in rep.nodes
            if n.state in FLAGGED_STATES and (only_class is None or n.class_id == only_class)]
    return FleetView(str(directory), rep.counts(), rows, rep.flagged_hostlist, specs,
                     rep.warnings)


def class_of_profile(path: Path, profile) -> Optional[tuple[Path, str]]:
    """``(node directory, class id)`` when ``path`` is a class profile that ``advisor fleet
    report`` wrote (``DIR/classes/<class>.toml``, its provenance host ``class <class>``) and
    ``DIR`` still holds node profiles; else None."""
    host = profile.provenance.hostname or ""
    path = Path(path)
    if not host.startswith("class ") or path.parent.name != "classes":
        return None
    directory = path.parent.parent
    if not any(directory.glob("*.toml")):
        return None
    return directory, host[len("class "):]


def fleet_footer(view: FleetView) -> str:
    """The line under every fleet figure: ``fleet <directory> · <count> <state>, ...`` (the
    counts of ``view``), so a saved figure says which fleet run it shows."""
    counts = ", ".join(f"{n} {state}" for state, n in view.counts.items())
    return f"fleet {view.directory}" + (f" · {counts}" if counts else "")
