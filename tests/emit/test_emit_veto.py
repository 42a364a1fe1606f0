"""verify feeds emit (issue 25, item 4; design: "advice refuted on this machine class is left
out, and says so").

A recommendation whose latest verdict on the profile's machine class is ``regression`` is not
emitted; the left-out block names it with the verdict's date and figures (env, lmod, toml,
and the rest through the same helper); ``--all`` writes it with a comment.  A verdict taken on
another machine class is stored as such, vetoes nothing, and ``advisor show`` says where it
came from.  The registry are the built-in ones, registered through the plugin hook.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib

import pytest
from emit_fixtures import standard_profile

from advisor.specs.selection import EmitOptions
from advisor.emit import left_out_notes, render
from advisor.models import Evidence, Verification
from advisor.emit.decide import select
from advisor.plugins import collect, make_plugin_manager

THRESHOLD = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"
#: The figures of the issue's first verdict (threshold 16 KiB, latency at 11 KiB).
FIGURES = dict(ratio=0.618, ci_low=0.615, ci_high=0.623, noise_floor=0.012)


def _regression(prof, cls=None, time="2026-12-01T10:00:00+00:00", key="mpich-cma:cma-threshold",
                verdict="regression"):
    cls = prof.facts.class_fingerprint() if cls is None else cls
    v = Verification(recommendation=key, verdict=verdict, time=time, class_fingerprint=cls,
                     evidence=[Evidence(id="cma-verify",
                                        values={"decided_by": "latency at 11264 bytes"})],
                     **FIGURES)
    return prof.model_copy(update={"verifications": [*prof.verifications, v]})


def assigned(text: str) -> bool:
    """The env format assigns the threshold (``NAME='v'; export NAME``)."""
    return any(ln.startswith(f"{THRESHOLD}=") for ln in text.splitlines())


REGISTRY = collect(make_plugin_manager(entry_points=False))


@pytest.fixture(scope="module")
def registry():
    return REGISTRY


def _sel(prof, opts, fmt):
    return select(prof, REGISTRY, opts, fmt)


@pytest.mark.parametrize("fmt", ["env", "lmod", "toml", "csh", "tcl", "json"])
def test_a_regression_is_not_emitted_and_the_left_out_block_names_it(registry, fmt):
    prof = _regression(standard_profile(hostile=False))
    text = render(prof, fmt, registry, EmitOptions())
    if fmt in ("toml", "json"):
        doc = json.loads(text) if fmt == "json" else tomllib.loads(text)
        assert THRESHOLD not in {s["name"] for s in doc["settings"]}
        (left,) = [x for x in doc["left_out"] if x["name"] == THRESHOLD]
        why = left["why"]
    else:
        lines = [ln for ln in text.splitlines() if THRESHOLD in ln]
        # no assignment: only the left-out comment (and a module's help text) names it
        assert lines and all("refuted by advisor verify" in ln for ln in lines), lines
        (why,) = [ln for ln in lines if "left out: " in ln]
    for part in ("refuted by advisor verify on 2026-12-01", "regression", "ratio 0.618",
                 "95 % CI [0.615, 0.623]", "A/A floor 0.012", "latency at 11264 bytes",
                 "--all writes it"):
        assert part in why, (part, why)
    # the other plugins' settings are still written
    assert "GLIBC_TUNABLES" in text


def test_all_writes_it_with_a_comment(registry):
    prof = _regression(standard_profile(hostile=False))
    text = render(prof, "env", registry, EmitOptions(include_defaults=True))
    assert assigned(text)
    assert any(ln.startswith("# written by --all although refuted by advisor verify")
               and THRESHOLD in ln for ln in text.splitlines())
    bare = render(prof, "env", registry, EmitOptions(include_defaults=True, comments=False))
    assert "written by --all although refuted" in bare  # said even without comments
    doc = json.loads(render(prof, "json", registry, EmitOptions(include_defaults=True)))
    (rec,) = [s for s in doc["settings"] if s["name"] == THRESHOLD]
    assert rec["verify"].startswith("written by --all although refuted")
    notes = [t for lvl, t in left_out_notes(_sel(prof, EmitOptions(include_defaults=True),
                                                 "env"),
                                            ("env",)) if lvl == "warning"]
    assert any("written by --all although" in t for t in notes)


def test_cli_notes_name_the_vetoed_recommendation():
    prof = _regression(standard_profile(hostile=False))
    notes = [t for lvl, t in left_out_notes(_sel(prof, EmitOptions(), "env"), ("env",))
             if lvl == "warning"]
    assert any(t.startswith("left out: mpich-cma/cma-threshold: refuted") for t in notes)


def test_a_verdict_from_another_class_vetoes_nothing_and_show_says_so(registry):
    from advisor.report.tables import show_report

    prof = _regression(standard_profile(hostile=False), cls="zen3-2c-8g-0badc0de")
    text = render(prof, "env", registry, EmitOptions())
    assert assigned(text) and "refuted" not in text
    rep = show_report(prof)
    assert rep.verifications.headers[-1] == "machine class"
    (row,) = rep.verifications.rows
    assert row[1] == "regression"
    assert row[-1] == "another: zen3-2c-8g-0badc0de (vetoes nothing)"
    # the same verdict on the profile's class: show says emit leaves it out
    here = _regression(standard_profile(hostile=False))
    assert show_report(here).verifications.rows[0][-1] == "the profile's; emit leaves it out"


def test_a_verdict_without_a_class_vetoes_nothing(registry):
    prof = standard_profile(hostile=False)
    v = Verification(recommendation="mpich-cma:cma-threshold", verdict="regression",
                     time="2026-12-01T10:00:00+00:00", **FIGURES)
    prof = prof.model_copy(update={"verifications": [v]})
    assert assigned(render(prof, "env", registry, EmitOptions()))


def test_the_latest_verdict_decides_and_a_joint_regression_vetoes(registry):
    prof = _regression(standard_profile(hostile=False))
    later = _regression(prof, time="2026-12-02T10:00:00+00:00", verdict="confirmed")
    # later confirmed replaces the older regression of the same key
    assert assigned(render(later, "env", registry, EmitOptions()))
    joint = _regression(standard_profile(hostile=False), key="mpich-cma:cma-threshold@joint")
    text = render(joint, "env", registry, EmitOptions())
    assert not assigned(text)
    assert "(joint emitted environment) on this machine class" in text


def test_emit_cli_leaves_it_out(tmp_path):
    """The real CLI on a profile file: stdout has no assignment, stderr warns."""
    from advisor.save import save_profile

    from support import sample_profile

    prof = _regression(sample_profile())
    path = tmp_path / "p.toml"
    save_profile(prof, path)
    run = subprocess.run([sys.executable, "-m", "advisor", "emit", "--profile", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert not assigned(run.stdout)
    assert f"# left out: {THRESHOLD}=8192 (refuted by advisor verify" in run.stdout
    assert "left out: mpich-cma/cma-threshold: refuted" in run.stderr
