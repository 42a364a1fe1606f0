"""``advisor fleet``: probe every node through the scheduler, and report on the nodes' profiles.

``advisor fleet report DIR`` is here; ``advisor fleet probe`` registers itself on
:data:`fleet_app` (``advisor.cli.fleet_probe_cmd``) and prints its report with
:func:`render_report`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import common
from advisor.cli.boundary import boundary, err, exit_with, out, warn
from advisor.errors import BadInputError, ExitCode

__all__ = ["fleet_app", "report", "render_report", "parse_floors"]

fleet_app = typer.Typer(help="Probe every node of a partition through the scheduler; group "
                        "nodes into machine classes, write one profile per class, name "
                        "outlier nodes.", no_args_is_help=True, add_completion=False)


def render_report(report, json_: bool) -> None:
    """Print ``report`` (an ``advisor.fleet.report.FleetReport``) on stdout: the JSON report
    with ``json_``, else the class and node tables, the counts per state, and the Slurm
    hostlist of the flagged nodes (outlier, failed, no-result) as the last line."""
    for line in report.warnings:
        warn(f"fleet: {line}")
    if json_:
        out(json.dumps(report.to_json(), indent=2) + "\n")
        return
    from advisor.cli.render import console, print_line, print_table
    from advisor.report.tables import fleet_tables

    con = console()
    for table in fleet_tables(report):
        print_table(con, table)
    counts = ", ".join(f"{n} {s}" for s, n in report.counts().items())
    print_line(con, f"nodes: {counts}")
    print_line(con, f"flagged: {report.flagged_hostlist or '(none)'}")


def parse_floors(items: Optional[List[str]]) -> dict[str, float]:
    """``--floor NAME=VALUE`` items as ``{NAME: float}``.

    :raises BadInputError: an item without ``=``, an empty name, or a value that is not a
        finite number."""
    floors = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        try:
            v = float(value)
        except ValueError:
            v = float("nan")
        if not sep or not name.strip() or not math.isfinite(v):
            raise BadInputError(f"--floor {item!r}: expected NAME=NUMBER, e.g. "
                                f"memcpy_bandwidth_largest_bytes_per_s=8e9")
        floors[name.strip()] = v
    return floors


@fleet_app.command("report")
@boundary
def report(
    directory: Path = typer.Argument(..., metavar="DIR", help="Directory of per-node profiles "
                                     "(DIR/<node>.toml)."),
    json_: bool = common.JsonOpt,
    k: Optional[float] = typer.Option(None, "--k", metavar="K", help="Outlier rule: median ± "
                                      "k·MAD per class and headline figure (default: [fleet] "
                                      "k of the configuration, 6 as Intel Cluster Checker)."),
    mad_floor: Optional[float] = typer.Option(None, "--mad-floor", metavar="FRACTION",
                                              help="Outlier rule: the least MAD, a fraction of "
                                              "the median (default: [fleet] mad_floor of the "
                                              "configuration, 0.01); raise it to one node's "
                                              "run-to-run spread on shared VMs."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", metavar="PROFILE",
                                            help="Hold every node's headline figures to this "
                                            "profile's, within --tolerance."),
    tolerance: float = typer.Option(0.05, "--tolerance", min=0.0, help="Baseline tolerance as "
                                    "a fraction (SuperBench: 0.05)."),
    floor: Optional[List[str]] = typer.Option(None, "--floor", metavar="NAME=VALUE",
                                              help="Absolute floor of a headline figure (a "
                                              "maximum for figures in s); repeatable."),
    expected: Optional[str] = typer.Option(None, "--expected", metavar="HOSTLIST",
                                           help="Nodes that should have a file, e.g. "
                                           "node[1-64]; missing ones are 'no-result'."),
) -> None:
    """Group nodes into classes, write DIR/classes/<class>.toml, flag outlier nodes (exit 1
    when a node is an outlier, failed or has no result)."""
    from advisor.fleet.report import build_report

    fleet = common.load_config().model.fleet  # the scopes' [fleet] defaults (docs/config.md)
    if k is not None and not (k > 0 and math.isfinite(k)):
        # k = 0: a band of one value, every node an outlier; k = inf: no band to write
        raise BadInputError(f"--k {k:g}: expected a finite number above 0 (the band is median "
                            "± k·MAD; 0 makes it one value and flags every node)")
    if mad_floor is not None and not 0 < mad_floor < 1:
        raise BadInputError(f"--mad-floor {mad_floor:g}: expected a fraction above 0 and below "
                            "1 (the least MAD as a share of the median)")
    k = k if k is not None else fleet.k
    mad_floor = mad_floor if mad_floor is not None else fleet.mad_floor
    expected = expected if expected is not None else fleet.expected
    names = None
    if expected:
        import hostlist

        try:
            names = hostlist.expand_hostlist(expected)
        except hostlist.BadHostlist as exc:
            raise BadInputError(f"--expected {expected!r}: not a hostlist ({exc})") from None
    rep = build_report(directory, k=k, baseline=baseline,
                       **({"mad_floor": mad_floor} if mad_floor is not None else {}),
                       tolerance=tolerance if baseline is not None else None,
                       floors=parse_floors(floor), expected=names)
    render_report(rep, json_)
    written = [c.profile_path for c in rep.classes if c.profile_path]
    if written:  # what advisor check, emit -f nhc / reframe-test on the nodes read from now on
        err(f"fleet: {len(written)} class profile(s) written with bands at k={k:g}, MAD "
            f"floor {rep.mad_floor:g} of the median: " + ", ".join(written))
    if rep.flagged:
        exit_with(ExitCode.FINDINGS)
