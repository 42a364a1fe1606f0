"""The pure scoring of bench/advice_quality.py (the oracle bench) on constructed numbers.

bench/ is not a package: the module is loaded by path.  Hermetic: nothing is launched.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "advice_quality.py"
_spec = importlib.util.spec_from_file_location("bench_advice_quality", _PATH)
aq = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(aq)

KiB = 1024
OFF = aq.OFF
# CMA/copy ratios (> 1: CMA better; latency already inverted): CMA loses at 4 KiB (latency
# x0.5, bandwidth x0.8), wins at 64 KiB (x2.0, x1.5)
ORACLE = {("lat", 4 * KiB): 0.5, ("bw", 4 * KiB): 0.8,
          ("lat", 64 * KiB): 2.0, ("bw", 64 * KiB): 1.5}
SIZES = [4 * KiB, 64 * KiB]


def test_paired_ratio_is_oriented_so_above_one_means_cma_better():
    assert aq.paired_ratio([2e9, 4e9], [1e9, 8e9], "bw") == [2.0, 0.5]        # on/off
    assert aq.paired_ratio([1e-6, 4e-6], [2e-6, 2e-6], "lat") == [2.0, 0.5]   # off/on
    assert aq.paired_ratio([0.0, 1e-6], [1e-6, 1e-6], "lat") == [1.0]         # bad pair dropped


def test_reduction_gives_a_threshold_the_cma_figure_at_and_above_it_only():
    perf = aq.candidate_perf(8 * KiB, ORACLE)
    assert perf == {("lat", 4 * KiB): 1.0, ("bw", 4 * KiB): 1.0,
                    ("lat", 64 * KiB): 2.0, ("bw", 64 * KiB): 1.5}
    assert set(aq.candidate_perf(OFF, ORACLE).values()) == {1.0}
    assert aq.candidate_perf(4 * KiB, ORACLE) == ORACLE  # n >= T uses CMA


def test_per_size_ratios_and_worst_ratio():
    grid = aq.candidate_grid(SIZES, 8 * KiB)
    best = aq.oracle_best({t: aq.candidate_perf(t, ORACLE) for t in grid})
    assert best == {("lat", 4 * KiB): 1.0, ("bw", 4 * KiB): 1.0,
                    ("lat", 64 * KiB): 2.0, ("bw", 64 * KiB): 1.5}
    off = aq.per_size_ratios(aq.candidate_perf(OFF, ORACLE), best)
    assert off[("lat", 64 * KiB)] == pytest.approx(0.5)
    assert off[("bw", 64 * KiB)] == pytest.approx(1 / 1.5)
    assert aq.worst_ratio(off) == (pytest.approx(0.5), ("lat", 64 * KiB))
    assert aq.by_size(off) == {4 * KiB: 1.0, 64 * KiB: pytest.approx(0.5)}
    on = aq.per_size_ratios(aq.candidate_perf(4 * KiB, ORACLE), best)
    assert aq.worst_ratio(on) == (pytest.approx(0.5), ("lat", 4 * KiB))
    assert aq.worst_ratio({}) == (1.0, None)


def test_grid_keeps_one_threshold_per_routing_default_first():
    # 8 KiB (default) and 64 KiB route 4 KiB by copy and 64 KiB by CMA alike: one candidate
    assert aq.candidate_grid(SIZES, 8 * KiB) == [8 * KiB, 4 * KiB, OFF]
    assert aq.candidate_grid(SIZES, OFF) == [OFF, 4 * KiB, 64 * KiB]


def test_minimax_takes_the_highest_worst_ratio_and_breaks_ties_by_order():
    assert aq.minimax({1: 0.5, 2: 0.9, None: 0.7}, [1, 2, None]) == 2
    assert aq.minimax({1: 0.9, 2: 0.9, None: 0.7}, [2, 1, None]) == 2


def test_same_advice_or_within_the_issue_tolerance():
    assert aq.SAME_ADVICE_TOLERANCE == 0.05 and aq.MINIMAX_RATIO_TARGET == 0.95
    # a different threshold that routes every oracle size alike is the same advice
    assert aq.same_or_within(16 * KiB, 8 * KiB, 0.5, 1.0, SIZES)
    assert aq.same_or_within(OFF, 8 * KiB, 0.96, 1.0, SIZES)      # within 5 %
    assert not aq.same_or_within(OFF, 8 * KiB, 0.94, 1.0, SIZES)  # not within 5 %


def test_score_reports_each_probe_against_the_minimax_choice():
    sc = aq.score(ORACLE, 16 * KiB, [16 * KiB, OFF, 4 * KiB])
    assert sc["minimax"] == 16 * KiB and sc["minimax_worst"] == pytest.approx(1.0)
    assert [p["worst"] for p in sc["probes"]] == pytest.approx([1.0, 0.5, 0.5])
    assert [p["vs_minimax"] for p in sc["probes"]] == pytest.approx([1.0, 0.5, 0.5])
    assert [p["worst_at"] for p in sc["probes"]][1:] == [("lat", 64 * KiB), ("lat", 4 * KiB)]
    assert sc["same_count"] == 1 and sc["min_vs_minimax"] == pytest.approx(0.5)
    assert sc["runner_up"] == 4 * KiB and sc["runner_up_worst"] == pytest.approx(0.5)
    # minimax below 1 (no threshold wins everywhere): the quotient is taken to it
    noisy = {**ORACLE, ("bw", 64 * KiB): 0.9}  # CMA: latency x2 but bandwidth x0.9
    sc = aq.score(noisy, 16 * KiB, [OFF])
    assert sc["minimax"] == 16 * KiB and sc["minimax_worst"] == pytest.approx(0.9)
    assert sc["probes"][0]["vs_minimax"] == pytest.approx(0.5 / 0.9)


def test_prediction_of_the_direct_check():
    assert aq.predicted_ratio(OFF, 8 * KiB, ("lat", 64 * KiB), ORACLE) == pytest.approx(0.5)
    assert aq.predicted_ratio(4 * KiB, 8 * KiB, ("bw", 4 * KiB), ORACLE) == pytest.approx(0.8)
    assert aq.predicted_ratio(OFF, 8 * KiB, ("bw", 4 * KiB), ORACLE) == 1.0
    assert aq.check_sizes([OFF], 8 * KiB, SIZES, ORACLE) == [64 * KiB]
    assert aq.check_sizes([8 * KiB], 8 * KiB, SIZES, ORACLE) == SIZES  # both sides of 8 KiB


def test_advice_read_from_settings():
    c, t = aq.CMA_ENABLE, aq.CMA_THRESHOLD
    assert aq.advice_from_settings({c: 0}, 8 * KiB) is OFF
    assert aq.advice_from_settings({c: "no"}, 8 * KiB) is OFF
    assert aq.advice_from_settings({c: 1, t: 131072}, 8 * KiB) == 131072
    assert aq.advice_from_settings({"MPICH_CH4_IPC_CMA_P2P_THRESHOLD": "65536"}, 8192) == 65536
    assert aq.advice_from_settings({}, 8 * KiB) == 8 * KiB          # no advice: the default
    assert aq.advice_from_settings({}, OFF) is OFF
    assert aq.advice_from_settings({c: 1}, OFF, 16 * KiB) == 16 * KiB


def test_check_verdicts_use_the_a_a_points_as_noise_floor():
    rows = [{"predicted": 1.0, "measured": 1.10, "ci": (1.0, 1.2)},   # A/A: floor log(1.1)
            {"predicted": 0.5, "measured": 0.45, "ci": (0.4, 0.6)},   # in CI
            {"predicted": 0.5, "measured": 0.53, "ci": (0.52, 0.54)},  # outside CI, within A/A
            {"predicted": 0.5, "measured": 0.8, "ci": (0.7, 0.9)}]    # differs
    v = aq.check_verdicts(rows)
    assert [r["verdict"] for r in rows] == ["A/A", "in CI", "within A/A", "DIFFERS"]
    assert v["tested"] == 3 and v["consistent"] == 2
    assert v["aa_floor"] == pytest.approx(0.09531, abs=1e-4)
