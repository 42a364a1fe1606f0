"""``advisor verify --app`` inside a real Slurm batch job, the user's command an ``srun`` step.

The job script is the one docs/verify-app.md shows (one node, ``--exclusive``): advisor runs on
the batch host of the allocation and every run of the command is a job step of its own
(``srun -n 1 PYTHON -c ...``).  The env file sets a variable nothing reads, so B is A in effect
(an A/A run): the verdict must not be a regression, and the record (ratio, CI, A/A floor) is
printed as JSON and stored in the profile given.  ``--check`` holds every run to having been a
Slurm step on one of the test nodes, so a run that bypassed Slurm would fail.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest
import tomllib

pytestmark = [pytest.mark.integration, pytest.mark.slurm, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
#: A shipped profile, copied: --profile FILE is where the record is stored.
PROFILE = ROOT / "profiles" / "x86_64-icelake-2core-vm.toml"
#: Bound on one batch job: ~19 srun steps of 0.1-2 s each on this 2-core machine (measured:
#: 18-26 s for the whole job); 150 s leaves room for a machine shared with other test runs.
JOB_TIMEOUT_S = 150
#: The user's program: a fixed amount of work, timed by itself (the metric), and the step and
#: node it ran on (what --check reads).  Its own timer, not the step's wall time, which carries
#: Slurm's step start and end: measured in this test Slurm, steps of programs that timed
#: themselves at 0.2-0.9 s took 2.0-4.0 s, and srun may wait for the previous step's resources
#: ("step creation temporarily disabled, retrying").  300,000 squares: ~15-50 ms here.
PROGRAM = ("import os, time; t = time.perf_counter(); sum(i * i for i in range(300000)); "
           "print('step', os.environ['SLURM_STEP_ID'], 'on', os.environ['SLURMD_NODENAME'], "
           "f'time_s={time.perf_counter() - t:.6f}')")
SCRIPT = """\
#!/bin/bash
#SBATCH --job-name=verify-app
#SBATCH --nodes=1
#SBATCH --exclusive
#SBATCH --output=verify-%j.json
#SBATCH --error=verify-%j.log
{advisor} verify --app --profile {profile} --env aa.env --runs 6 --json \\
    --metric 'time_s=([0-9.]+)' --lower-is-better --check 'step [0-9]+ on node[1-6]' \\
    -- srun -n 1 {python} -c {program}
"""


def _submit(cluster, tmp_path):
    """Run the job script with ``sbatch --wait``; its exit code, JSON record and log."""
    r = cluster.run("sbatch", "--wait", "--parsable", f"--partition={cluster.partition}",
                    "job.sh", timeout=JOB_TIMEOUT_S, cwd=tmp_path)
    job = r.stdout.strip().split(";")[0]
    out, log = tmp_path / f"verify-{job}.json", tmp_path / f"verify-{job}.log"
    text = log.read_text(errors="replace") if log.exists() else "(no job log)"
    assert out.exists(), f"sbatch rc={r.returncode}\n{r.stderr}\n{text}\n{cluster.logs()}"
    rec = json.loads(out.read_text()) if out.read_text().strip() else None
    return r.returncode, rec, text


def test_verify_app_aa_in_a_batch_job_with_srun_steps(slurm_cluster, tmp_path):
    shutil.copy(PROFILE, tmp_path / "profile.toml")
    (tmp_path / "aa.env").write_text("export ADVISOR_TEST_SLURM_AA_UNUSED=1\n")
    advisor = shlex.join([sys.executable, "-m", "advisor"])
    (tmp_path / "job.sh").write_text(SCRIPT.format(
        advisor=advisor, profile="profile.toml", python=shlex.quote(sys.executable),
        program=shlex.quote(PROGRAM)))
    # the job inherits this environment (sbatch's default --export=ALL): PYTHONPATH, PATH
    t0 = time.monotonic()
    rc, rec, log = _submit(slurm_cluster, tmp_path)
    if rc != 0 and rec is not None and rec["verdict"] == "regression":
        # An A/A verdict is a false alarm at most 1 time in 20, half of them "regression"
        # (DESIGN.md; bench/bench_app_verify.py measures the rate): one more job makes a
        # spurious failure about 1 in 1600, while a real defect (B slower, or failing) repeats.
        print(f"first job: false alarm? {rec.get('reason')}; running it again", file=sys.stderr)
        rc, rec, log = _submit(slurm_cluster, tmp_path)
    took = time.monotonic() - t0
    print(f"verify --app in a batch job: {took:.1f} s\n{log}", file=sys.stderr)
    assert rc == 0, f"exit {rc}\n{log}"
    assert rec is not None, log
    assert rec["verdict"] in ("no-difference", "inconclusive", "better"), rec["reason"]
    assert rec["advised"] == {"ADVISOR_TEST_SLURM_AA_UNUSED": "1"}
    assert rec["command"][:3] == ["srun", "-n", "1"]
    for key in ("ratio", "ci_low", "ci_high", "noise_floor"):
        assert isinstance(rec[key], float) and rec[key] >= 0, (key, rec)
    assert rec["ci_low"] <= rec["ratio"] <= rec["ci_high"]
    assert 1 <= rec["rounds"] <= 6
    compare = [r for r in rec["runs"] if r["phase"] == "compare"]
    assert compare and all(r.get("failure") is None for r in compare), compare
    assert {r["arm"] for r in compare} >= {"A", "B", "A2"}
    # the human lines on stderr: the verdict with ratio, CI and floor
    assert "verdict:" in log and "95 % CI [" in log and "A/A floor ±" in log, log
    # stored in the profile given
    prof = tomllib.loads((tmp_path / "profile.toml").read_text())
    stored = prof["app_verifications"]
    assert [v["verdict"] for v in stored] == [rec["verdict"]]
    assert stored[0]["command"] == rec["command"]
