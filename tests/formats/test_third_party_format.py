"""A third-party format is emitted and then linted: the example plugin's ``dotenv`` (registered
with a ``parse``) through the CLI, with the repository's copy of the plugin on the path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.models import Setting
from advisor.save import save_profile
from support import sample_profile

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "advisor-example"


def run(*args):
    env = {**os.environ, "ADVISOR_DISABLE_PLUGINS": "example-broken",
           "PYTHONPATH": os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_dotenv_is_emitted_with_one_merged_list_line_and_linted(tmp_path, advisor_home):
    listed = run("emit", "--list")
    if "dotenv" not in listed.stdout:
        pytest.skip("example plugin not installed (make test installs it)")
    prof = sample_profile()
    res = prof.results[0]
    rec = res.recommendations[0]
    tunables = [Setting(library="glibc", name="GLIBC_TUNABLES", value=v, type="list",
                        separator=":")
                for v in ("glibc.malloc.hugetlb=1", "glibc.cpu.x86_non_temporal_threshold=0x100000")]
    recs = [rec.model_copy(update={"settings": rec.settings + tunables[:1]}),
            rec.model_copy(update={"id": "nt-threshold", "settings": tunables[1:]})]
    prof = prof.model_copy(update={"results": [res.model_copy(update={"recommendations": recs})]})
    path = save_profile(prof, tmp_path / "p.toml")

    out = tmp_path / "site.dotenv"
    emitted = run("emit", "-p", str(path), "-f", "dotenv", "-o", str(out))
    assert emitted.returncode == 0, emitted.stderr
    lines = [ln for ln in out.read_text().splitlines() if not ln.startswith("#")]
    assert lines == ["GLIBC_TUNABLES=glibc.malloc.hugetlb=1:"
                     "glibc.cpu.x86_non_temporal_threshold=0x100000",
                     "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=8192"]

    linted = run("lint", "--format", "dotenv", "--json", str(out))
    assert linted.returncode in (0, 1), linted.stderr  # 1: findings about this machine's libraries
    assert "lint: 2 variable(s) read" in linted.stderr
    findings = json.loads(linted.stdout)
    assert all(f["path"] == str(out) for f in findings)
    assert not [f for f in findings if f["id"] in ("unreadable", "unknown-name")], findings


def test_example_plugin_figure_is_its_measured_evidence():
    """The example probe measures for real (the shared harness, a short deadline) and its
    ``figures`` hook returns one spec whose bar is the stored median and CI."""
    import time

    sys.path.insert(0, str(EXAMPLE))
    try:
        from advisor_example import TimerProbe
    finally:
        sys.path.remove(str(EXAMPLE))
    from advisor.models import Facts
    from advisor.probe import MeasureContext

    probe = TimerProbe()
    evidence = probe.measure(MeasureContext(facts=Facts(), deadline=time.monotonic() + 2.0))
    (spec,) = probe.figures(evidence, Facts())
    st = evidence[0].series[0].points[0].stats
    (bar,) = spec.series
    assert (bar.y, bar.lo, bar.hi) == ([st.median], [st.ci_low], [st.ci_high])
    assert spec.y_unit == "s" and f"median of {st.n} samples" in spec.caption
    assert probe.figures([], Facts()) == []
