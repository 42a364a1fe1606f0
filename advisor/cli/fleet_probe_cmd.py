"""``advisor fleet probe``: one allocation, one task per node, ``DIR/<node>.toml`` each; then the
fleet report.

With Slurm it runs ``srun --nodes=N --ntasks-per-node=1 --cpus-per-task=C --exclusive ...
python -m advisor.cli.fleet_task DIR <probe options> --thin`` (``advisor.fleet.submit``); with
``--launcher "CMD"`` it runs CMD followed by the same task command (any launcher that starts one
task per node).  It waits with progress on stderr and prints the report of
``advisor fleet report`` (``advisor.cli.fleet_cmd.render_report``).

Exit status: 0 every expected node ok (or not applicable); 1 a node is an outlier, failed or has
no result (the flagged hostlist is the report's last line); 2 bad input (no --out, --nodes with
--nodelist, srun or the launcher not found); 3 the launcher failed before any node wrote a
profile (its own message is above); 130 interrupted (the launcher is stopped).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import common, complete, outpath
from advisor.cli.boundary import boundary, err, exit_with, signals_interrupt, warn
from advisor.cli.fleet_cmd import fleet_app
from advisor.errors import BadInputError, ExitCode

__all__ = ["probe"]


def _progress():
    """The progress callback: one stderr line each time the set of files or the node list
    changes (a fleet of thousands writes many lines; each says where the run stands)."""
    from advisor.fleet.submit import collect_hostlist

    def on_progress(written: list[str], expected: Optional[list[str]], elapsed_s: float) -> None:
        total = f"/{len(expected)}" if expected else ""
        line = f"fleet: {len(written)}{total} node profiles after {elapsed_s:.0f} s"
        if expected and len(written) < len(expected):
            missing = [n for n in expected if n not in set(written)]
            line += f", waiting for {collect_hostlist(missing)}"
        err(line)

    return on_progress


@fleet_app.command("probe")
@boundary
def probe(
    out_dir: Optional[Path] = typer.Option(None, "--out", metavar="DIR", help="Shared directory "
                                           "every node writes DIR/<node>.toml into (required; "
                                           "created, its parent must exist)."),
    mkdir: bool = outpath.MkdirOpt,
    partition: Optional[str] = typer.Option(None, "--partition", metavar="P",
                                            help="Slurm partition."),
    nodes: Optional[int] = typer.Option(None, "--nodes", metavar="N", min=1,
                                        help="Number of nodes (one task on each)."),
    nodelist: Optional[str] = typer.Option(None, "--nodelist", metavar="LIST",
                                           help="Slurm hostlist of the nodes, e.g. node[01-64] "
                                           "(re-run the missing ones with this)."),
    time_limit: Optional[int] = typer.Option(None, "--time-limit", metavar="MIN", min=1,
                                             help="Time limit in minutes (Slurm --time; with "
                                             "--launcher, the wait's bound)."),
    account: Optional[str] = typer.Option(None, "--account", metavar="A",
                                          help="Slurm account."),
    quick: bool = typer.Option(False, "--quick", help="Every node: smaller sweeps."),
    plugin: Optional[List[str]] = typer.Option(None, "--plugin", metavar="NAME",
                                               help="Every node runs only this probe or "
                                               "plugin (repeatable).",
                                               autocompletion=complete.plugins),
    time_budget: Optional[float] = typer.Option(None, "--time-budget", metavar="SECONDS",
                                                min=1.0, help="Every node's probe budget."),
    option: Optional[List[str]] = typer.Option(None, "--option", "-O", metavar="KEY=VALUE",
                                               help="Probe option for every node "
                                               "(repeatable)."),
    full_samples: bool = typer.Option(False, "--full-samples", help="Keep every sample "
                                      "(no --thin: about 0.5 MB per node instead of <= 64 KB)."),
    launcher: Optional[str] = typer.Option(None, "--launcher", metavar="CMD", help="Without "
                                           "Slurm: a command that starts one task per node "
                                           "(e.g. 'pdsh -w node[1-4]'); the task follows it."),
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH", help="Python on the "
                                         "nodes with hpc-advisor installed (default: this "
                                         "one, for a shared file system)."),
    json_: bool = common.JsonOpt,
) -> None:
    """Probe every node (one allocation, one task per node, DIR/<node>.toml each) and print
    the fleet report (exit 1 when a node is an outlier, failed or has no result; 3 when the
    launcher failed before any node wrote a profile).  Guide: docs/cluster.md."""
    from advisor.fleet import submit

    if out_dir is None:
        raise BadInputError("--out DIR is required (a directory every node can write)")
    if nodes is not None and nodelist is not None:
        raise BadInputError("--nodes and --nodelist exclude each other (a hostlist names its "
                            "nodes)")
    options = common.parse_options(option)  # refused here rather than on every node
    if plugin or options:
        # an unknown name or option key is refused before anything is started
        common.check_option_keys(options, common.load_registry(plugin).probes)
    expected = submit.expand_hostlist(nodelist) if nodelist is not None else None
    req = submit.Request(nodes=nodes, nodelist=nodelist, partition=partition,
                         time_limit_min=time_limit, account=account)
    out_dir = out_dir.resolve()
    outpath.check_output(out_dir, mkdir=mkdir, flag="--out")  # DIR is created, not its parents
    try:
        out_dir.mkdir(exist_ok=True)
    except OSError as exc:
        raise BadInputError(f"--out {out_dir}: cannot create: {exc.strerror or exc}") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise BadInputError(f"--out {out_dir}: not writable")
    env = dict(os.environ)
    args = submit.probe_args(quick=quick, plugins=plugin or (), time_budget_s=time_budget,
                             options=option or (), thin=not full_samples)
    task = submit.task_argv(python or sys.executable, out_dir, args)
    job = None
    deadline = None
    if launcher is not None:
        argv = submit.launcher_argv(common.launcher_argv(launcher), task)
        deadline = time_limit * 60.0 if time_limit is not None else None
        if expected is None:
            warn("--launcher without --nodelist: nodes that write nothing cannot be named "
                 "'no-result'")
    else:
        if shutil.which("srun", path=env.get("PATH")) is None:
            raise BadInputError("srun: command not found on PATH (run on a Slurm login node, "
                                "or pass --launcher CMD)")
        if nodes is None and nodelist is None:
            # inside sbatch/salloc: every node of the allocation
            expected = submit.allocation_nodes(env)
            if expected is None:
                raise BadInputError("--nodes N or --nodelist LIST is required outside a Slurm "
                                    "allocation")
            req = dataclasses.replace(req, nodelist=env["SLURM_JOB_NODELIST"])
        job = submit.job_name()
        argv = submit.srun_argv(req, task, cpus=submit.node_cpus(req, env), job_name=job)
    err("fleet: " + " ".join(argv))
    with signals_interrupt():  # SIGTERM/SIGHUP too: srun then cancels the job's step
        outcome = submit.run(argv, out_dir, env=env, expected=expected, job=job,
                             deadline_s=deadline, on_progress=_progress())
    rc = outcome.returncode
    status = (f"killed by {signal.Signals(-rc).name}" if rc is not None and rc < 0
              and -rc in signal.Signals._value2member_map_ else f"exit status {rc}")
    err(f"fleet: {len(outcome.written)} node profiles written to {out_dir} by this run after "
        f"{outcome.wall_s:.0f} s (launcher {status})")
    if outcome.timed_out:
        warn(f"fleet: the time limit ({time_limit} min) ended the wait; nodes without a file "
             "are 'no-result'")
    elif not outcome.written and rc:
        err(f"error: {argv[0]} ended ({status}) before any node wrote a profile in this run "
            "(its message, if any, is above); the report would only show older files")
        exit_with(ExitCode.PARTIAL)
    if outcome.expected is None and job is not None:
        warn("fleet: squeue did not name the allocated nodes; nodes that wrote nothing are "
             "not listed as 'no-result'")
    from advisor.cli.fleet_cmd import render_report
    from advisor.fleet.report import build_report

    # the report's rules as 'advisor fleet report' reads them: [fleet] k and mad_floor
    fleet = common.load_config().model.fleet
    rule = {"k": fleet.k, "mad_floor": fleet.mad_floor}
    rep = build_report(out_dir, expected=outcome.expected,
                       **{name: v for name, v in rule.items() if v is not None})
    render_report(rep, json_)
    if rep.flagged:
        exit_with(ExitCode.FINDINGS)
