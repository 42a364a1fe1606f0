"""Shipped profiles (advisor.shipped), the probe log lines (advisor.cli.progress.LogProgress)
and the ``probe --json`` summary (advisor.runner.summary): pure logic on the shipped data."""

from __future__ import annotations

import pytest

from advisor.errors import BadInputError
from support import REPO, SHIPPED_PROFILE


def test_every_shipped_profile_has_an_index_entry_and_provenance():
    from advisor.shipped import SHIPPED_DIR, list_shipped, shipped_names

    try:
        import tomllib
    except ModuleNotFoundError:
        import tomli as tomllib
    index = tomllib.loads((SHIPPED_DIR / "index.toml").read_text())["profiles"]
    assert sorted(index) == shipped_names()  # no entry without a file, no file without entry
    for s in list_shipped():
        assert s.path.is_file() and s.machine and s.how
        assert s.command.startswith("advisor probe") and s.created and s.advisor_version
        assert len(s.fingerprint) == 16 and s.probes


def test_the_repository_profiles_folder_still_holds_each_shipped_profile():
    from advisor.shipped import shipped_names, shipped_path

    for name in shipped_names():
        link = REPO / "profiles" / f"{name}.toml"
        assert link.resolve() == shipped_path(name).resolve(), link
    assert SHIPPED_PROFILE.resolve().parent.name == "shipped"


def test_unknown_shipped_name_is_one_line_naming_those_there_are():
    from advisor.shipped import shipped_names, shipped_path

    with pytest.raises(BadInputError) as exc:
        shipped_path("@no-such-machine")
    msg = str(exc.value)
    assert "no-such-machine" in msg and shipped_names()[0] in msg and "\n" not in msg


def test_profile_path_resolves_at_names_and_refuses_to_write_them(tmp_path):
    from advisor.cli.common import profile_path
    from advisor.shipped import shipped_names, shipped_path

    name = shipped_names()[0]
    assert profile_path(f"@{name}") == shipped_path(name)
    with pytest.raises(BadInputError, match="read-only"):
        profile_path(f"@{name}", write=True)
    assert profile_path(tmp_path / "@x") == tmp_path / "@x"  # a file of that name: ./@x


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_log_progress_writes_one_line_per_step_and_throttles_the_probes_own():
    from advisor.cli.progress import HEARTBEAT_S, LogProgress
    from advisor.runner import STEP_EVENTS

    clock, lines = Clock(), []
    log = LogProgress(clock=clock, write=lines.append)
    checking, measuring, recommending, done = STEP_EVENTS
    log("p", checking, 0.0)
    log("p", measuring, 0.0)
    for i in range(50):  # a probe that reports every repeat, 0.1 s apart
        clock.t += 0.1
        log("p", f"repeat {i}", None)
    clock.t += HEARTBEAT_S
    log("p", "repeat 50", None)
    log("p", done, 1.0)  # the probe's own "done" at the end of measure: not the end
    clock.t += 1.0
    log("p", recommending, None)
    log("p", done, 1.0)
    steps = [ln for ln in lines if not ln.split("] p: ")[1].startswith("repeat")]
    assert [ln.split("] p: ")[1] for ln in steps] == [
        checking, measuring, recommending, f"{done} (16.0 s)"]
    assert lines[0] == f"[{0.0:6.1f} s] p: {checking}"
    # the probe's own messages: at most one per HEARTBEAT_S (the 50 fast ones: none after the
    # step line; then one after the pause), and its early "done" was one of those
    own = [ln for ln in lines if ln not in steps]
    assert own == [f"[{15.0:6.1f} s] p: repeat 50"]


def test_probe_summary_counts_per_probe():
    from advisor.profile import load_profile
    from advisor.runner import summary

    prof = load_profile(SHIPPED_PROFILE)
    s = summary(prof, SHIPPED_PROFILE)
    assert s["profile"] == str(SHIPPED_PROFILE) and s["fingerprint"] == prof.fingerprint
    assert [p["probe"] for p in s["probes"]] == [r.probe for r in prof.results]
    for p, r in zip(s["probes"], prof.results):
        assert p["status"] == r.status and p["seconds"] == r.duration_s
        assert p["recommendations"] == len(r.recommendations)
        assert p["findings"] == len(r.findings) and p["evidence"] == len(r.evidence)
