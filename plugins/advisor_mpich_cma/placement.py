"""Where the 2 ranks of the probe's MPI runs were: one node? one CPU between them?

The rank worker reports, per rank, its processor name, the size of its shared-memory
communicator (``MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)``) and its CPU affinity
(``placement_per_rank``, ``affinity_per_rank``); ``advisor.measure.mpi.rank.placement_values``
turns that into the values of the smoke evidence; ``placement_findings`` and ``apply`` (pure)
act on them:

- ranks on different nodes (names differ, or a shared-memory communicator smaller than 2): CMA
  is an intra-node path, so nothing measured says anything about it: the MPI results are not
  used (``check`` reports the probe as not applicable with ``mpi-ranks-not-colocated``);
- both ranks allowed only the same one CPU (e.g. ``srun --cpus-per-task=1``): each message
  waits for the peer to be scheduled, so latency and bandwidth measure the kernel's time slice,
  not the copy path, and the on/off ratio can go either way.  The functional results stay valid
  (CMA works or is blocked); the measured advice is kept but its confidence is set to ``low``
  and ``mpi-ranks-share-one-cpu`` names the fix (two CPUs for the task).  Kept rather than
  dropped so a site still sees the numbers, with the reason not to trust them.
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor.models import Advice, Evidence, Finding

NOT_COLOCATED = "mpi-ranks-not-colocated"
SHARE_ONE_CPU = "mpi-ranks-share-one-cpu"
LAUNCHER_FAILED = "launcher-failed"
#: The fix named when the ranks share one CPU.
CPU_FIX = "give the probe's task 2 CPUs: srun --cpus-per-task=2 (sbatch -c 2; Flux -c 2; PBS ncpus=2)"


def _smoke(evidence: Sequence[Evidence]) -> Optional[Evidence]:
    from advisor_mpich_cma.evidence import SMOKE

    return next((e for e in evidence if e.id.startswith(SMOKE)), None)


def not_colocated_finding(ev: Evidence) -> Finding:
    return Finding(id=NOT_COLOCATED, severity="error", evidence=[ev.id], message=(
        f"the 2 MPI ranks ran on different nodes ({ev.values.get('rank_hosts')}, shared-memory "
        f"communicator size {ev.values.get('rank_shm_size')}): CMA is intra-node, so the MPI "
        "results are not used"), remedy="run the probe as one task on one node (srun -N1 -n1)")


def placement_findings(evidence: Sequence[Evidence]) -> list[Finding]:
    """Findings about the ranks' placement from the smoke evidence (pure)."""
    ev = _smoke(evidence)
    if ev is None:
        return []
    out = []
    if ev.values.get("launch_failed"):
        out.append(Finding(id=LAUNCHER_FAILED, severity="error", evidence=[ev.id], message=(
            "the MPI launcher could not start the 2 ranks; this says nothing about CMA: "
            + str(ev.values.get("error", ""))[:300]),
            remedy="check the launcher (advisor probe --launcher ...); inside a scheduler job "
                   "the default mpiexec is started with its local (fork) launcher"))
    if ev.values.get("ranks_one_node") is False:
        out.append(not_colocated_finding(ev))
    if ev.values.get("ranks_share_one_cpu"):
        out.append(Finding(id=SHARE_ONE_CPU, severity="warning", evidence=[ev.id], message=(
            f"both MPI ranks could run only on CPU {ev.values.get('rank_cpus')}: the measured "
            "latency and bandwidth are unreliable (each message waits for the other rank to be "
            "scheduled); recommendations from them have low confidence"), remedy=CPU_FIX))
    return out


def apply(advice: Advice, evidence: Sequence[Evidence]) -> Advice:
    """``advice`` with the placement findings added; every recommendation at ``low``
    confidence when the ranks shared one CPU (pure)."""
    found = placement_findings(evidence)
    if not found:
        return advice
    recs = advice.recommendations
    if any(f.id == SHARE_ONE_CPU for f in found):
        recs = [r.model_copy(update={"confidence": "low"}) for r in recs]
    have = {f.id for f in advice.findings}
    return advice.model_copy(update={"recommendations": recs, "findings": [
        *advice.findings, *(f for f in found if f.id not in have)]})
