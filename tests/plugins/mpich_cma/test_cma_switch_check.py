"""The MPI_T switch check (issue 25 item 5, ``advisor_mpich_cma.trust``): pure rule on
constructed figures, and the finding recommend gives when the switch is not trusted."""

from __future__ import annotations

import pytest

from advisor.models import Evidence, Facts
from advisor_mpich_cma.trust import SWITCH_CHECK, check_findings, switch_agrees

GB = 1e9


def test_a_switch_that_moves_the_path_like_the_environment_is_trusted():
    ok, inconclusive, r_env, floor, why = switch_agrees(1.45, [15 * GB, 15.3 * GB],
                                                        [10 * GB, 10.1 * GB], (1.40, 1.50))
    assert ok and not inconclusive and r_env == pytest.approx(1.5, rel=0.02)
    assert floor == pytest.approx(0.02, abs=0.001) and "moves the path" in why


def test_a_switch_that_does_nothing_is_not_trusted():
    """MPICH 4.3.2's case: the written threshold leaves every message on one path, so the
    paired on/off ratio is ~1 while fresh launches differ by half."""
    ok, inconclusive, r_env, _, why = switch_agrees(1.01, [15 * GB, 15.2 * GB],
                                                    [10 * GB, 10.2 * GB], (0.99, 1.03))
    assert not ok and not inconclusive
    assert "x1.01" in why and "x1.50" in why and "after init" in why
    # within the fresh launches' own floor of 1, with no CI: nothing measurable either
    assert not switch_agrees(1.005, [15 * GB, 15.2 * GB], [10 * GB, 10.2 * GB])[0]


def test_a_working_switch_in_another_copy_state_is_trusted():
    """Recorded in two full probes at 16 KiB, where the copy state moves the ratio most:
    paired x1.31 (rounds x0.81-x2.08) against fresh x0.72, and paired x0.94 against fresh
    x1.74.  The switch moved the path both times; the state moved the size of the effect."""
    assert switch_agrees(1.31, [7.2 * GB, 7.25 * GB], [10 * GB, 10.05 * GB], (1.15, 1.45))[0]
    assert switch_agrees(0.94, [17.4 * GB, 17.6 * GB], [10 * GB, 10.1 * GB], (0.90, 0.97))[0]


def test_paths_that_do_not_differ_beyond_noise_make_the_check_inconclusive():
    ok, inconclusive, _, floor, why = switch_agrees(1.0, [10 * GB, 11 * GB], [10.5 * GB, 10 * GB])
    assert ok and inconclusive and floor == pytest.approx(0.1) and "nothing contradicts" in why


def test_bad_figures_raise():
    with pytest.raises(ValueError):
        switch_agrees(0.0, [1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError):
        switch_agrees(1.0, [], [1.0])


def test_an_untrusted_switch_gives_a_warning_that_says_why():
    why = switch_agrees(1.01, [15 * GB, 15.2 * GB], [10 * GB, 10.2 * GB])[4]
    ev = Evidence(id=SWITCH_CHECK, values={"trusted": False, "why": why, "size_bytes": 1 << 20})
    (f,) = check_findings([ev])
    assert f.id == "cma-mpit-untrusted" and f.severity == "warning" and why in f.message
    (ok,) = check_findings([ev.model_copy(update={"values": {"trusted": True, "why": "w2"}})])
    assert ok.id == "cma-mpit-checked" and ok.severity == "info" and "w2" in ok.message
    assert check_findings([]) == []


def test_recommend_reports_the_untrusted_switch():
    from advisor_mpich_cma.recommend import recommend

    ev = Evidence(id=SWITCH_CHECK, values={"trusted": False, "why": "w"})
    adv = recommend([ev], Facts())
    assert any(f.id == "cma-mpit-untrusted" for f in adv.findings)
