"""advisor verify --app, the engine: statistics, delta debugging, arms, metric reading, and the
rounds driven by real commands (python processes whose figure of merit is known).

The commands here are real processes (``sys.executable -c ...``): the engine's decisions are
checked on commands whose effect is built in (a variable that multiplies the work, a variable
that makes the command exit 3), so no outcome depends on this machine's speed.
"""

from __future__ import annotations

import math
import sys

import pytest

from advisor.appverify import (AppCommand, Design, compile_pattern, from_env_file, from_profile,
                               read_metric, same_arms, store, verify_app)
from advisor.appverify.arms import Arms
from advisor.plugins import collect, make_plugin_manager
from advisor.appverify.bisect import ddmin
from advisor.errors import BadInputError
from advisor.measure.pairs import (band_decision, noise_floor_from_pairs, pair_log_ratios,
                                   paired_ratio)

# --------------------------------------------------------------------------- statistics


def test_paired_ratio_is_oriented_better_above_one():
    a = [10.0, 11.0, 9.5, 10.2, 10.1]
    b = [5.0, 5.6, 4.7, 5.1, 5.0]  # half the time: twice as fast
    ratio, lo, hi = paired_ratio(a, b)
    assert 1.9 < ratio < 2.1 and lo <= ratio <= hi
    ratio_r, _, _ = paired_ratio(a, b, higher_is_better=True)  # a rate halved: worse
    assert ratio_r == pytest.approx(1 / ratio)
    with pytest.raises(ValueError):
        pair_log_ratios([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        pair_log_ratios([1.0], [0.0])


def test_noise_floor_from_pairs_is_robust_to_one_outlier():
    a = [1.0] * 5
    a2 = [1.01, 0.99, 1.02, 0.98, 3.0]  # one pair met another job
    floor = noise_floor_from_pairs(a, a2)
    # scale from the median |log ratio| (0.0198), times 1.96/0.6745: about 6 %, not 200 %
    assert 0.04 < floor < 0.08
    assert noise_floor_from_pairs([1.0, 1.0], [1.0, 1.0]) == 0.0


@pytest.mark.parametrize("lo,hi,want", [
    (1.2, 1.3, "better"), (0.7, 0.8, "worse"), (0.97, 1.03, "equivalent"),
    (1.02, 1.2, "undecided"), (0.8, 1.02, "undecided")])
def test_band_decision(lo, hi, want):
    assert band_decision(lo, hi, 0.05) == want


# --------------------------------------------------------------------------- delta debugging


@pytest.mark.parametrize("culprit", [{"c"}, {"a", "f"}, {"b", "c", "d"}, {"a"}, {"h"}])
def test_ddmin_finds_the_culprit_set(culprit):
    items = list("abcdefgh")
    calls = []

    def fails(sub):
        calls.append(tuple(sub))
        return culprit <= set(sub)

    assert set(ddmin(items, fails)) == culprit
    assert len(calls) == len(set(calls))  # no subset run twice


def test_ddmin_single_culprit_is_logarithmic():
    items = [f"V{i}" for i in range(16)]
    calls = []
    ddmin(items, lambda sub: calls.append(1) or "V11" in sub)
    assert len(calls) <= 2 * math.ceil(math.log2(16)) + 2


# --------------------------------------------------------------------------- metric, arms


def test_read_metric_takes_the_last_match_and_refuses_non_numbers():
    osu = "# Size  Bandwidth (MB/s)\n1048576   9000.1\n4194304   8123.45\n"
    assert read_metric(compile_pattern("--metric", r"^4194304\s+([0-9.]+)"), osu) == 8123.45
    hpcg = "GFLOP/s rating of=1.2\n...\nGFLOP/s rating of=1.75\n"
    assert read_metric(compile_pattern("--metric", r"GFLOP/s rating of=([0-9.]+)"), hpcg) == 1.75
    assert read_metric(compile_pattern("--metric", r"x=(\S+)"), "x=nan") is None
    assert read_metric(compile_pattern("--metric", r"never"), "text") is None
    with pytest.raises(BadInputError, match="--metric"):
        compile_pattern("--metric", "([0-9")
    with pytest.raises(BadInputError, match="empty"):
        compile_pattern("--check", "")


def test_arms_from_an_env_file(tmp_path):
    f = tmp_path / "site.sh"
    f.write_text("export MPIR_CVAR_CH4_CMA_ENABLE=0\n"
                 'export GLIBC_TUNABLES="${GLIBC_TUNABLES}:glibc.malloc.hugetlb=1"\n')
    arms = from_env_file(f, against="defaults", environ={"GLIBC_TUNABLES": "glibc.x=1"})
    assert arms.advised == {"MPIR_CVAR_CH4_CMA_ENABLE": "0",
                            "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}
    assert arms.baseline == {"MPIR_CVAR_CH4_CMA_ENABLE": None, "GLIBC_TUNABLES": None}
    assert arms.sources["MPIR_CVAR_CH4_CMA_ENABLE"] == [f"{f}:1"]
    env = from_env_file(f, against="env", environ={"GLIBC_TUNABLES": "glibc.x=1"})
    assert env.advised["GLIBC_TUNABLES"] == "glibc.x=1:glibc.malloc.hugetlb=1"
    assert env.baseline["GLIBC_TUNABLES"] == "glibc.x=1"
    assert env.with_only([]) == env.baseline
    assert env.without([]) == env.advised
    assert env.groups("setting") == {"GLIBC_TUNABLES": ["GLIBC_TUNABLES"],
                                     "MPIR_CVAR_CH4_CMA_ENABLE": ["MPIR_CVAR_CH4_CMA_ENABLE"]}
    with pytest.raises(BadInputError, match="B equals A"):  # the environment has the values
        (tmp_path / "same.sh").write_text("export MPIR_CVAR_CH4_CMA_ENABLE=0\n")
        from_env_file(tmp_path / "same.sh", against="env",
                      environ={"MPIR_CVAR_CH4_CMA_ENABLE": "0"})
    (tmp_path / "dyn.sh").write_text("export X=$(hostname)\n")
    with pytest.raises(BadInputError, match="dyn.sh:1"):
        from_env_file(tmp_path / "dyn.sh", against="defaults")
    (tmp_path / "none.sh").write_text("# nothing\n")
    with pytest.raises(BadInputError, match="sets no environment variable"):
        from_env_file(tmp_path / "none.sh", against="defaults")


def test_arms_from_the_shipped_profile_are_what_emit_writes():
    from support import SHIPPED_PROFILE

    from advisor.profile import load_profile

    prof = load_profile(SHIPPED_PROFILE)
    registry = collect(make_plugin_manager(entry_points=False))
    arms = from_profile(prof, registry, against="defaults", environ={})
    assert "GLIBC_TUNABLES" in arms.advised
    assert all(v is None for v in arms.baseline.values())
    # every setting names the plugin that advised it (attribution by plugin, bisection)
    assert set(arms.plugins) == set(arms.advised)
    assert any("/" in s for srcs in arms.sources.values() for s in srcs)
    one = from_profile(prof, registry, against="defaults", environ={},
                       plugins={"memory-pool-host"})
    assert set(one.advised) < set(arms.advised)


# --------------------------------------------------------------------------- rounds, for real

#: A command whose wall time and printed figure scale with ``APPV_WORK`` (default 1): ``work=``
#: is the figure of merit (lower is better), deterministic, so verdicts do not depend on noise.
WORK = ("import os, sys\n"
        "w = float(os.environ.get('APPV_WORK', '1'))\n"
        "if os.environ.get('APPV_BREAK'): sys.exit(3)\n"
        "print(f'work={w * 100:.3f}')\n")


def _cmd(**kw) -> AppCommand:
    return AppCommand(argv=(sys.executable, "-c", WORK),
                      metric=compile_pattern("--metric", r"work=([0-9.]+)"),
                      higher_is_better=False, **kw)


def test_a_planted_regression_is_caught_and_an_aa_run_is_no_difference():
    slow = Arms(baseline={"APPV_WORK": None}, advised={"APPV_WORK": "1.5"})
    rec = verify_app(_cmd(), slow, against="defaults", design=Design(max_rounds=8),
                     time_budget_s=120)
    assert rec.verdict == "regression"
    assert rec.ratio == pytest.approx(1 / 1.5, rel=1e-3)
    assert rec.noise_floor == 0.0  # a deterministic figure: identical A/A pairs
    assert [r.arm for r in rec.runs[:5]] == ["A", "B", "A", "B", "A2"]  # warm-up, then A B A2
    assert [r.arm for r in rec.runs if r.round == 1] == ["A2", "B", "A"]  # the order flipped
    aa = verify_app(_cmd(), same_arms(["APPV_NOTHING"]), against="defaults",
                    design=Design(max_rounds=8), time_budget_s=120)
    assert aa.verdict == "no-difference" and aa.ratio == 1.0


def test_a_breaking_setting_is_bisected_to_itself():
    arms = Arms(baseline={n: None for n in ("APPV_A", "APPV_BREAK", "APPV_C", "APPV_D")},
                advised={"APPV_A": "1", "APPV_BREAK": "1", "APPV_C": "1", "APPV_D": "1"},
                sources={"APPV_BREAK": ["demo-plugin/rec"]})
    rec = verify_app(_cmd(), arms, against="defaults", time_budget_s=120)
    assert rec.verdict == "breaks"
    assert rec.bisection.settings == ["APPV_BREAK"] and rec.bisection.reproduced
    assert rec.bisection.sources == {"APPV_BREAK": ["demo-plugin/rec"]}
    assert "exit status 3" in rec.bisection.failure
    assert "APPV_BREAK (demo-plugin/rec)" in rec.reason


def test_attribution_names_the_setting_that_carries_the_loss():
    arms = Arms(baseline={"APPV_WORK": None, "APPV_NOTHING": None},
                advised={"APPV_WORK": "2", "APPV_NOTHING": "1"})
    rec = verify_app(_cmd(), arms, against="defaults", design=Design(max_rounds=6),
                     time_budget_s=120, attribute="setting")
    shares = {s.group: s.share for s in rec.attribution}
    assert rec.verdict == "regression"
    assert shares == {"APPV_WORK": "loss", "APPV_NOTHING": "none"}


def test_store_replaces_the_same_question_only():
    from support import sample_profile

    arms = same_arms(["APPV_NOTHING"])
    rec = verify_app(_cmd(), arms, against="defaults", design=Design(max_rounds=5),
                     time_budget_s=60)
    prof = store(store(sample_profile(), rec), rec)
    assert len(prof.app_verifications) == 1
    other = rec.model_copy(update={"metric": "wall time"})
    assert len(store(prof, other).app_verifications) == 2


def test_design_refuses_zero_runs():
    with pytest.raises(BadInputError, match="--runs 0"):
        Design(max_rounds=0)


def test_no_verdict_from_fewer_pairs_than_a_median_ci_needs():
    from advisor.measure.pairs import min_pairs_for_median_ci

    assert min_pairs_for_median_ci(0.95) == 6 and min_pairs_for_median_ci(0.99) == 8
    slow = Arms(baseline={"APPV_WORK": None}, advised={"APPV_WORK": "1.5"})
    rec = verify_app(_cmd(), slow, against="defaults", design=Design(max_rounds=2),
                     time_budget_s=60)
    assert rec.verdict == "inconclusive" and rec.ratio == pytest.approx(1 / 1.5, rel=1e-3)
    assert "fewer than the 6" in rec.stop
