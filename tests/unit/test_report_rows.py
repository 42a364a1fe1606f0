"""``advisor show``'s evidence rows (advisor.report): artefact points keep their label, are
never shown as a bandwidth, and are marked; the CLI prints the same rows."""

from __future__ import annotations

from typer.testing import CliRunner

from advisor.cli import app
from advisor.measure import artefact_kind, checked_point, plausibility, summarize
from advisor.models import Evidence, PluginResult, Point, Series
from advisor.report.evidence import EVIDENCE_HEADERS, evidence_rows
from advisor.save import save_profile
from support import sample_profile

ZERO = "zero-page artefact: the source was never written"


def _profile():
    real = Point(x=1.0, label="random", samples=[12e9, 13e9], stats=summarize([12e9, 13e9]))
    untouched = Point(x=1.0, label="untouched", samples=[340e9, 350e9],
                      stats=summarize([340e9, 350e9]), artefact=ZERO)
    above = checked_point(Point(x=1.0, label="mapped", samples=[999e9],
                                stats=summarize([999e9])), 13e9)
    only = Point(x=2.0, label="untouched", samples=[777e9], stats=summarize([777e9]),
                 artefact=plausibility(777e9, 13e9, fill="untouched"))
    ev = Evidence(id="zero-page-memcpy", series=[
        Series(name="copy", unit="bytes/s", points=[real, untouched, above]),
        Series(name="only", unit="bytes/s", points=[only])], values={})
    res = PluginResult(plugin="host-buffer", probe="host-buffer", status="ok", evidence=[ev])
    return sample_profile(results=[res])


def test_artefact_points_are_marked_and_left_out_of_the_range():
    rows = evidence_rows(_profile())
    assert all(len(r) == len(EVIDENCE_HEADERS) for r in rows)
    copy = next(r for r in rows if r[2] == "copy")
    assert copy[4] == "12.5 GB/s .. 12.5 GB/s"  # the median of the one physical point
    assert "2 artefact(s)" in copy[6]
    assert "untouched (zero page)" in copy[6] and "mapped (above the copy ceiling)" in copy[6]
    only = next(r for r in rows if r[2] == "only")
    assert only[4] == "none (artefacts only)" and "1 artefact(s)" in only[6]
    text = " ".join(" ".join(r) for r in rows)
    for figure in ("3.4", "3.5", "9.99", "7.77", "777", "999", "345 GB/s", "1e+03 GB/s"):
        assert figure not in text


def test_artefact_kinds():
    assert artefact_kind("artefact: address aliasing: the same copy ran 1.6x") == "address aliasing"
    assert artefact_kind("artefact: first touch in the timed region: ...") == "first touch"
    assert artefact_kind("something odd") == "artefact"


def test_show_prints_the_marks(tmp_path):
    path = save_profile(_profile(), tmp_path / "p.toml")
    out = CliRunner().invoke(app, ["show", "-p", str(path)])
    assert out.exit_code == 0, out.output
    assert "artefact(s)" in out.output and "zero page" in out.output
    assert "7.77e+11" not in out.output and "3.45e+11" not in out.output
