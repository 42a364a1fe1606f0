"""``advisor check``: is this node still like its class?  (node health, for LBNL NHC and Slurm's
``HealthCheckProgram``; docs/cluster.md, "Node health")."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from advisor.cli import complete
from advisor.cli.boundary import boundary, exit_with, out, printable, warn
from advisor.errors import BadInputError, ExitCode

__all__ = ["check"]


@boundary
def check(
    profile: Optional[Path] = typer.Option(None, "--profile", "-p", metavar="PATH|@NAME",
                                           help="The class profile of this node's class "
                                           "(DIR/classes/<class>.toml of 'advisor fleet "
                                           "report').", autocompletion=complete.profiles),
    json_: bool = typer.Option(False, "--json", help="Print the result as one JSON object on "
                               "stdout."),
    quick_s: Optional[float] = typer.Option(None, "--quick-s", metavar="SECONDS",
                                            help="Seconds the short measurement may take "
                                            "(default 8; it usually takes 2)."),
    facts_only: bool = typer.Option(False, "--facts-only", help="Compare the class facts only, "
                                    "without measuring (for a node that runs jobs)."),
) -> None:
    """Check this node against its class profile: the class facts must match and a short
    measurement of the headline figures must lie inside the class's band (median ± k·MAD).
    Exit 0 healthy, 1 drifted (one reason line on stderr), 2 bad input."""
    import math

    from advisor.cli import common
    from advisor.fleet.check import plain_line
    from advisor.fleet.check_run import DEFAULT_QUICK_S, run_check
    from advisor.profile import load_profile

    if profile is None:  # no default: this host's own profile is not a class profile
        raise BadInputError("--profile CLASS.toml is required (DIR/classes/<class>.toml of "
                            "'advisor fleet report')")
    q = DEFAULT_QUICK_S if quick_s is None else quick_s
    if not (math.isfinite(q) and q > 0):
        raise BadInputError(f"--quick-s {quick_s!r}: expected a number of seconds above 0")
    path = common.profile_path(profile)
    res = run_check(load_profile(path), source=str(path), quick_s=q, measure=not facts_only)
    if res.skipped:
        warn(f"check: no short measurement here for {', '.join(res.skipped)} (not checked)")
    if json_:
        out(json.dumps(res.to_json(), indent=2) + "\n")
    else:
        for f in res.figures:
            lo = "-" if f.low is None else f"{f.low:.4g}"
            hi = "-" if f.high is None else f"{f.high:.4g}"
            out(f"{f.figure} = {f.value:.4g} {f.unit}".rstrip()
                + f" [{lo}, {hi}] "
                + ("ok\n" if f.inside else "better than the class (not a drift)\n" if f.ok
                   else "OUT\n"))
        for line in res.reasons:  # one line each, as NHC's check_cmd_output reads them
            out(f"drifted: {plain_line(line)}\n")
        out(f"{res.node}: {res.state} ({res.took_s:.1f} s)\n")
    if res.reasons:
        more = f" (and {len(res.reasons) - 1} more)" if len(res.reasons) > 1 else ""
        sys.stderr.write(printable(f"advisor check: drifted: {res.reasons[0]}{more}") + "\n")
        exit_with(ExitCode.FINDINGS)
