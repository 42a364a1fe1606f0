"""The shipped profile's HTML report in Debian's headless chromium, as a person opens it: no
console error, no network request (the network is a proxy that answers nothing), every figure
present with drawn paths, and a screenshot that is not blank.

Requests are caught by pointing chromium's proxy at a socket this test listens on: every
request the page made would arrive there.  Chromium itself also calls its own services (clock,
component updates, accounts at *.google.com, *.googleapis.com, *.gvt1.com) whatever the page;
those are ignored by host.  A control page proves both detectors work (it fetches an image and
throws an error).
"""

from __future__ import annotations

import re

import pytest
from browser_support import NEEDS_CHROMIUM, chromium, console_errors, listener  # noqa: F401
from report_support import SHIPPED_PROFILE, FigureProbe

pytestmark = [pytest.mark.integration, NEEDS_CHROMIUM]


def _report(tmp_path):
    """The shipped profile's report with every installed probe's figures (the mpich-cma probe
    given a figure built from its evidence while the plugin has none) and the verify figure."""
    from advisor.plugins import load
    from advisor.profile import load_profile
    from advisor.report.collect import collect_figures
    from advisor.report.html import report_html

    probes = dict(load().probes)
    if not hasattr(probes["mpich-cma"], "figures"):
        probes["mpich-cma"] = FigureProbe(probes["mpich-cma"])
    prof = load_profile(SHIPPED_PROFILE)
    figs = collect_figures(prof, probes)
    path = tmp_path / "report.html"
    path.write_text(report_html(prof, figs))
    return path, figs


def test_control_page_is_caught(tmp_path, listener):
    page = tmp_path / "control.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://example.invalid/x.png">'
                    "<script>nosuch();</script></body></html>")
    res = chromium(page.as_uri(), tmp_path, listener.port, "--dump-dom")
    assert any("example.invalid" in r for r in listener.page_requests()), listener.lines
    assert any("Uncaught ReferenceError" in ln for ln in console_errors(res.stderr))


def test_report_in_headless_chromium(tmp_path, listener):
    import numpy as np
    from matplotlib.image import imread

    path, figs = _report(tmp_path)
    expected = [f"fig-{probe}-{spec.id}" for probe, spec in figs.items()]
    assert "fig-mpich-cma-latency" in expected and "fig-verify-verdicts" in expected
    dom = chromium(path.as_uri(), tmp_path, listener.port, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_errors(dom.stderr) == []
    for fid in expected:
        m = re.search(rf'<figure id="{fid}".*?</figure>', dom.stdout, re.S)
        assert m, f"figure {fid} missing from the rendered page"
        assert "<svg" in m.group(0) and m.group(0).count("<path") >= 20, fid
        assert "<figcaption>" in m.group(0)
    shot = tmp_path / "shot.png"
    res = chromium(path.as_uri(), tmp_path, listener.port, f"--screenshot={shot}",
                   "--window-size=1000,6000")
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    assert console_errors(res.stderr) == []
    img = imread(shot)[..., :3]
    background = img[5, 5]  # the page's margin
    differs = np.any(np.abs(img - background) > 0.1, axis=-1)
    assert differs.mean() > 0.05, f"only {differs.mean():.1%} of the screenshot is drawn"
    # each figure is drawn: in every band of rows the figures occupy, colour (the curves,
    # markers, bands) and not only black text on white
    colour = (img.max(axis=-1) - img.min(axis=-1)) > 0.25
    assert colour.sum() > 2000 * len(expected)
    assert listener.page_requests() == [], "the page made network requests"


def test_app_verify_section_in_headless_chromium(tmp_path, listener):
    """The verify --app records' section as a browser renders it: every record's figure drawn
    (dots are paths), the verdicts and environments present, no error, no request."""
    from matplotlib.image import imread
    from support import DATA

    from advisor.profile import load_profile
    from advisor.report.appfigure import APP_PROBE
    from advisor.report.collect import collect_figures
    from advisor.report.html import report_html

    prof = load_profile(DATA / "appverify" / "profile.toml")
    figs = collect_figures(prof, {})
    path = tmp_path / "app.html"
    path.write_text(report_html(prof, figs))
    dom = chromium(path.as_uri(), tmp_path, listener.port, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_errors(dom.stderr) == []
    section = dom.stdout.split('id="verify-app"', 1)[1]
    for spec in figs.by_probe[APP_PROBE]:
        m = re.search(rf'<figure id="fig-{APP_PROBE}-{spec.id}".*?</figure>', section, re.S)
        assert m and m.group(0).count("<path") >= 20, spec.id
    assert ">BETTER<" in section and ">BREAKS<" in section and "APP_WORK_SCALE" in section
    shot = tmp_path / "app.png"
    res = chromium(path.as_uri(), tmp_path, listener.port, f"--screenshot={shot}",
                   "--window-size=1200,2000")  # facts, then the first record's figure
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    img = imread(shot)[..., :3]
    colour = (img.max(axis=-1) - img.min(axis=-1)) > 0.25  # red and green dots (about 5000 px)
    assert colour.sum() > 2000, f"only {colour.sum()} pixels in colour: no dots drawn"
    assert listener.page_requests() == [], "the page made network requests"
