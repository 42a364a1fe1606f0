"""advisor report: the HTML of the shipped profile, figures gathered with warnings, PNG/SVG
files, deterministic drawing, fleet section, and the CLI's errors (one line, exit 2)."""

from __future__ import annotations

import re
import sys

import pytest
from fleet_support import scaled, write_node
from report_support import SHIPPED_PROFILE, FigureProbe, latency_figure, run_advisor

pytest.importorskip("matplotlib", reason="the report extra is not installed")


@pytest.fixture(scope="module")
def shipped():
    from advisor.profile import load_profile

    return load_profile(SHIPPED_PROFILE)


@pytest.fixture(scope="module")
def probes():
    from advisor.plugins import load

    return dict(load().probes)


def _with(probes, mode):
    return {**probes, "mpich-cma": FigureProbe(probes["mpich-cma"], mode)}


def test_html_is_self_contained_and_has_every_section(shipped, probes):
    from advisor.report.collect import collect_figures
    from advisor.report.html import CSP, report_html

    figs = collect_figures(shipped, _with(probes, "ok"))
    page = report_html(shipped, figs)
    assert f'content="{CSP}"' in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I)
    assert "<script" not in page and "<link" not in page
    for section in ("Facts", "host-buffer", "mpich-cma", "Verify", "Findings and remedies"):
        assert f">{section}" in page
    assert page.count("<figure") == len(figs.items()) >= 2
    assert 'id="fig-mpich-cma-latency"' in page and 'id="fig-verify-verdicts"' in page
    assert "icelake-2c-24g" in page  # the machine class
    assert "2097152 (2 MiB)" in page  # sizes human-readable beside the exact value


def test_plotted_data_is_the_stored_evidence(shipped):
    from advisor.models import Evidence

    ev = Evidence.find(next(r for r in shipped.results if r.probe == "mpich-cma").evidence,
                       "cma-sweep")
    spec = latency_figure([ev])[0]
    on = ev.series_named("latency:cma-on")
    phys = [p for p in on.points if not p.artefact and p.median() is not None]
    assert spec.series[0].y == [p.median() for p in phys]
    has_ci = all(p.stats is not None and p.stats.ci_low is not None for p in phys)
    assert spec.series[0].lo == ([p.stats.ci_low for p in phys] if has_ci else None)


@pytest.mark.parametrize("mode, warning", [
    ("raise", "figures of mpich-cma left out: figures: RuntimeError: figure bug"),
    ("garbage", "figures of mpich-cma left out: figures: TypeError: figures() returned str"),
    ("twice", "figure latency of mpich-cma left out: its id is used twice"),
])
def test_a_bad_figures_method_is_a_warning(shipped, probes, mode, warning):
    from advisor.report.collect import collect_figures

    figs = collect_figures(shipped, _with(probes, mode))
    assert any(w.startswith(warning) for w in figs.warnings), figs.warnings
    assert "verify" in figs.by_probe  # the rest of the report is still there


def test_a_probe_not_installed_is_named(shipped, probes):
    from advisor.report.collect import collect_figures

    rest = {k: v for k, v in probes.items() if k != "mpich-cma"}
    figs = collect_figures(shipped, rest)
    assert any(w.startswith("figures of mpich-cma need its plugin") for w in figs.warnings)


def test_hostile_text_is_escaped(shipped, probes):
    from advisor.report.collect import Figures
    from advisor.report.html import report_html

    evil = shipped.model_copy(update={"facts": shipped.facts.model_copy(
        update={"hostname": "<script>alert(1)</script>"})})
    page = report_html(evil, Figures())
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_drawing_is_deterministic_and_png_is_a_real_picture(shipped):
    import io

    import numpy as np
    from matplotlib.image import imread

    from advisor.report.draw import DPI, FIGSIZE_IN, render

    spec = latency_figure(next(r for r in shipped.results if r.probe == "mpich-cma").evidence)[0]
    assert render(spec, "svg") == render(spec, "svg")
    png = render(spec, "png")
    assert png == render(spec, "png")
    img = imread(io.BytesIO(png))
    assert img.shape[:2] == (round(FIGSIZE_IN[1] * DPI), round(FIGSIZE_IN[0] * DPI))
    assert (np.abs(img[..., :3] - 1.0) > 0.1).any(axis=-1).mean() > 0.03


def test_cli_png_files(tmp_path):
    import numpy as np
    from matplotlib.image import imread

    res = run_advisor("report", "--profile", str(SHIPPED_PROFILE), "-f", "png",
                      "-o", str(tmp_path / "figs"))
    assert res.returncode == 0, res.stderr
    paths = res.stdout.splitlines()
    assert paths and all(p.endswith(".png") for p in paths)
    assert str(tmp_path / "figs" / "verify-verdicts.png") in paths
    for p in paths:
        img = imread(p)
        h, w = img.shape[:2]
        assert 300 <= h <= 2000 and 400 <= w <= 2500, (p, img.shape)
        drawn = (np.abs(img[..., :3] - img[0, 0, :3]) > 0.1).any(axis=-1).mean()
        assert drawn > 0.03, f"{p}: {drawn:.1%} drawn"


def test_cli_html_and_errors(tmp_path):
    out = tmp_path / "r.html"
    res = run_advisor("report", "--profile", str(SHIPPED_PROFILE), "-o", str(out))
    assert res.returncode == 0 and res.stdout == "" and out.read_text().startswith("<!DOCTYPE")
    for args, msg in [(("-f", "pdf"), "--format 'pdf'"), (("-f", "png"), "-o DIR is required"),
                      (("--fleet", str(tmp_path / "none")), "not a directory")]:
        res = run_advisor("report", "--profile", str(SHIPPED_PROFILE), *args)
        assert res.returncode == 2 and msg in res.stderr and "Traceback" not in res.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("schema_version = 1\n")
    res = run_advisor("report", "--profile", str(bad), "-o", str(out))
    assert res.returncode == 2 and str(bad) in res.stderr and "Traceback" not in res.stderr


def test_cli_without_matplotlib_names_the_extra(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; sys.argv = ['advisor', 'report', "
            f"'--profile', {str(SHIPPED_PROFILE)!r}]; from advisor.cli import main; main()")
    import os
    import subprocess

    from support import REPO

    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'plugins'}"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=60)
    assert res.returncode == 2
    assert "pip install 'hpc-advisor[report]'" in res.stderr and "Traceback" not in res.stderr


def test_fleet_section_names_the_outlier(tmp_path, shipped, probes):
    from advisor.fleet.thin import thin_profile
    from advisor.report.collect import Figures
    from advisor.report.fleet import fleet_view
    from advisor.report.html import report_html

    thin = thin_profile(shipped)[0]
    for i in range(1, 6):
        prof = scaled(thin, "mpich-cma", (1 + i / 1000) * (0.5 if i == 3 else 1))
        write_node(tmp_path, f"node{i}", prof)
    view = fleet_view(tmp_path, probes)
    assert [row[0] for row in view.flagged] == ["node3"]
    assert view.figures and any(s.bands for s in view.figures)
    flagged = [s for s in view.figures if any(x.role == "default" for x in s.series)]
    assert flagged and all("node3" in s.notes[0] for s in flagged)
    page = report_html(None, Figures(), view)
    assert ">Fleet<" in page and "node3" in page and page.count("<figure") == len(view.figures)
    assert not (tmp_path / "classes").exists()  # the report writes no class profile
    # issue 27: human names, the probe's own (headline_titles), never the internal key; the
    # key stays in the caption (what --floor takes)
    cma = next(s for s in view.figures if "cma_on_bandwidth" in s.caption)
    assert cma.title.startswith("MPICH bandwidth at the largest message, CMA on")
    assert cma.y_label == "bandwidth" and cma.y_unit == "bytes/s"
    for s in view.figures:
        key = s.caption.split()[2]  # "Headline figure <key> (<title>) of probe ..."
        assert key not in s.title and key not in s.y_label and s.y_label in (
            "bandwidth", "time", "size"), (key, s.title, s.y_label)


@pytest.mark.slow
def test_a_class_profile_is_drawn_with_the_band_it_stores(tmp_path, shipped):
    """``report -p DIR/classes/<class>.toml`` draws the band that fleet report wrote into the
    class profile (its k and MAD floor), not the configuration's default (a new user's
    finding: the page said 6·MAD and 1 % beside a profile of k = 5, floor 0.05)."""
    from advisor.fleet.thin import thin_profile

    thin = thin_profile(shipped)[0]
    for i in range(1, 6):
        write_node(tmp_path, f"node{i}", scaled(thin, "mpich-cma", 1 + i / 1000))
    made = run_advisor("fleet", "report", str(tmp_path), "--k", "5", "--mad-floor", "0.05")
    assert made.returncode == 0, made.stderr
    (cls,) = (tmp_path / "classes").glob("*.toml")
    page = tmp_path / "class.html"
    res = run_advisor("report", "-p", str(cls), "-o", str(page))
    assert res.returncode == 0, res.stderr
    text = page.read_text()
    assert "median ± 5·MAD of the class" in text and "at least 0.05 of the median" in text
    assert "6·MAD" not in text


def test_headline_titles_name_every_headline_figure(shipped, probes):
    """Every headline figure a shipped profile gives has its probe's human title (issue 27:
    fleet figures were titled ``memcpy_bandwidth_largest_bytes_per_s``)."""
    from advisor.fleet.headline import headlines_of
    from advisor.profile import load_profile
    from advisor.report.fleet import probe_titles
    from advisor.specs.headline import headline_title

    from advisor.shipped import shipped_names, shipped_path

    seen = set()
    for name in shipped_names():
        for res in load_profile(shipped_path(name)).results:
            titles = probe_titles(probes.get(res.probe))
            for key in headlines_of(probes[res.probe], res.evidence) if res.probe in probes else {}:
                assert titles and key in titles, (res.probe, key)
                seen.add(headline_title(key, titles))
    assert "memcpy bandwidth at the largest copy size (default tunables)" in seen
    assert len(seen) >= 7  # host-buffer 1, memory-pool 2, mpich-cma 2, openmpi >= 2


@pytest.mark.parametrize("key, title, quantity, unit", [
    ("memcpy_bandwidth_largest_bytes_per_s", "memcpy bandwidth at the largest size",
     "bandwidth", "bytes/s"),
    ("default_latency_smallest_s", "default latency at the smallest size", "time", "s"),
    ("pool_reserve_bytes", "pool reserve", "size", "bytes"),
    ("ratio", "ratio", "value", "")])
def test_headline_title_derived_from_the_key(key, title, quantity, unit):
    """A figure its probe does not name reads as words: the unit ending dropped, largest /
    smallest said in full; the unit and the axis quantity from the same ending."""
    from advisor.specs.headline import headline_quantity, headline_title, headline_unit

    assert headline_title(key) == title and headline_title(key, {"other": "x"}) == title
    assert headline_title(key, {key: " Own title "}) == "Own title"
    assert (headline_quantity(key), headline_unit(key)) == (quantity, unit)


@pytest.mark.parametrize("lo, hi", [(1.6e-6, 2.7e-6), (1.6e9, 32e9), (1e-6, 1e-2)],
                         ids=["under-a-decade", "under-two-decades", "four-decades"])
def test_a_log_axis_has_at_least_two_labelled_ticks(lo, hi):
    """A log y axis over a narrow range (a 1.6-2.7 us latency: no power of ten inside) still
    gets at least two labelled ticks in range (seen unlabelled by a new user)."""
    from advisor.report import draw
    from advisor.specs.figures import FigureSeries, FigureSpec

    spec = FigureSpec(id="narrow", title="t", caption="c", x_label="message size",
                      x_unit="bytes", y_label="latency", y_unit="s", x_scale="log",
                      y_scale="log", series=[FigureSeries(label="a", x=[4096, 32768],
                                                          y=[lo, hi])])
    fig = draw.figure(spec)
    fig.canvas.draw()
    ax = fig.axes[0]
    y0, y1 = ax.get_ylim()
    shown = [t.get_text() for t in ax.yaxis.get_majorticklabels()
             if t.get_text() and y0 <= t.get_position()[1] <= y1]
    assert len(shown) >= 2, shown
