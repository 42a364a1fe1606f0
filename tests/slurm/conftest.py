"""A real Slurm 22.05 on this one machine: munged, one slurmctld and six slurmd.

The session fixture ``slurm_cluster`` starts, under a temporary directory of its own:

- ``munged`` with its own key, socket, pid, seed and log files (the Debian ``munge`` package);
- ``slurmctld -D`` and one ``slurmd -D -N nodeK`` per name in :data:`NODES` (node1..node6),
  each slurmd on its own ``Port=`` with ``NodeHostname=localhost`` and inside its own UTS
  namespace (``unshare -u sh -c 'hostname nodeK; exec slurmd ...'``), so ``srun -N6 hostname``
  answers node1 .. node6 (the Debian ``slurmctld``, ``slurmd`` and ``slurm-client``
  packages).

Each node is declared with this machine's CPU layout as ``slurmd -C`` reports it, under
``select/cons_tres`` with ``CR_Core`` (so ``--cpus-per-task`` allocates cores) and
``task/affinity`` (so a task's CPU set is the cores it was given, as on a production cluster).
Every daemon is a child of the test process, started in the foreground, and stopped by its PID.

It skips, with the reason, where it cannot run: not root (slurmd must set the hostname of its
namespace and run jobs as any user), a daemon or client binary missing (``make system-deps``
installs them), or no ``unshare -u``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

# six nodes: the fleet test (test_fleet_probe.py) kills one node's task, slows another, and
# needs the four healthy ones for the median ± k·MAD outlier rule (advisor/fleet/outliers.py) to
# learn the class's spread: with three values the MAD is the smaller gap between neighbours, so
# two healthy nodes 30 % apart (seen in CI, a core kept busy) hid a node 5x slower
NODES = ["node1", "node2", "node3", "node4", "node5", "node6"]
PARTITION = "advtest"
# Seconds to wait for the nodes to register idle: slurmd registers within a second or two
# here; 60 s leaves room on a loaded 2-core machine shared by several test runs.
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
BINARIES = ("munged", "slurmctld", "slurmd", "srun", "sinfo", "squeue", "scancel", "unshare")


@dataclass
class SlurmCluster:
    """The running test cluster.

    ``env`` is ``os.environ`` plus ``SLURM_CONF`` (pass it to ``srun``/``sbatch``/``sinfo``);
    ``conf_dir`` holds ``slurm.conf`` and the logs (``log/``); ``nodes`` the node names.
    """

    nodes: list[str]
    env: dict[str, str]
    partition: str
    conf_dir: Path
    cpus: int
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def run(self, *args: str, timeout: float = 120.0, **kw) -> subprocess.CompletedProcess:
        """Run a Slurm client command (``srun``, ``sinfo`` ...) against this cluster."""
        return subprocess.run(list(args), env=kw.pop("env", self.env), capture_output=True,
                              text=True, timeout=timeout, **kw)

    def logs(self) -> str:
        """The tail of every daemon log, for a failure message."""
        out = []
        for p in sorted((self.conf_dir / "log").glob("*.log")):
            out.append(f"== {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(out)


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _node_layout() -> str:
    """This machine's ``CPUs=... CoresPerSocket=...`` as ``slurmd -C`` prints it."""
    line = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30).stdout
    keep = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
    words = line.split()
    return " ".join(w for w in words if w.split("=")[0] in keep)


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "the test Slurm needs root (slurmd sets its namespace's hostname, runs jobs as any user)"
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        return f"Slurm/munge binaries missing: {' '.join(missing)} (make system-deps installs them)"
    if subprocess.run(["unshare", "-u", "true"], capture_output=True).returncode != 0:
        return "unshare -u (a UTS namespace per slurmd) is not permitted here"
    return None


def _conf(d: Path, ctld_port: int, node_ports: list[int], layout: str, sock: Path) -> str:
    nodes = "\n".join(
        f"NodeName={n} NodeHostname=localhost Port={p} {layout} State=UNKNOWN"
        for n, p in zip(NODES, node_ports))
    return f"""\
ClusterName=advtest
MailProg=/bin/true
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=2
MinJobAge=10
PlugStackConfig={d}/plugstack.conf
{nodes}
PartitionName={PARTITION} Nodes={",".join(NODES)} Default=YES MaxTime=INFINITE State=UP
"""


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT_S)


@pytest.fixture(scope="session")
def slurm_cluster():
    """Start munged + slurmctld + one slurmd per node (see the module docstring); yield a
    SlurmCluster."""
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    with running_cluster() as cluster:
        yield cluster


@contextlib.contextmanager
def running_cluster() -> Iterator[SlurmCluster]:
    """The cluster as a context manager (what the fixture uses; also for a shell session:
    ``python -c 'import conftest, time; ...'`` from tests/slurm).  Raises RuntimeError with the
    daemons' log tails when it does not come up."""
    # not under pytest's basetemp: munged wants every directory above its socket searchable by
    # all (pytest's are 0700); removed at teardown
    d = Path(tempfile.mkdtemp(prefix="advisor-slurm-"))
    os.chmod(d, 0o755)
    for sub in ("state", "spool", "run", "log", "munge", "munge/key"):
        (d / sub).mkdir()
    os.chmod(d / "munge" / "key", 0o700)
    key = d / "munge" / "key" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    sock = d / "munge" / "munge.socket"
    (d / "plugstack.conf").write_text("")
    ports = _free_ports(1 + len(NODES))
    layout = _node_layout()
    conf = d / "slurm.conf"
    conf.write_text(_conf(d, ports[0], ports[1:], layout, sock))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    for var in [k for k in env if k.startswith(("SLURM_", "SBATCH_", "SALLOC_"))]:
        if var != "SLURM_CONF":
            env.pop(var)
    cluster = SlurmCluster(nodes=list(NODES), env=env, partition=PARTITION, conf_dir=d,
                           cpus=int(layout.split("CPUs=")[1].split()[0]))
    procs = cluster.procs
    log = lambda name: open(d / "log" / f"{name}.out", "wb")  # noqa: E731
    try:
        procs["munged"] = subprocess.Popen(
            ["munged", "-F", f"--socket={sock}", f"--key-file={key}",
             f"--pid-file={d}/munge/munged.pid", f"--seed-file={d}/munge/munged.seed",
             f"--log-file={d}/log/munged.log"],
            stdout=log("munged"), stderr=subprocess.STDOUT)
        _wait(lambda: sock.exists(), procs, "munged socket", cluster)
        procs["slurmctld"] = subprocess.Popen(["slurmctld", "-D", "-i", "-f", str(conf)], env=env,
                                              stdout=log("slurmctld"), stderr=subprocess.STDOUT)
        for n in NODES:
            (d / "spool" / n).mkdir()
            procs[n] = subprocess.Popen(
                ["unshare", "-u", "sh", "-c", f'hostname {n} && exec slurmd -D -N {n} -f "$0"',
                 str(conf)], env=env, stdout=log(f"slurmd-{n}"), stderr=subprocess.STDOUT)
        _wait(lambda: _all_idle(cluster), procs, f"{len(NODES)} idle nodes in sinfo", cluster)
        yield cluster
    finally:
        _teardown(cluster)
        shutil.rmtree(d, ignore_errors=True)


def _all_idle(cluster: SlurmCluster) -> bool:
    r = cluster.run("sinfo", "-h", "-N", "-o", "%N %t", timeout=20)
    states = dict(line.split() for line in r.stdout.splitlines() if line.strip())
    return r.returncode == 0 and all(states.get(n) == "idle" for n in cluster.nodes)


def _wait(ready, procs: dict, what: str, cluster: SlurmCluster) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        dead = [name for name, p in procs.items() if p.poll() is not None]
        if dead:
            raise RuntimeError(f"test Slurm: {', '.join(dead)} exited while waiting for {what}\n"
                               + cluster.logs())
        if ready():
            return
        time.sleep(0.5)
    raise RuntimeError(f"test Slurm: no {what} after {START_TIMEOUT_S:.0f} s\n" + cluster.logs())


def _teardown(cluster: SlurmCluster) -> None:
    procs = cluster.procs
    if "slurmctld" in procs and procs["slurmctld"].poll() is None:
        # end running jobs first, so no slurmstepd outlives its slurmd
        cluster.run("scancel", "--full", "-u", "root", timeout=20)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            r = cluster.run("squeue", "-h", "-o", "%i", timeout=20)
            if r.returncode != 0 or not r.stdout.strip():
                break
            time.sleep(0.5)
    for name in [*NODES, "slurmctld", "munged"]:
        if name in procs:
            _stop(procs[name])
