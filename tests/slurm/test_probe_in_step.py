"""``advisor probe --plugin mpich-cma`` inside a real Slurm job step (issue 15, deliverable 1).

Before the fix the step's Hydra ``mpiexec`` started its proxies with a nested ``srun`` that
waited for ever; the probe ended after 60 s with mpich-cma "not-applicable ... timed out".
"""

import os
import sys
import time

import pytest
import tomllib

pytestmark = [pytest.mark.integration, pytest.mark.slurm, pytest.mark.slow]

ADVISOR = [sys.executable, "-m", "advisor"]
#: bound on one quick mpich-cma probe inside the step: a quick probe takes ~20-40 s on this
#: 2-core machine; 240 s leaves room for a machine shared with other test runs
PROBE_TIMEOUT_S = 240


def _probe_in_step(cluster, tmp_path, cpus: int):
    out = tmp_path / f"cpt{cpus}.toml"
    t0 = time.monotonic()
    r = cluster.run("srun", "-N1", "-n1", f"--cpus-per-task={cpus}", *ADVISOR, "probe",
                    "--plugin", "mpich-cma", "--quick", "-o", str(out),
                    timeout=PROBE_TIMEOUT_S, cwd=os.getcwd())
    took = time.monotonic() - t0
    assert out.exists(), f"rc={r.returncode}\n{r.stderr[-3000:]}\n{cluster.logs()}"
    prof = tomllib.loads(out.read_text())
    res = next(x for x in prof["results"] if x["probe"] == "mpich-cma")
    print(f"--cpus-per-task={cpus}: {took:.1f} s, status {res['status']}", file=sys.stderr)
    return prof, res, took


def test_probe_in_a_step_with_two_cpus_gives_cma_results(slurm_cluster, tmp_path):
    prof, res, took = _probe_in_step(slurm_cluster, tmp_path, 2)
    assert res["status"] == "ok", res.get("reason")
    assert res.get("recommendations")
    sched = prof["facts"]["scheduler"]
    assert sched["kind"] == "slurm" and sched["cpus_allowed_count"] == 2
    assert sched["node"] in slurm_cluster.nodes
    smoke = next(e for e in res["evidence"] if e["id"] == "cma-mpi-smoke")
    assert smoke["values"]["ranks_one_node"] is True
    assert smoke["values"]["ranks_share_one_cpu"] is False
    assert not [f for f in res.get("findings", []) if f["id"].startswith("mpi-ranks")]


def test_probe_in_a_step_with_one_cpu_marks_mpi_results_unreliable(slurm_cluster, tmp_path):
    prof, res, took = _probe_in_step(slurm_cluster, tmp_path, 1)
    assert prof["facts"]["scheduler"]["cpus_allowed_count"] == 1
    found = {f["id"]: f for f in res.get("findings", [])}
    assert "mpi-ranks-share-one-cpu" in found, res
    assert "--cpus-per-task=2" in found["mpi-ranks-share-one-cpu"]["remedy"]
    assert all(r["confidence"] == "low" for r in res.get("recommendations", []))
