"""The scheduler step a probe ran in, and the CPU set it got (``Facts.scheduler``).

Kept apart from ``advisor.models`` (which stays under 400 lines); the base configuration is
the same (frozen, unknown keys rejected).  Detection: ``advisor.facts.scheduler``.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

#: The batch schedulers whose job steps are recognised (see ``advisor.facts.scheduler``).
Scheduler = Literal["slurm", "flux", "pbs"]


class SchedulerFacts(BaseModel):
    """Where the probe ran: a scheduler's job step or none, and the CPUs it was allowed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Optional[Scheduler] = Field(None, description="scheduler of the job step; None: none")
    job_id: Optional[str] = Field(None, description="SLURM_JOB_ID, FLUX_JOB_ID or PBS_JOBID")
    step_id: Optional[str] = Field(None, description="SLURM_STEP_ID (Slurm only)")
    node: Optional[str] = Field(None, description="the scheduler's node name (SLURMD_NODENAME)")
    cpus_per_task: Optional[int] = Field(None, ge=1, description="SLURM_CPUS_PER_TASK")
    cpus_allowed: Optional[str] = Field(
        None, description="CPU list of sched_getaffinity(0) at detection, e.g. '0-3,8'")
    cpus_allowed_count: Optional[int] = Field(None, ge=0, description="CPUs in cpus_allowed")
