"""The ranks' placement checks of mpich-cma (advisor_mpich_cma.placement), pure."""

from advisor.models import Advice, Evidence, Recommendation

from advisor.measure.mpi.rank import placement_values
from advisor_mpich_cma import placement


def smoke(**values) -> Evidence:
    return Evidence(id="cma-mpi-smoke", values={"ok": True, **values})


def test_values_from_a_worker_result():
    # the shape rank 0 reports (placement_per_rank / affinity_per_rank), as under
    # srun --cpus-per-task=1 in the test Slurm
    res = {"placement_per_rank": [{"host": "node1", "shm_size": 2}] * 2,
           "affinity_per_rank": [[0], [0]]}
    v = placement_values(res)
    assert v == {"rank_hosts": "node1,node1", "rank_shm_size": 2, "ranks_one_node": True,
                 "rank_cpus": "0/0", "ranks_share_one_cpu": True}
    two = placement_values({**res, "affinity_per_rank": [[0, 1], [0, 1]]})
    assert two["ranks_share_one_cpu"] is False
    apart = placement_values({"placement_per_rank": [{"host": "a", "shm_size": 1},
                                                       {"host": "b", "shm_size": 1}]})
    assert apart["ranks_one_node"] is False
    assert placement_values({}) == {}


def test_one_cpu_lowers_confidence_and_names_the_fix():
    rec = Recommendation(id="cma-threshold", title="t", rationale="r", confidence="high")
    adv = placement.apply(Advice(recommendations=[rec]),
                          [smoke(ranks_one_node=True, ranks_share_one_cpu=True, rank_cpus="0/0")])
    assert [r.confidence for r in adv.recommendations] == ["low"]
    f = next(f for f in adv.findings if f.id == placement.SHARE_ONE_CPU)
    assert "--cpus-per-task=2" in f.remedy


def test_two_cpus_one_node_changes_nothing():
    rec = Recommendation(id="cma-threshold", title="t", rationale="r", confidence="high")
    adv = Advice(recommendations=[rec])
    assert placement.apply(adv, [smoke(ranks_one_node=True, ranks_share_one_cpu=False)]) == adv


def test_not_colocated_and_launcher_failed_findings():
    ids = {f.id for f in placement.placement_findings([smoke(ranks_one_node=False, rank_hosts="a,b")])}
    assert ids == {placement.NOT_COLOCATED}
    failed = Evidence(id="cma-mpi-smoke", values={"ok": False, "launch_failed": True,
                                                  "error": "cannot start mpiexec"})
    assert [f.id for f in placement.placement_findings([failed])] == [placement.LAUNCHER_FAILED]
