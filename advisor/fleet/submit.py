"""Submitting a fleet probe: one task per node, each writing ``DIR/<node>.toml``.

Pure command building (``probe_args``, ``task_argv``, ``srun_argv``, ``launcher_argv``) plus
the runner (``run``) that starts the launcher, waits while the per-node files appear and reports
progress through a callback.  Only the CLI prints.

One allocation for the whole fleet, one task per node, a shared directory of per-node files
aggregated offline: the node-validation practice of Intel Cluster Checker and SuperBench, and the
way around Slurm's ``MaxArraySize`` (1001 by default, ``slurm.conf(5)``) that one job per node
hits.  The Slurm side is the real CLI: ``srun`` to run, ``sinfo`` for the CPUs of a node,
``squeue`` for the nodes the allocation got.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from advisor.errors import BadInputError

__all__ = ["Request", "Outcome", "probe_args", "task_argv", "srun_argv", "launcher_argv",
           "expand_hostlist", "collect_hostlist", "node_cpus", "allocated_nodes",
           "allocation_nodes", "profiles_written", "profile_stamps", "job_name", "run", "MIN_CPUS", "POLL_S",
           "HEARTBEAT_S", "KILL_WAIT_S"]

#: The fewest CPUs a node's task asks for: mpich-cma's probe runs a 2-rank MPI job, and two
#: ranks on one CPU measure the scheduler, not the copy (issue 15).
MIN_CPUS = 2
#: Seconds between two looks at DIR while waiting: a directory listing and, under Slurm, one
#: ``squeue`` call until the node list is known; slurmctld's own poll interval for
#: ``squeue --iterate`` has no default, so this is chosen to keep one controller RPC per second
#: at most.
POLL_S = 1.0
#: Seconds without a change after which the progress callback is called anyway: one line a
#: minute shows a long wait (a queued allocation, a full 300 s probe) is alive without flooding.
HEARTBEAT_S = 60.0
#: Seconds given to the launcher between SIGTERM and SIGKILL when the wait ends (Slurm's
#: ``KillWait`` default is 30 s, ``slurm.conf(5)``).
KILL_WAIT_S = 30.0

#: What a node name may look like to become a file name: a host name (RFC 1123 letters, digits,
#: hyphen; dots and underscores as sites use them), never a path.
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Request:
    """What ``advisor fleet probe`` asks of the scheduler.

    ``nodes``: a node count, or ``nodelist``: a Slurm hostlist (``node[01-64]``), not both;
    ``time_limit_min``: Slurm ``--time`` in minutes (None: the partition's default);
    ``cpus_per_task``: CPUs each node's task gets (None: all of a node's, from ``sinfo``).
    """

    nodes: Optional[int] = None
    nodelist: Optional[str] = None
    partition: Optional[str] = None
    time_limit_min: Optional[int] = None
    account: Optional[str] = None
    cpus_per_task: Optional[int] = None


@dataclass
class Outcome:
    """What the run left: the launcher's exit status (None: it was stopped by us), seconds
    waited, whether the time limit ended it, the node names expected (None: unknown) and the
    node names whose file this run wrote (files already in the directory do not count)."""

    returncode: Optional[int]
    wall_s: float
    timed_out: bool
    expected: Optional[list[str]]
    written: list[str] = field(default_factory=list)


def expand_hostlist(text: str) -> list[str]:
    """``node[1-3],gpu01`` -> ``["node1", "node2", "node3", "gpu01"]`` (python-hostlist).

    :raises BadInputError: not a Slurm hostlist.
    """
    import hostlist

    try:
        names = hostlist.expand_hostlist(text)
    except hostlist.BadHostlist as exc:
        raise BadInputError(f"--nodelist {text!r}: not a Slurm hostlist ({exc})") from None
    if not names:
        raise BadInputError(f"--nodelist {text!r}: no node named")
    return names


def collect_hostlist(names: Sequence[str]) -> str:
    """The compressed Slurm hostlist of ``names`` (python-hostlist)."""
    import hostlist

    return hostlist.collect_hostlist(list(names))


def probe_args(*, quick: bool = False, plugins: Sequence[str] = (),
               time_budget_s: Optional[float] = None, options: Sequence[str] = (),
               thin: bool = True) -> list[str]:
    """The ``advisor probe`` options every node gets (``-o`` is added by the task).

    ``options``: ``KEY=VALUE`` items as given to ``--option``; ``thin``: ``--thin`` (evidence
    samples thinned to fit 64 KB per profile) unless the full samples are asked for.
    """
    args: list[str] = []
    if quick:
        args.append("--quick")
    for name in plugins:
        args += ["--plugin", name]
    if time_budget_s is not None:
        args += ["--time-budget", f"{time_budget_s:g}"]
    for item in options:
        args += ["--option", item]
    if thin:
        args.append("--thin")
    return args


def task_argv(python: str, out_dir: Path, args: Sequence[str]) -> list[str]:
    """The command each node runs: ``python -m advisor.cli.fleet_task DIR ARGS...``, which writes
    ``DIR/<node>.toml`` (see ``advisor.cli.fleet_task``)."""
    return [python, "-m", "advisor.cli.fleet_task", str(out_dir), *args]


def srun_argv(req: Request, task: Sequence[str], *, cpus: int, job_name: str) -> list[str]:
    """``srun`` with one task per node on whole nodes, then ``task``.

    ``--kill-on-bad-exit=0`` and ``--wait=0`` are explicit so a site's ``KillOnBadExit`` /
    ``WaitTime`` cannot end the other nodes' probes when one task dies: that node is then
    "no result", the others complete.
    """
    argv = ["srun"]
    if req.nodelist is not None:
        argv += [f"--nodelist={req.nodelist}", f"--nodes={len(expand_hostlist(req.nodelist))}"]
    elif req.nodes is not None:
        argv.append(f"--nodes={req.nodes}")
    argv += ["--ntasks-per-node=1", f"--cpus-per-task={cpus}", "--exclusive",
             "--kill-on-bad-exit=0", "--wait=0", f"--job-name={job_name}"]
    if req.partition:
        argv.append(f"--partition={req.partition}")
    if req.time_limit_min is not None:
        argv.append(f"--time={req.time_limit_min}")
    if req.account:
        argv.append(f"--account={req.account}")
    return argv + list(task)


def launcher_argv(launcher: Sequence[str], task: Sequence[str]) -> list[str]:
    """Any launcher that starts one task per node (``pdsh -w node[1-4]``, ``mpiexec -ppn 1``,
    ``clush -w ...``), then ``task``."""
    return list(launcher) + list(task)


def _query(argv: list[str], env: Mapping[str, str]) -> Optional[str]:
    try:
        done = subprocess.run(argv, env=dict(env), capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def node_cpus(req: Request, env: Mapping[str, str]) -> int:
    """CPUs each node's task asks for: the fewest CPUs of a node among those the request can
    get (``sinfo -h -o %c``, per partition / node list), at least ``MIN_CPUS``; ``MIN_CPUS``
    when sinfo does not answer.  A request larger than the smallest node would not start."""
    if req.cpus_per_task is not None:
        return max(req.cpus_per_task, 1)
    argv = ["sinfo", "-h", "-o", "%c"]
    if req.partition:
        argv += ["-p", req.partition]
    if req.nodelist:
        argv += ["-n", req.nodelist]
    text = _query(argv, env) or ""
    counts = [int(t.rstrip("+")) for t in text.split() if t.rstrip("+").isdigit()]
    return max(min(counts), MIN_CPUS) if counts else MIN_CPUS


def allocated_nodes(job_name: str, env: Mapping[str, str]) -> Optional[list[str]]:
    """The nodes Slurm gave the job named ``job_name`` (``squeue --states=all``: a finished job
    stays listed for ``MinJobAge``, 300 s by default); None while it has none or squeue does not
    answer."""
    text = _query(["squeue", "-h", "--states=all", f"--name={job_name}", "-o", "%N"], env)
    if not text:
        return None
    lists = [line.strip() for line in text.splitlines() if line.strip()]
    if not lists or lists[0] in ("", "(null)"):
        return None
    try:
        return expand_hostlist(lists[0])
    except BadInputError:
        return None


def allocation_nodes(env: Mapping[str, str]) -> Optional[list[str]]:
    """The nodes of the allocation this command runs in (``SLURM_JOB_NODELIST``, set by
    ``sbatch``/``salloc``), None outside one."""
    text = env.get("SLURM_JOB_NODELIST")
    if not text:
        return None
    try:
        return expand_hostlist(text)
    except BadInputError:
        return None


def profile_stamps(out_dir: Path) -> dict[str, tuple[int, int]]:
    """``{node: (inode, mtime_ns)}`` of each ``DIR/<node>.toml`` (the temporaries of an
    unfinished atomic write, ``.<name>.*.tmp``, do not count)."""
    out: dict[str, tuple[int, int]] = {}
    try:
        for p in out_dir.iterdir():
            name = p.name[:-5]
            if p.name.endswith(".toml") and NODE_NAME.fullmatch(name):
                try:
                    st = p.stat()
                except OSError:
                    continue
                out[name] = (st.st_ino, st.st_mtime_ns)
    except OSError:
        return {}
    return out


def profiles_written(out_dir: Path, before: Optional[Mapping[str, tuple[int, int]]] = None
                     ) -> list[str]:
    """Node names whose ``DIR/<node>.toml`` was written since ``before`` (a
    ``profile_stamps`` snapshot; None: every file counts).  An atomic write renames a new file
    over the old one, so a new inode or mtime is a new profile; comparing stamps, not clocks,
    holds on a shared file system whose nodes' clocks differ.  A re-run into a directory with
    older profiles therefore counts only what this run wrote."""
    now = profile_stamps(out_dir)
    return sorted(n for n, st in now.items() if before is None or before.get(n) != st)


def job_name() -> str:
    """A job name unique to this submission, so ``squeue --name`` finds this job only."""
    return f"advisor-fleet-{secrets.token_hex(4)}"


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the launcher's process group (srun cancels its step on it), SIGKILL after
    ``KILL_WAIT_S``."""
    for sig, wait_s in ((signal.SIGTERM, KILL_WAIT_S), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run(argv: Sequence[str], out_dir: Path, *, env: Mapping[str, str],
        expected: Optional[list[str]] = None, job: Optional[str] = None,
        deadline_s: Optional[float] = None,
        on_progress: Optional[Callable[[list[str], Optional[list[str]], float], None]] = None,
        ) -> Outcome:
    """Start ``argv`` (the launcher and the task), wait for it to end, and return what it left.

    ``expected``: node names known beforehand (``--nodelist``, the allocation's nodes); ``job``:
    the Slurm job name to ask ``squeue`` for the allocated nodes while they are unknown;
    ``deadline_s``: seconds after which the launcher is stopped (SIGTERM, then SIGKILL);
    ``on_progress(written, expected, elapsed_s)`` is called when the set of written files or the
    expected list changes, and every ``HEARTBEAT_S`` otherwise.  An exception while waiting
    (KeyboardInterrupt: SIGINT, or SIGTERM through the CLI's ``signals_interrupt``) stops the
    launcher before it propagates.

    :raises BadInputError: the launcher's program is not found.
    """
    if shutil.which(argv[0], path=env.get("PATH")) is None:
        raise BadInputError(f"{argv[0]}: command not found on PATH")
    start = time.monotonic()
    before = profile_stamps(out_dir)
    # the launcher's stdout goes to stderr: stdout carries only the report (pdsh prefixes and
    # prints what tasks write; the tasks themselves write to DIR/logs)
    proc = subprocess.Popen(list(argv), env=dict(env), stdin=subprocess.DEVNULL,
                            stdout=2, start_new_session=True)
    seen: tuple = ()
    told = 0.0
    timed_out = False
    try:
        while True:
            code = proc.poll()
            if expected is None and job is not None:
                expected = allocated_nodes(job, env)
            written = profiles_written(out_dir, before)
            now = time.monotonic() - start
            state = (tuple(written), tuple(expected or ()))
            if on_progress is not None and (state != seen or now - told >= HEARTBEAT_S):
                on_progress(written, expected, now)
                told = now
            seen = state
            if code is not None:
                break
            if deadline_s is not None and now > deadline_s:
                timed_out = True
                _stop(proc)
                break
            time.sleep(POLL_S)
    except BaseException:
        _stop(proc)
        raise
    if expected is None and job is not None:
        expected = allocated_nodes(job, env)
    return Outcome(returncode=proc.returncode, wall_s=time.monotonic() - start,
                   timed_out=timed_out, expected=expected,
                   written=profiles_written(out_dir, before))
