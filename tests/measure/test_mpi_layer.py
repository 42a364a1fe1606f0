"""The shared MPI layer of the harness (``advisor.measure.mpi``), pure parts: the sweep plan,
the rank worker's security lines and command line, the knob lookup both MPI plugins use."""

from types import SimpleNamespace

import pytest

from advisor.knobs import Knob, knob_named
from advisor.measure.mpi.rank import RANK_SECURITY_MARK, parser, rank_security
from advisor.measure.mpi.sweep import plan

QUICK = ((4096, 1 << 20), 3, 0.02)
FULL = ((1024, 4096, 1 << 20), 5, 0.04)


def test_plan_takes_quick_or_full_and_the_options_override():
    ctx = SimpleNamespace(quick=True, options={})
    assert plan(ctx, quick=QUICK, full=FULL) == {"sizes": [4096, 1 << 20], "repeats": 3,
                                                 "target_s": 0.02}
    ctx = SimpleNamespace(quick=False, options={"sizes": "8192, 1024,8192", "repeats": "1",
                                                "target_s": "0.5"})
    assert plan(ctx, quick=QUICK, full=FULL) == {"sizes": [1024, 8192], "repeats": 2,
                                                 "target_s": 0.5}
    with pytest.raises(ValueError):
        plan(SimpleNamespace(quick=True, options={"repeats": "many"}), quick=QUICK, full=FULL)


def test_rank_security_reads_each_ranks_line_and_skips_the_rest():
    err = ("[proxy] noise\n" + RANK_SECURITY_MARK + '{"rank": 0, "seccomp": 2}\n'
           + "x " + RANK_SECURITY_MARK + '{"rank": 1, "seccomp": 0}\n'
           + RANK_SECURITY_MARK + "{broken\n")
    assert [r["rank"] for r in rank_security(err)] == [0, 1]
    assert rank_security("") == [] and rank_security(None) == []


def test_the_worker_command_line_keeps_extra_modes_options_for_them():
    args, rest = parser(extra=("route",)).parse_known_args(
        ["route", "--checks", "1:16384", "--cpus", "0/1"])
    assert args.mode == "route" and args.cpus == "0/1" and rest == ["--checks", "1:16384"]


def test_knob_named_finds_names_and_aliases():
    knobs = [Knob(library="x", name="X_A", type="int", aliases=["Y_A"], source="t")]
    assert knob_named(knobs, "X_A") is knobs[0] and knob_named(knobs, "Y_A") is knobs[0]
    with pytest.raises(KeyError):
        knob_named(knobs, "X_B")
