"""The test Slurm itself: three nodes, each answering with its own hostname."""

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slurm]


def test_srun_on_three_nodes_answers_each_node_name(slurm_cluster):
    r = slurm_cluster.run("srun", "-N3", "-l", "hostname", timeout=60)
    assert r.returncode == 0, r.stderr + slurm_cluster.logs()
    names = sorted(line.split(":", 1)[1].strip() for line in r.stdout.splitlines())
    assert names == slurm_cluster.nodes
