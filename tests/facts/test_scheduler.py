"""Scheduler step detection (advisor.facts.scheduler) on recorded environments, and the launch
options it turns on (advisor.measure.launch.local_launch_args)."""

import json
from pathlib import Path

import pytest

from advisor.facts.scheduler import cpu_list, detect_scheduler, in_scheduler_step
from advisor.measure.launch import find_mpiexec, local_launch_args

DATA = Path(__file__).resolve().parents[1] / "data" / "scheduler"


def recorded(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def test_slurm_step_recorded_under_srun():
    f = detect_scheduler(recorded("slurm-22.05-srun-cpt1.json"), affinity={0})
    assert (f.kind, f.job_id, f.step_id, f.node) == ("slurm", "1", "0", "node1")
    assert f.cpus_per_task == 1 and f.cpus_allowed == "0" and f.cpus_allowed_count == 1


def test_salloc_shell_is_slurm_without_a_step():
    f = detect_scheduler(recorded("slurm-22.05-salloc.json"), affinity={0, 1})
    assert f.kind == "slurm" and f.job_id and f.step_id is None
    assert f.cpus_per_task == 2 and f.cpus_allowed == "0-1"


@pytest.mark.parametrize("env,kind,job", [
    ({"FLUX_JOB_ID": "f2Xy7Zq"}, "flux", "f2Xy7Zq"),
    ({"PBS_JOBID": "1234.pbs01"}, "pbs", "1234.pbs01"),
    ({"HOME": "/root", "SLURM_CONF": "/etc/slurm/slurm.conf"}, None, None),
    ({"SLURM_JOB_ID": ""}, None, None),
])
def test_other_schedulers_and_none(env, kind, job):
    f = detect_scheduler(env, affinity={0, 1, 2, 3, 8})
    assert (f.kind, f.job_id) == (kind, job)
    assert f.cpus_allowed == "0-3,8" and f.cpus_allowed_count == 5
    assert in_scheduler_step(env) is (kind is not None)


def test_cpu_list_format():
    assert cpu_list([]) == "" and cpu_list([5, 0, 1, 2]) == "0-2,5" and cpu_list([3]) == "3"


def test_hydra_gets_fork_launcher_only_inside_a_job():
    exe = find_mpiexec()
    if exe is None:
        pytest.skip("no mpiexec (pip install mpich)")
    step = recorded("slurm-22.05-srun-cpt1.json")
    assert local_launch_args(exe, step) == ["-launcher", "fork"]
    assert local_launch_args(exe, {"PBS_JOBID": "7.pbs"}) == ["-launcher", "fork"]
    assert local_launch_args(exe, {"HOME": "/root"}) == []


def test_explicit_launcher_is_never_changed(monkeypatch):
    from advisor.measure.launch import resolve_launcher

    for k, v in recorded("slurm-22.05-srun-cpt1.json").items():
        monkeypatch.setenv(k, v)
    assert resolve_launcher("srun -n {nprocs}") == ["srun", "-n", "2"]
    monkeypatch.setenv("ADVISOR_LAUNCHER", "mpiexec -n {nprocs}")
    assert resolve_launcher() == ["mpiexec", "-n", "2"]
