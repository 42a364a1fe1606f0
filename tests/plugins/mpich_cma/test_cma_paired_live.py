"""The paired worker mode with the real MPICH (``mpiexec -n 2``): MPI_T switches the CMA
threshold inside one launch and every round gives one on and one off batch per size.

Only structural properties are asserted (the build machine has 2 shared cores: timings are
not claims a test can make there)."""

from __future__ import annotations

import pytest

from advisor.measure import run_mpi
from advisor.models import Facts
from advisor_mpich_cma import evidence
from advisor_mpich_cma import launch
from advisor_mpich_cma.workers import RANK
from advisor_mpich_cma import minimax
from advisor_mpich_cma.pairs import paired_from_evidence
from advisor.measure.mpi.loops import THRESHOLD_OFF, THRESHOLD_ON
from support import tool

pytestmark = pytest.mark.integration

SIZES = (4096, 262144)
ROUNDS = 6


def test_paired_worker_switches_through_mpi_t_in_one_launch():
    tool("mpiexec")
    env = launch.config_env("upstream", evidence.ON, 0)
    res = run_mpi(RANK, ["paired", "--sizes", ",".join(map(str, SIZES)),
                             "--target-s", "0.01", "--rounds", str(ROUNDS)],
                  env=env, timeout_s=60)
    assert "mpit_error" not in res, res.get("mpit_error")
    assert res["switch_read_back"] is True  # both ranks' writes were taken by the library
    assert res["thresholds"] == {"on": THRESHOLD_ON, "off": THRESHOLD_OFF}
    assert res["threshold_initial"] == 0  # the env value, read back through MPI_T
    assert "libmpi" in res["mpit_library"]
    assert [s["bytes"] for s in res["sizes"]] == list(SIZES)
    for s in res["sizes"]:
        for key in ("lat_on_s", "lat_off_s", "bw_on_Bps", "bw_off_Bps"):
            assert len(s[key]) == ROUNDS and all(v > 0 for v in s[key])
    # the probe's evidence keeps the pairs index-aligned and the decision runs on them
    from advisor.probe import MeasureContext
    from advisor_mpich_cma.records import paired_evidence

    ctx = MeasureContext(facts=Facts(), deadline=0.0)
    ev = paired_evidence("", None, {"launch1": res}, env, ctx, ROUNDS)
    p = paired_from_evidence(ev)
    assert p.sizes == SIZES
    for j in range(len(SIZES)):
        lat, bw = p.pair_ratios(j)
        assert len(lat) == len(bw) == ROUNDS
    d = minimax.decide([p], 8192)
    assert 0 <= d.stability <= 1 and d.pairs == ROUNDS
