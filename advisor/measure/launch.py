"""Launch measurement workers in fresh processes: plain Python or MPI jobs.

Both ``run_python`` and ``run_mpi`` start the child in a new session (``start_new_session=True``,
so the child leads its own process group), apply an environment overlay, wait up to
``timeout_s`` seconds, and on timeout send SIGTERM then SIGKILL to the whole process group and
finally kill, via psutil, every descendant recorded while the job ran that is still alive (MPI
launchers may put ranks or proxies into other groups).  No process outlives the call.

The worker reports by printing one JSON object on stdout (``advisor.measure.worker.report``
does this on rank 0 only).  The last stdout line that parses as a JSON object is the result.

MPI launcher resolution (``resolve_launcher``), first match wins:

1. the ``launcher`` argument (argv list or a shell-like string, e.g. ``"srun -n 2"``);
2. ``ADVISOR_LAUNCHER`` in the environment (same syntax);
3. ``mpiexec`` next to the running interpreter (the ``mpich`` wheel installs it into the
   virtual environment's ``bin``), then ``mpiexec`` on ``PATH``, as ``mpiexec -n <nprocs>``.
   Inside a scheduler job (``advisor.facts.scheduler``: Slurm, Flux, PBS) this default gets the
   options that start the ranks locally (``local_launch_args``): Hydra otherwise starts its
   proxies with a nested ``srun``, which waits for ever inside a step (issue 15).  An explicit
   launcher (1, 2) is never changed.

In a launcher string ``{nprocs}`` is replaced by the rank count.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from advisor.errors import ProbeFailed
from advisor.libraries import mpich, openmpi

#: Seconds between SIGTERM and SIGKILL when a job is stopped.  MPICH's hydra forwards SIGTERM
#: to its proxies and ranks; a well-behaved job ends well within this grace period.
TERM_GRACE_S = 2.0
#: Characters of the ranks' stderr quoted in a ``LaunchError`` message (display limit only).
STDERR_TAIL_CHARS = 4000

EnvOverlay = Optional[Mapping[str, Optional[str]]]


class LaunchError(ProbeFailed):
    """A worker process (MPI job or Python) failed, timed out, or printed no JSON result.

    Attributes:
        argv: the command run.
        returncode: exit status (None when it was killed at the timeout).
        stdout, stderr: what the job printed (all ranks).
        timed_out: True when the timeout stopped it.
    """

    def __init__(self, message: str, *, argv: Sequence[str], returncode: Optional[int],
                 stdout: str = "", stderr: str = "", timed_out: bool = False) -> None:
        tail = stderr[-STDERR_TAIL_CHARS:].strip()
        if tail:
            message = f"{message}\n--- stderr of the job (last {len(tail)} chars) ---\n{tail}"
        super().__init__(message)
        self.argv = list(argv)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out


def child_env(env: EnvOverlay = None) -> dict[str, str]:
    """``os.environ`` with the overlay applied (a value of None removes the variable)."""
    out = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[str(k)] = str(v)
    return out


def _descendants(pid: int) -> list[Any]:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _kill_tree(proc: subprocess.Popen, known: dict[int, Any]) -> None:
    """SIGTERM the process group, wait ``TERM_GRACE_S``, SIGKILL it, then kill survivors."""
    import psutil

    for p in _descendants(proc.pid):
        known.setdefault(p.pid, p)
    pgid = proc.pid  # start_new_session: the child leads its own group
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        for p in list(known.values()):
            try:
                p.send_signal(sig)
            except psutil.Error:
                pass
        if sig == signal.SIGTERM:
            try:
                proc.wait(timeout=TERM_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            alive = [p for p in known.values() if p.is_running()]
            if proc.poll() is not None and not alive:
                break
    gone, alive = psutil.wait_procs(list(known.values()), timeout=TERM_GRACE_S)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass


def run_command(argv: Sequence[str], *, env: EnvOverlay = None, timeout_s: float,
                cwd: Optional[Union[str, Path]] = None) -> subprocess.CompletedProcess:
    """Run ``argv`` in a new session with an env overlay; kill the whole tree at the timeout.

    Returns:
        ``CompletedProcess`` with text stdout/stderr (any exit status).

    Raises:
        LaunchError: the timeout (``timed_out=True``) or the program could not be started.
        ValueError: ``timeout_s`` not positive.
    """
    if not timeout_s or timeout_s <= 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    argv = [str(a) for a in argv]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=child_env(env), cwd=cwd,
                                start_new_session=True, text=True, errors="replace")
    except OSError as exc:
        raise LaunchError(f"cannot start {argv[0]}: {exc}", argv=argv, returncode=None) from exc
    known: dict[int, Any] = {}
    end = time.monotonic() + timeout_s
    # poll in slices so descendants are recorded while they exist (ranks that leave their
    # process group are still found and killed at the timeout)
    out_chunks: tuple[str, str] = ("", "")
    while True:
        slice_s = min(0.2, max(0.0, end - time.monotonic()))
        try:
            out, err = proc.communicate(timeout=slice_s if slice_s > 0 else 0.001)
            out_chunks = (out or "", err or "")
            break
        except subprocess.TimeoutExpired:
            for p in _descendants(proc.pid):
                known.setdefault(p.pid, p)
            if time.monotonic() >= end:
                _kill_tree(proc, known)
                try:
                    out, err = proc.communicate(timeout=TERM_GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    out, err = proc.communicate()
                raise LaunchError(
                    f"timed out after {timeout_s:g} s and was killed (process group and "
                    f"{len(known)} descendants): {shlex.join(argv)}",
                    argv=argv, returncode=None, stdout=out or "", stderr=err or "",
                    timed_out=True) from None
    # the job ended: reap anything it left behind
    leftovers = [p for p in known.values() if p.is_running()]
    if leftovers:
        _kill_tree(proc, {p.pid: p for p in leftovers})
    return subprocess.CompletedProcess(argv, proc.returncode, out_chunks[0], out_chunks[1])


def parse_json_result(stdout: str) -> Optional[dict]:
    """The last stdout line that parses as a JSON object, or None."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            val = json.loads(line)
        except ValueError:
            continue
        if isinstance(val, dict):
            return val
    return None


def _run_json(argv: list[str], *, env: EnvOverlay, timeout_s: float,
              cwd: Optional[Union[str, Path]]) -> dict:
    cp = run_command(argv, env=env, timeout_s=timeout_s, cwd=cwd)
    if cp.returncode != 0:
        raise LaunchError(f"exited with status {cp.returncode}: {shlex.join(argv)}", argv=argv,
                          returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)
    res = parse_json_result(cp.stdout)
    if res is None:
        raise LaunchError(f"printed no JSON object on stdout: {shlex.join(argv)}", argv=argv,
                          returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)
    return res


def python_argv(argv_or_module: Union[str, Sequence[str]], args: Sequence[str] = ()) -> list[str]:
    """``[sys.executable, "-m", module, *args]`` for a module name, or
    ``[sys.executable, *argv, *args]`` for an argv list (e.g. ``["-c", code]``)."""
    if isinstance(argv_or_module, str):
        return [sys.executable, "-m", argv_or_module, *map(str, args)]
    return [sys.executable, *map(str, argv_or_module), *map(str, args)]


def run_python(argv_or_module: Union[str, Sequence[str]], args: Sequence[str] = (), *,
               env: EnvOverlay = None, timeout_s: float,
               cwd: Optional[Union[str, Path]] = None) -> dict:
    """Run one fresh Python process (this interpreter) and return its JSON result.

    Args:
        argv_or_module: a module name (run with ``-m``) or an argv list after the interpreter.
        args: extra arguments.
        env: overlay on ``os.environ`` (None values remove a variable), e.g.
            ``{"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}``.
        timeout_s: seconds before the process group is killed.
        cwd: working directory.

    Returns:
        the JSON object the process printed last on stdout.

    Raises:
        LaunchError: non-zero exit, timeout, or no JSON object (message has the stderr).
    """
    return _run_json(python_argv(argv_or_module, args), env=env, timeout_s=timeout_s, cwd=cwd)


def _split(launcher: Union[str, Sequence[str]], nprocs: int) -> list[str]:
    parts = shlex.split(launcher) if isinstance(launcher, str) else [str(a) for a in launcher]
    return [p.replace("{nprocs}", str(nprocs)) for p in parts]


def find_mpiexec() -> Optional[str]:
    """``mpiexec`` next to ``sys.executable`` (venv with the mpich wheel), else on PATH."""
    cand = Path(sys.executable).parent / "mpiexec"
    if cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    return shutil.which("mpiexec")


def launcher_family(exe: str) -> Optional[str]:
    """The launcher family of ``exe`` as the MPI library records name it: "hydra" (MPICH, Intel
    MPI: ``advisor.libraries.mpich``), "orte" (Open MPI <= 4) or "prrte" (Open MPI >= 5:
    ``advisor.libraries.openmpi``), or None.  A ``mpiexec.hydra`` beside ``exe`` settles it
    without running anything; else ``exe --version`` is run once (cached) and each record reads
    its text."""
    return mpich.launcher_family_of_path(exe) or _family_from_version(exe)


@lru_cache(maxsize=8)
def _family_from_version(exe: str) -> Optional[str]:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout + out.stderr
    return mpich.launcher_family(text) or openmpi.launcher_family(text)


def local_launch_args(exe: str, env: Optional[Mapping[str, str]] = None) -> list[str]:
    """Options that make the default launcher ``exe`` start its ranks on this node by itself
    (no nested scheduler launch), or ``[]`` outside a scheduler job or for an unknown launcher.
    Each MPI library record holds its launcher families' options and why
    (``advisor.libraries.mpich.LOCAL_LAUNCH``: Hydra's ``-launcher fork``;
    ``advisor.libraries.openmpi.LOCAL_LAUNCH``: ORTE's and PRRTE's allocation exclusions)."""
    from advisor.facts.scheduler import in_scheduler_step

    if not in_scheduler_step(env):
        return []
    options = {**mpich.LOCAL_LAUNCH, **openmpi.LOCAL_LAUNCH}
    return list(options.get(launcher_family(exe) or "", []))


def resolve_launcher(launcher: Union[None, str, Sequence[str]] = None, *,
                     nprocs: int = 2) -> Optional[list[str]]:
    """The argv prefix that starts an ``nprocs``-rank job (see module docstring), or None when
    no launcher is configured and no ``mpiexec`` is found."""
    if launcher:
        return _split(launcher, nprocs)
    envl = os.environ.get("ADVISOR_LAUNCHER", "").strip()
    if envl:
        return _split(envl, nprocs)
    exe = find_mpiexec()
    return [exe, *local_launch_args(exe), "-n", str(nprocs)] if exe else None


def mpi_launch_available(launcher: Union[None, str, Sequence[str]] = None) -> tuple[bool, str]:
    """Whether ``run_mpi`` can work here, without starting anything.

    Returns:
        ``(True, "<launcher argv>")`` or ``(False, reason)``: no mpi4py, no launcher, or the
        launcher program not found.
    """
    if find_spec("mpi4py") is None:
        return False, "mpi4py is not installed (pip install mpi4py)"
    argv = resolve_launcher(launcher)
    if not argv:
        return False, ("no MPI launcher: mpiexec not found next to the interpreter or on PATH, "
                       "and ADVISOR_LAUNCHER is not set")
    prog = argv[0]
    if not (os.path.isabs(prog) and os.access(prog, os.X_OK)) and shutil.which(prog) is None:
        return False, f"MPI launcher program {prog!r} not found"
    return True, shlex.join(argv)


def run_mpi(module: str, args: Sequence[str] = (), *, nprocs: int = 2, env: EnvOverlay = None,
            timeout_s: float, launcher: Union[None, str, Sequence[str]] = None,
            cwd: Optional[Union[str, Path]] = None) -> dict:
    """Run ``<launcher> python -m module args`` and return rank 0's JSON result.

    Args:
        module: importable worker module; it prints one JSON object on rank 0
            (``advisor.measure.worker.report``).
        args: its arguments.
        nprocs: ranks (used by the default launcher and ``{nprocs}``).
        env: overlay on ``os.environ`` for the launcher (MPICH's hydra passes the environment
            on to the ranks), e.g. ``{"MPIR_CVAR_CH4_CMA_ENABLE": "0"}``.
        timeout_s: seconds before the job (launcher, proxies, ranks) is killed.
        launcher: argv list or string overriding ``ADVISOR_LAUNCHER`` and ``mpiexec``.
        cwd: working directory.

    Returns:
        the JSON object rank 0 printed.

    Raises:
        LaunchError: no launcher, non-zero exit, timeout, or no JSON (message has all ranks'
            stderr).
    """
    argv = resolve_launcher(launcher, nprocs=nprocs)
    if not argv:
        ok, why = mpi_launch_available(launcher)
        raise LaunchError(why, argv=[], returncode=None)
    full = [*argv, sys.executable, "-m", module, *map(str, args)]
    return _run_json(full, env=env, timeout_s=timeout_s, cwd=cwd)
