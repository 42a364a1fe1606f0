"""Which batch scheduler's job step the process runs in, and the CPU set it got.

Recognised steps (the first that matches wins), from the variables each scheduler sets in a
task's environment:

- Slurm: ``SLURM_JOB_ID`` (``SLURM_JOBID`` in older releases) and ``SLURM_STEP_ID``
  (``SLURM_STEPID``), node ``SLURMD_NODENAME``, ``SLURM_CPUS_PER_TASK`` (Slurm ``srun(1)``,
  "OUTPUT ENVIRONMENT VARIABLES");
- Flux: ``FLUX_JOB_ID`` (flux-environment(7));
- PBS Pro / OpenPBS / Torque: ``PBS_JOBID`` (qsub(1B) "Environment variables").

A ``salloc``/``sbatch`` shell has ``SLURM_JOB_ID`` but no step id; it is still a Slurm
allocation (an ``mpiexec`` there launches through Slurm too), so ``kind`` is set and
``step_id`` is None.

The CPU set is ``os.sched_getaffinity(0)`` (what the scheduler's task binding, a cgroup cpuset
or ``taskset`` left this process), written as a CPU list (``0-3,8``).  Pure apart from reading
the environment and the affinity; both can be passed in (recorded environments in the tests).
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping, Optional

from advisor.models_step import SchedulerFacts


def cpu_list(cpus: Iterable[int]) -> str:
    """``{0, 1, 2, 5}`` -> ``"0-2,5"`` (the kernel's cpulist format); ``""`` for none."""
    out: list[str] = []
    run: list[int] = []
    for c in sorted(set(cpus)):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [c]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def _first(env: Mapping[str, str], *names: str) -> Optional[str]:
    for n in names:
        v = (env.get(n) or "").strip()
        if v:
            return v
    return None


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text else None
    except ValueError:
        return None


def step_kind(env: Mapping[str, str]) -> Optional[str]:
    """"slurm", "flux", "pbs" or None for the environment ``env`` (see the module docstring)."""
    if _first(env, "SLURM_JOB_ID", "SLURM_JOBID"):
        return "slurm"
    if _first(env, "FLUX_JOB_ID"):
        return "flux"
    if _first(env, "PBS_JOBID"):
        return "pbs"
    return None


def detect_scheduler(env: Optional[Mapping[str, str]] = None,
                     affinity: Optional[Iterable[int]] = None) -> SchedulerFacts:
    """The step and CPU set of this process (``env`` defaults to ``os.environ``, ``affinity``
    to ``os.sched_getaffinity(0)`` where the platform has it).  Never raises."""
    env = os.environ if env is None else env
    if affinity is None and hasattr(os, "sched_getaffinity"):
        try:
            affinity = os.sched_getaffinity(0)
        except OSError:
            affinity = None
    cpus = sorted(set(affinity)) if affinity is not None else None
    kind = step_kind(env)
    fields: dict = {"kind": kind,
                    "cpus_allowed": cpu_list(cpus) if cpus is not None else None,
                    "cpus_allowed_count": len(cpus) if cpus is not None else None}
    if kind == "slurm":
        fields.update(job_id=_first(env, "SLURM_JOB_ID", "SLURM_JOBID"),
                      step_id=_first(env, "SLURM_STEP_ID", "SLURM_STEPID"),
                      node=_first(env, "SLURMD_NODENAME"),
                      cpus_per_task=_int(_first(env, "SLURM_CPUS_PER_TASK")))
    elif kind == "flux":
        fields["job_id"] = _first(env, "FLUX_JOB_ID")
    elif kind == "pbs":
        fields["job_id"] = _first(env, "PBS_JOBID")
    return SchedulerFacts(**fields)


def in_scheduler_step(env: Optional[Mapping[str, str]] = None) -> bool:
    """True inside a Slurm, Flux or PBS job (an ``mpiexec`` there would launch through it)."""
    return step_kind(os.environ if env is None else env) is not None
