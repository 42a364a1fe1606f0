"""``advisor show`` reads in one screen and ``advisor profiles list`` one line a profile (issue
27): the real CLI on every shipped profile, at the widths a person's terminal has; and the
pure helpers of ``advisor.report.brief`` that shorten the text."""

from __future__ import annotations

import re

import pytest
from report_support import run_advisor
from rich.cells import cell_len

from advisor.models import Setting
from advisor.profile import load_profile
from advisor.report.brief import (brief_show, clip, evidence_line, replaced, short_text,
                                  summarise_per_size)
from advisor.shipped import list_shipped, shipped_path

SHIPPED = [s.name for s in list_shipped()]
#: At most this many lines at 120 columns for a shipped profile (issue 27).
MAX_LINES = 60


def _whole(name: str, text: str) -> bool:
    """Whether ``name`` stands whole on one line of ``text`` (not inside a longer token)."""
    pat = re.compile(rf"(?<![\w.@-]){re.escape(name)}(?![\w.@-])")
    return any(pat.search(line) for line in text.splitlines())


@pytest.fixture(scope="module", params=SHIPPED)
def shipped(request):
    """(name, profile, ``show`` at 120 columns, ``show --details`` at 400 columns)."""
    name = request.param
    brief = run_advisor("show", "-p", f"@{name}", env_extra={"COLUMNS": "120"})
    assert brief.returncode == 0, brief.stderr
    full = run_advisor("show", "--details", "-p", f"@{name}", env_extra={"COLUMNS": "400"})
    assert full.returncode == 0, full.stderr
    return name, load_profile(shipped_path(name)), brief.stdout, full.stdout


def test_show_of_a_shipped_profile_fits_a_screen_and_names_every_setting(shipped):
    _name, prof, out, _full = shipped
    lines = out.splitlines()
    assert len(lines) <= MAX_LINES, out
    assert max(cell_len(line.rstrip()) for line in lines) <= 120, out
    names = {s.name for _r, _rec, s in prof.settings()}
    assert names and all(_whole(n, out) for n in names), [n for n in names if not _whole(n, out)]
    for rec in (rec for r in prof.results for rec in r.recommendations):
        assert re.search(rf"^\s+\d+ {re.escape(rec.id)}: ", out, re.M), rec.id  # one why each
        assert out.count(f" {rec.id}: ") == 1
    assert "Findings" in out and "Evidence" in out and "--details" in out
    severities = re.findall(r"^  \[(\w+)\] ", out.split("\nFindings\n")[1], re.M)
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


def test_show_speaks_human_units_not_raw_fields(shipped):
    _name, _prof, out, _full = shipped
    for raw in (".value=", "bytes/s", "kept_default", "=True", "=False"):
        assert raw not in out, raw
    assert re.search(r"\d(\.\d+)? GB/s", out) and re.search(r"\d(\.\d+)? [mµn]s\b", out)
    assert not re.search(r"\d{8,}\.\d", out)  # no raw float bandwidths or byte counts
    assert not re.search(r"(x\d\.\d\d \[[\d.]+, [\d.]+\] \w+; ){4}", out)  # lists summarised


def test_show_details_keeps_every_rationale_remedy_and_value(shipped):
    from advisor.specs.units import sizes_in_text

    _name, prof, _out, full = shipped
    flat = " ".join(full.split())
    for r in prof.results:
        for rec in r.recommendations:
            assert " ".join(sizes_in_text(rec.rationale).split()) in flat, rec.id
        for f in r.findings:
            assert not f.remedy or " ".join(f.remedy.split()) in flat
    assert "Evidence (artefact points" in full and "Probes" in full


def test_show_at_80_columns_never_splits_a_setting_name():
    name = SHIPPED[0]
    out = run_advisor("show", "-p", f"@{name}", env_extra={"COLUMNS": "80"}).stdout
    prof = load_profile(shipped_path(name))
    for _r, _rec, s in prof.settings():
        assert _whole(s.name, out), s.name
    for line in out.splitlines():  # longer than the terminal only for one unbreakable word
        assert cell_len(line) <= 80 or " " not in line.strip(), line


def test_profiles_list_is_one_line_a_profile_at_80_columns():
    res = run_advisor("profiles", "list", env_extra={"COLUMNS": "80"})
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == len(SHIPPED) + 1, res.stdout  # a header, then one line each
    assert all(cell_len(line) <= 80 for line in lines), res.stdout
    for name in SHIPPED:
        assert sum(bool(re.search(rf"(?<!\S)@{re.escape(name)}(?!\S)", ln)) for ln in lines) == 1
    details = run_advisor("profiles", "list", "--details", env_extra={"COLUMNS": "400"}).stdout
    assert "fingerprint" in details and "provenance" in details


def test_profiles_list_into_a_pipe_keeps_whole_lines():
    """A pipe or file has no width to cut to: each machine is read in full (a new user's
    finding: grep saw lines cut at 160 columns)."""
    from advisor.shipped import list_shipped

    res = run_advisor("profiles", "list", env_extra={"COLUMNS": ""})  # stdout is a pipe
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["--profile", "@NAME", "probed", "machine"]
    for s in list_shipped():
        (line,) = [ln for ln in lines if ln.startswith(f"@{s.name} ")]
        assert line.endswith(" ".join(s.machine.split())) and "…" not in line


def test_per_size_list_is_summarised_as_worst_and_counts():
    text = ("each path vs the default (ob1+sm+smsc/cma) per size (ratio > 1: better): ob1: "
            "4 KiB bandwidth x0.95 [0.95, 0.96] indistinguishable; 8 KiB bandwidth x0.86 "
            "[0.86, 0.87] worse; 4 KiB latency x0.38 [0.38, 0.38] worse | ucx: 4 KiB bandwidth "
            "x1.54 [1.53, 1.55] better; 8 KiB latency x0.59 [0.59, 0.59] worse")
    assert summarise_per_size(text) == (
        "each path vs the default per size: ob1 worse at 2/3, worst x0.38 (4 KiB latency); "
        "ucx better at 1/2, worse at 1/2, worst x0.59 (8 KiB latency)")
    # size then several metrics (mpich-cma's form)
    cma = ("CMA on vs off: sweep: 1 KiB: latency x0.59 [0.59, 0.60] worse, bandwidth x0.55 "
           "[0.55, 0.55] worse; 8 KiB: latency x1.48 [1.47, 1.49] better, bandwidth x1.01 "
           "[1.01, 1.02] better")
    assert summarise_per_size(cma) == ("CMA on vs off: sweep better at 2/4, worse at 2/4, "
                                       "worst x0.55 (1 KiB bandwidth)")
    short = "at 4 KiB bandwidth x1.33 [1.30, 1.36] better and is worse nowhere"
    assert summarise_per_size(short) == short


def test_short_text_and_clip_keep_words_whole():
    # a short first sentence takes the next one along; an aside explaining the ratio goes
    assert short_text("Buffers: base pages. Worst ratio of the default 1.00 over 27 measured message sizes (n; "
                      "what a ratio means here, long enough). Per size: 8192 bytes ...") == (
        "Buffers: base pages. Worst ratio of the default 1.00 over 27 measured message sizes.")
    long = "copies of 134217728 bytes run 1.38x slower than larger ones, which glibc copies "
    assert short_text(long + "with non-temporal stores. Set it.") == (
        "copies of 128 MiB run 1.38x slower than larger ones, which glibc copies with "
        "non-temporal stores.")
    assert clip("set OMPI_MCA_btl_sm_eager_limit=16384 now", 20) == "set …"
    assert clip("short", 20) == "short"


def test_replaced_is_short():
    def s(**kw):
        return Setting(**{"library": "glibc", "name": "X", "value": 1, "type": "int", **kw})

    assert replaced(s(default=1, is_default=True)) == "= default"
    assert replaced(s(type="bytes", value=2097152, default=16)) == "16 B"
    assert replaced(s(type="str", value="glibc.a=0x8", default="glibc.a=0xb5")) == "0xb5"
    assert replaced(s(default=None)) == ""


def test_evidence_values_with_a_unit_read_as_a_bandwidth():
    prof = load_profile(shipped_path(SHIPPED[0]))
    hb = next(r for r in prof.results if r.probe == "host-buffer")
    ev = next(e for e in hb.evidence if e.id == "reference-bandwidth")
    line = evidence_line("host-buffer", ev, 400)
    assert re.search(r"memcpy 256 MiB \d+(\.\d+)? GB/s \[", line), line
    rep = brief_show(prof)
    assert any(line.startswith("values recorded") for line in rep.evidence)


def test_the_probes_line_says_when_time_stopped_a_probe_measuring():
    """A new user saw why mpich-cma stopped measuring only under ``--details``: the Probes
    line says it for a probe whose evidence records ``stopped = "budget"`` (issue 25), and
    only for that one."""
    prof = load_profile(shipped_path(SHIPPED[0]))
    ok = [r for r in prof.results if r.status == "ok" and r.evidence]
    first, rest = ok[0], ok[1:]
    ev = first.evidence[0]
    cut = first.model_copy(update={"evidence": [
        ev.model_copy(update={"values": {**ev.values, "stopped": "budget"}}),
        *first.evidence[1:]]})
    plain = [r.model_copy(update={"evidence": [e.model_copy(update={"values": {
        k: v for k, v in e.values.items() if k != "stopped"}}) for e in r.evidence]})
        for r in rest]
    others = [r for r in prof.results if r not in ok]
    line = brief_show(prof.model_copy(update={"results": [cut, *plain, *others]})).probes
    assert (f"{first.probe} ok ({first.duration_s:.1f} s; measuring stopped by time, "
            "see --details)") in line
    assert line.count("measuring stopped by time") == 1
