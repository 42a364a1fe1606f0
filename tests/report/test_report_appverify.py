"""``verify --app`` records in ``advisor show``, ``show --json`` and ``advisor report``, read from
four records made by the real ``advisor verify --app`` (tests/data/appverify/README.md): a
better verdict with attribution, an inconclusive one on a loaded VM, a ``--metric`` run with a
failed run, and a break in the warm-up with its bisection."""

from __future__ import annotations

import json
import re
from statistics import median

import pytest
from report_support import SHIPPED_PROFILE, run_advisor
from support import DATA

APP_PROFILE = DATA / "appverify" / "profile.toml"


@pytest.fixture(scope="module")
def prof():
    from advisor.profile import load_profile

    return load_profile(APP_PROFILE)


def test_the_fixture_holds_the_four_recorded_shapes(prof):
    recs = prof.app_verifications
    assert [r.verdict for r in recs] == ["inconclusive", "better", "inconclusive", "breaks"]
    assert recs[1].attribution and recs[3].bisection is not None
    assert recs[2].unit == "metric" and any(r.value is None for r in recs[2].runs)


def test_show_lists_each_record_compactly(prof):
    from advisor.report.tables import show_report

    rep = show_report(prof)
    table = rep.app_verifications
    assert "verify --app" in table.title and "B better" in table.title
    assert [row[0] for row in table.rows] == ["1", "2", "3", "4"]
    better = table.rows[1]
    assert better[2] == "wall time" and better[4] == "5"
    assert better[3] == "better ×1.829 [1.624, 1.979], A/A ±5.1 %"
    assert better[5] == "2026-12-01 15:11"
    assert table.rows[2][2] == "Copy: ([0-9.]+) MB/s"
    assert all(len(row[1]) <= 48 for row in table.rows)  # cut: show is a summary
    assert rep.app_details == [
        "#2 share (B / B without it): APP_LOG_LEVEL none ×1.016 [0.998, 1.045]; "
        "APP_WORK_SCALE gain ×1.816 [1.677, 1.970]",
        "#4 breaks with: APP_CHECKS=strict (advised by /tmp/avrec/strict.env:2): exit status 1"]


def test_show_cli_prints_the_section_and_json_holds_every_run(prof):
    res = run_advisor("show", "--profile", str(APP_PROFILE))
    assert res.returncode == 0, res.stderr
    assert "Application verification (verify --app" in res.stdout
    assert "better ×1.829 [1.624, 1.979], A/A ±5.1 %" in res.stdout
    assert "#4 breaks with: APP_CHECKS=strict" in res.stdout
    res = run_advisor("show", "--json", "--profile", str(APP_PROFILE))
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)["app_verifications"]
    assert got == [r.model_dump(mode="json", exclude_none=True) for r in prof.app_verifications]
    assert [len(r["runs"]) for r in got] == [len(r.runs) for r in prof.app_verifications]
    assert got[3]["bisection"]["settings"] == ["APP_CHECKS"]
    assert got[1]["advised"] == {"APP_LOG_LEVEL": "quiet", "APP_WORK_SCALE": "0.4"}


def test_show_without_records_prints_no_app_section():
    res = run_advisor("show", "--profile", str(SHIPPED_PROFILE))
    assert res.returncode == 0 and "verify --app" not in res.stdout


def test_the_figure_plots_every_stored_run(prof):
    from advisor.report.appfigure import app_figure
    from advisor.report.appverify import arm_values

    for i, rec in enumerate(prof.app_verifications[:3]):
        spec = app_figure(rec, i)
        strips = [s for s in spec.series if not s.hollow]
        assert [s.y for s in strips] == [arm_values(rec, arm) for arm in ("A", "B", "A2")]
        assert all(s.kind == "strip" and len(set(s.x)) == 1 for s in spec.series)
        warm = [s for s in spec.series if s.hollow]
        assert [v for s in warm for v in s.y] == (arm_values(rec, "A", "warmup")
                                                   + arm_values(rec, "B", "warmup"))
        bars = [m for m in spec.marks if m.shape == "bar"]
        assert [m.y for m in bars] == [median(s.y) for s in strips]
        assert all(m.label.startswith("median ") for m in bars)
        a = median(arm_values(rec, "A"))
        assert spec.bands[0].low == pytest.approx(a / (1 + rec.noise_floor))
        assert spec.bands[0].high == pytest.approx(a * (1 + rec.noise_floor))
        assert spec.names[0.0].startswith("warm-up")
        assert spec.title.startswith("verify --app: python3 ")
    wall = app_figure(prof.app_verifications[1], 1)
    assert (wall.id, wall.y_unit, wall.y_label) == ("2-python3", "s", "wall time per run")
    assert [m.label for m in wall.marks] == ["median 368 ms", "median 186 ms", "median 349 ms"]
    assert wall.names[2.0] == "B\nfast2.env\n5 runs"
    metric = app_figure(prof.app_verifications[2], 2)
    assert metric.y_unit == "" and metric.y_label == "metric 'Copy: ([0-9.]+) MB/s'"
    assert [m.label for m in metric.marks if m.shape == "x"] == ["1 failed"]
    assert [m.role for m in metric.marks if m.shape == "x"] == ["advised"]  # B's


def test_a_break_in_the_warm_up_draws_the_warm_up_alone(prof):
    from advisor.report.appfigure import app_figure

    spec = app_figure(prof.app_verifications[3], 3)
    assert list(spec.names) == [0.0]
    assert [s.y for s in spec.series] == [[prof.app_verifications[3].runs[0].value]]
    assert [(m.shape, m.label) for m in spec.marks] == [("x", "B: 2 failed")]
    assert "No round was run" in spec.caption
    assert any("APP_CHECKS" in n for n in spec.notes)


def test_a_named_group_names_the_axis(prof):
    from advisor.report.appfigure import metric_label

    rec = prof.app_verifications[2]
    assert metric_label(rec.model_copy(update={"metric": r"Copy: (?P<copy_MBps>[0-9.]+)"})) \
        == "copy_MBps"


def _drawn(spec):
    from advisor.report import draw

    fig = draw.figure(spec)
    fig.canvas.draw()
    return fig, fig.axes[0], fig.canvas.get_renderer()


def test_labels_stay_clear_of_each_other_and_of_the_legend(prof):
    """As a person looks at it: every mark's label inside the picture, no two mark labels on
    top of each other, none under the legend, tick labels horizontal, no "(s)" over ms ticks."""
    from advisor.report.appfigure import app_figure

    for i, rec in enumerate(prof.app_verifications):
        fig, ax, r = _drawn(app_figure(rec, i))
        page = fig.bbox
        texts = [t for t in ax.texts if t.get_text()]
        assert len(texts) == len(app_figure(rec, i).marks)
        boxes = [t.get_window_extent(r) for t in texts]
        for b in boxes:
            assert page.x0 <= b.x0 and b.x1 <= page.x1 and page.y0 <= b.y0 and b.y1 <= page.y1
        for j, b in enumerate(boxes):
            assert not any(b.overlaps(c) for c in boxes[j + 1:]), rec.command
        legend = fig.legends[0].get_window_extent(r)
        assert not any(legend.overlaps(b) for b in boxes), (i, [t.get_text() for t in texts])
        assert all(t.get_rotation() == 0 for t in ax.get_xticklabels())
        assert "(s)" not in ax.get_ylabel()


def test_the_legend_has_one_entry_per_label(prof):
    from advisor.report.appfigure import app_figure

    fig, ax, _ = _drawn(app_figure(prof.app_verifications[1], 1))
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["warm-up run (discarded, hollow)", "A/A floor: A's median ±5.1 %"]


def test_drawing_is_deterministic(prof):
    from advisor.report.appfigure import app_figure
    from advisor.report.draw import render

    spec = app_figure(prof.app_verifications[2], 2)
    assert render(spec, "svg") == render(spec, "svg")
    assert render(spec, "png") == render(spec, "png")


def test_html_section_per_record(prof):
    from advisor.report.appfigure import APP_PROBE
    from advisor.report.collect import collect_figures
    from advisor.report.html import report_html

    figs = collect_figures(prof, {})
    assert [s.id for s in figs.by_probe[APP_PROBE]] == [
        "1-python3", "2-python3", "3-python3", "4-python3"]
    page = report_html(prof, figs)
    assert '<h2 id="verify-app">Application verification (verify --app)</h2>' in page
    sections = re.split(r'<h3 id="app-', page.split('id="verify-app"')[1])[1:]
    assert len(sections) == 4
    for i, sec in enumerate(sections):
        assert f'<figure id="fig-verify-app-{i + 1}-python3"' in sec
        assert "<svg" in sec and sec.count("<path") >= 20
    better = sections[1]
    assert '<span class="verdict-better">BETTER</span>: B is better than A' in better
    assert "<td>ratio (&gt; 1: B better)</td><td>1.829</td>" in better
    assert "<td>95 % CI</td><td>[1.624, 1.979]</td>" in better
    assert "<td>A/A floor</td><td>±5.1%</td>" in better
    assert "decided after 5 rounds" in better
    assert "<th>A: library defaults</th><th>B: /tmp/avrec/fast2.env</th>" in better
    assert ("<td><code>APP_WORK_SCALE</code></td><td><span class=\"note\">unset</span></td>"
            "<td><code>0.4</code></td><td>/tmp/avrec/fast2.env:1</td>") in better
    assert "<td>APP_WORK_SCALE</td><td>APP_WORK_SCALE</td><td>carries gain</td>" in better
    assert "INCONCLUSIVE</span>: the CI overlaps" in sections[0]  # the verdict said once
    assert "B 10 (1 failed)" in sections[2]
    broke = sections[3]
    assert "<b>Bisection</b> (3 runs; reproduced on a rerun)" in broke
    assert "<code>APP_CHECKS=strict</code> advised by /tmp/avrec/strict.env:2" in broke


def test_html_escapes_the_command_and_says_when_nothing_was_checked(prof):
    from advisor.profile import load_profile
    from advisor.report.collect import Figures, collect_figures
    from advisor.report.html import report_html

    rec = prof.app_verifications[1]
    evil = prof.model_copy(update={"app_verifications": [rec.model_copy(
        update={"command": ["<script>alert(1)</script>"], "reason": "<b>x</b>"})]})
    page = report_html(evil, collect_figures(evil, {}))
    assert "<script>" not in page and "&lt;script&gt;" in page and "<b>x</b>" not in page
    shipped = load_profile(SHIPPED_PROFILE)
    page = report_html(shipped, Figures())
    assert "Not checked: no record stored" in page


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_cli_writes_one_file_per_record(tmp_path, fmt):
    res = run_advisor("report", "--profile", str(APP_PROFILE), "-f", fmt, "-o", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [str(tmp_path / f"verify-app-{i}-python3.{fmt}")
                                       for i in range(1, 5)]
    if fmt == "svg":
        assert all(p.read_text().lstrip().startswith("<?xml") for p in tmp_path.iterdir())
        return
    from matplotlib.image import imread

    for p in res.stdout.splitlines():
        img = imread(p)
        assert img.shape[:2] == (720, 1200)
        colour = (img[..., :3].max(axis=-1) - img[..., :3].min(axis=-1)) > 0.25
        # the sparsest (the break in the warm-up: one hollow dot, one cross and its label)
        # colours about 500 pixels; a blank figure none
        assert colour.sum() > 300, f"{p}: no coloured dots"
