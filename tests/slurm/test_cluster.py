"""The test Slurm itself: every node of the fixture (six), each answering with its own
hostname."""

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slurm]


def test_srun_on_every_node_answers_each_node_name(slurm_cluster):
    n = len(slurm_cluster.nodes)
    r = slurm_cluster.run("srun", f"-N{n}", "-l", "hostname", timeout=60)
    assert r.returncode == 0, r.stderr + slurm_cluster.logs()
    names = sorted(line.split(":", 1)[1].strip() for line in r.stdout.splitlines())
    assert names == slurm_cluster.nodes
