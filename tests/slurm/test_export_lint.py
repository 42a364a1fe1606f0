"""``advisor lint`` on Slurm's ``--export``, judged by what the real test Slurm does.

Each job script below exports ``ADVISOR_EXPORT_PROBE`` and starts one task that prints whether
it got it.  The script runs for real under ``sbatch --wait`` on the test Slurm
(tests/slurm/conftest.py); ``advisor lint`` of the same file must say ``wrapper-drops-env``
for the launch line exactly when the task did not get the variable.  So the rule lint applies
(``srun --export=NONE`` or a list without ``ALL`` starts the task with a fresh environment, and
``#SBATCH --export=...`` is passed on to the script's ``srun`` lines) is the real Slurm's, not
a reading of its manual.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slurm]

NAME = "ADVISOR_EXPORT_PROBE"
#: The task: prints the variable or "unset" (absolute path: srun(1) asks for one with NONE).
TASK = f"/bin/sh -c 'echo {NAME}=${{{NAME}-unset}}'"
SCRIPTS = {
    "plain srun": f"export {NAME}=1\nsrun -n 1 {TASK}\n",
    "srun --export=NONE": f"export {NAME}=1\nsrun -n 1 --export=NONE {TASK}\n",
    "srun --export=LIST": f"export {NAME}=1\nsrun -n 1 --export=HOME,OTHER=2 {TASK}\n",
    "srun --export=ALL,LIST": f"export {NAME}=1\nsrun -n 1 --export=ALL,OTHER=2 {TASK}\n",
    "srun --export=LIST naming it": f"export {NAME}=1\nsrun -n 1 --export={NAME} {TASK}\n",
    "#SBATCH --export=NONE": f"#SBATCH --export=NONE\nexport {NAME}=1\nsrun -n 1 {TASK}\n",
    "#SBATCH --export=NONE, srun --export=ALL":
        f"#SBATCH --export=NONE\nexport {NAME}=1\nsrun -n 1 --export=ALL {TASK}\n",
}


def _lint_drops(path) -> bool:
    r = subprocess.run([sys.executable, "-m", "advisor", "lint", "--json", str(path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    findings = json.loads(r.stdout)
    return any(f["id"] == "wrapper-drops-env" and f["name"] == NAME for f in findings)


@pytest.mark.parametrize("case", list(SCRIPTS))
def test_lint_says_a_setting_is_dropped_exactly_when_slurm_drops_it(slurm_cluster, tmp_path,
                                                                    case):
    c = slurm_cluster
    job = tmp_path / "job.sh"
    job.write_text("#!/bin/bash\n" + SCRIPTS[case])
    r = c.run("sbatch", "--wait", "--parsable", f"--partition={c.partition}", "--nodes=1",
              "--output=out.txt", str(job), timeout=120, cwd=tmp_path)
    out = (tmp_path / "out.txt").read_text() if (tmp_path / "out.txt").exists() else ""
    assert r.returncode == 0 and f"{NAME}=" in out, f"{r.stderr}\n{out}\n{c.logs()}"
    dropped = f"{NAME}=unset" in out
    assert _lint_drops(job) == dropped, f"{case}: Slurm {'dropped' if dropped else 'passed'} it"
