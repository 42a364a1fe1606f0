"""The CLI end to end, as a user runs it: plugins, probe with a third-party plugin, emit -> bash."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from advisor.profile import load_profile, save_profile
from support import sample_profile, tool

ADVISOR = [sys.executable, "-m", "advisor"]


def run(*args, env=None, check=True, timeout=300):
    proc = subprocess.run([*ADVISOR, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"advisor {' '.join(args)} -> {proc.returncode}\n{proc.stderr}")
    return proc


def test_plugins_lists_builtins_and_example_and_reports_broken():
    rows = {r["name"]: r for r in json.loads(run("plugins", "--json").stdout)}
    expected = {"mpich-cma": ["mpich-cma"], "host-buffer": ["host-buffer"],
                "memory-pool": ["memory-pool-device", "memory-pool-host"]}
    for name, probes in expected.items():
        assert rows[name]["status"] == "ok" and rows[name]["probes"] == probes
    # knobs and fact detectors are shown too, per plugin
    assert "mpich:MPIR_CVAR_CH4_CMA_ENABLE" in rows["mpich-cma"]["knobs"]
    assert rows["mpich-cma"]["fact_detectors"] == ["mpich-cma"]
    assert "glibc:GLIBC_TUNABLES" in rows["host-buffer"]["knobs"]
    if "example" not in rows:
        pytest.skip("example plugins not installed (make test installs them)")
    assert rows["example"]["status"] == "ok"
    assert rows["example"]["probes"] == ["example-timer"]
    assert rows["example"]["emitters"] == ["dotenv"]
    broken = rows["example-broken"]
    assert broken["status"] == "error"
    assert "ModuleNotFoundError" in broken["errors"][0]


def test_disabled_plugin_is_listed_as_disabled():
    rows = {r["name"]: r for r in json.loads(
        run("plugins", "--json", env={"ADVISOR_DISABLE_PLUGINS": "host-buffer"}).stdout)}
    assert rows["host-buffer"]["status"] == "disabled"
    assert rows["host-buffer"]["probes"] == []


def test_third_party_plugin_contributes_to_a_probe(tmp_path, advisor_home):
    rows = {r["name"] for r in json.loads(run("plugins", "--json").stdout)}
    if "example" not in rows:
        pytest.skip("example plugins not installed (make test installs them)")
    out = tmp_path / "p.toml"
    proc = run("probe", "--plugin", "example-timer", "-o", str(out), "--time-budget", "20")
    assert proc.stdout.strip() == str(out)
    assert "example-broken" in proc.stderr  # reported, and the run went on
    prof = load_profile(out)
    (res,) = prof.results
    assert res.plugin == "example" and res.status == "ok"
    assert res.evidence[0].series[0].points[0].stats.n >= 20
    assert res.findings[0].id == "example-timer-cost"
    assert "perf_counter_resolution_s" in prof.facts.extra["example"]
    dotenv = run("emit", "--format", "dotenv", "--profile", str(out)).stdout
    assert dotenv.startswith("# hpc-advisor")


def test_unknown_plugin_is_bad_input(advisor_home):
    proc = run("probe", "--plugin", "no-such-probe", check=False)
    assert proc.returncode == 2
    assert "no probe or plugin named no-such-probe" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_emit_env_sourced_by_bash_sets_exactly_the_settings(tmp_path):
    bash = tool("bash")
    prof = sample_profile()
    path = save_profile(prof, tmp_path / "p.toml")
    proc = run("emit", "--format", "env", "--profile", str(path))
    script = tmp_path / "f.sh"
    script.write_text(proc.stdout)
    assert subprocess.run([bash, "-n", str(script)]).returncode == 0
    # stdout holds the file and nothing else: every line is a comment, blank or shell code
    dump = ("env -0 > before; . ./f.sh; env -0 > after")
    subprocess.run([bash, "--noprofile", "--norc", "-c", dump], cwd=tmp_path, check=True,
                   env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})

    def parse(name):
        items = (tmp_path / name).read_bytes().split(b"\0")
        return dict(i.split(b"=", 1) for i in items if i)

    before, after = parse("before"), parse("after")
    changed = {k: v for k, v in after.items() if before.get(k) != v and k != b"_"}
    expected = {s.name.encode(): str(s.value).encode() for _, _, s in prof.settings()}
    assert changed == expected


def test_emit_names_config_settings_a_format_cannot_carry(tmp_path):
    """The shipped profile has Umpire QuickPool arguments (kind "config"): env leaves them out
    and says which, toml writes them and says nothing about them."""
    from support import REPO

    shipped = REPO / "profiles" / "x86_64-icelake-2core-vm.toml"
    config = sorted({s.name for _, _, s in load_profile(shipped).settings(kinds=("config",))})
    assert config, "the shipped profile has config settings"
    env = run("emit", "--format", "env", "--profile", str(shipped))
    (note,) = [ln for ln in env.stderr.splitlines() if "of kind config" in ln]
    assert all(n in note for n in config) and "no env form" in note
    code = [ln for ln in env.stdout.splitlines() if ln.strip() and not ln.startswith("#")]
    assert not any(n in ln for n in config for ln in code)
    toml = run("emit", "--format", "toml", "--profile", str(shipped))
    assert "of kind config" not in toml.stderr
    assert all(n in toml.stdout for n in config)


def test_emit_to_unwritable_path_says_only_that(tmp_path):
    """The shipped profile's settings, with this machine's facts: the only line is the error
    (on another machine the other-machine warning would rightly come first)."""
    from support import profile_made_here

    here = profile_made_here(tmp_path / "here.toml")
    proc = run("emit", "--profile", str(here), "-o", "/proc/no-such-dir/site.sh", check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "advisor: error: /proc/no-such-dir/site.sh: cannot write here: No such file or directory"]


def test_emit_dash_is_stdout_and_symlinks_are_written_through(tmp_path):
    """'-o -' is standard output (as for lint), not a file named '-'; a symlinked module file
    (Lmod 'default' -> version file) keeps its link and the target gets the new text."""
    from support import REPO

    shipped = REPO / "profiles" / "x86_64-icelake-2core-vm.toml"
    proc = subprocess.run([*ADVISOR, "emit", "--profile", str(shipped), "-o", "-"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("# Generated by hpc-advisor")
    assert not (tmp_path / "-").exists()
    target = tmp_path / "1.0.lua"
    target.write_text("old\n")
    link = tmp_path / "default"
    link.symlink_to("1.0.lua")
    run("emit", "--format", "lmod", "--profile", str(shipped), "-o", str(link))
    assert link.is_symlink() and os.readlink(link) == "1.0.lua"
    assert target.read_text().startswith("-- Generated by hpc-advisor")


def test_emit_says_why_nothing_was_written():
    from support import REPO

    shipped = REPO / "profiles" / "x86_64-icelake-2core-vm.toml"
    proc = run("emit", "--profile", str(shipped), "--plugin", "memory-pool-device")
    assert "no settings to write" in proc.stderr and "no CUDA device" in proc.stderr


def test_plugin_that_did_not_load_is_named_with_its_error(advisor_home):
    """--plugin naming an installed plugin that failed to import says so, not 'no such
    plugin' (found by a plugin author's walkthrough)."""
    rows = {r["name"]: r for r in json.loads(run("plugins", "--json").stdout)}
    if "example-broken" not in rows:
        pytest.skip("the broken example plugin is not installed here")
    proc = run("probe", "--plugin", "example-broken", "-o", str(advisor_home / "p.toml"),
               check=False)
    assert proc.returncode == 2
    assert "plugin example-broken did not load (import)" in proc.stderr
    assert "advisor_dependency_that_does_not_exist" in proc.stderr


def test_unknown_probe_names_the_plugins_that_did_not_load(advisor_home):
    """A probe of a plugin that failed to import cannot be known; --plugin naming it says which
    plugin failed, with its error, on one line (issue 14)."""
    rows = {r["name"]: r for r in json.loads(run("plugins", "--json").stdout)}
    if "example-broken" not in rows:
        pytest.skip("the broken example plugin is not installed here")
    proc = run("probe", "--plugin", "example-broken-probe", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    [line] = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    assert "no probe or plugin named example-broken-probe" in line
    assert "example-broken (import: ModuleNotFoundError" in line
    assert "advisor_dependency_that_does_not_exist" in line


def test_probe_of_a_plugin_whose_registration_failed_is_named(tmp_path, advisor_home):
    """An installed plugin (a real distribution with an ``advisor`` entry point) whose
    ``advisor_register_probes`` raises after registering ``half-probe``: --plugin half-probe
    names the probe, its plugin and the error, on one line; the plugin shows as an error."""
    (tmp_path / "advisor_test_half.py").write_text(
        "from advisor import hookimpl\n\n\n"
        "@hookimpl\n"
        "def advisor_register_probes(register):\n"
        "    class Half:\n"
        "        name = 'half-probe'\n"
        "        description = 'registers, then its hook fails'\n"
        "        def check(self, facts): ...\n"
        "        def measure(self, ctx): ...\n"
        "        def recommend(self, evidence, facts): ...\n"
        "    register(Half())\n"
        "    raise RuntimeError('half-registered on purpose')\n")
    dist = tmp_path / "advisor_test_half-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: advisor-test-half\n"
                                   "Version: 0.1\n")
    (dist / "entry_points.txt").write_text("[advisor]\nhalf = advisor_test_half\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    rows = {r["name"]: r for r in json.loads(run("plugins", "--json", env=env).stdout)}
    assert rows["half"]["status"] == "error" and rows["half"]["probes"] == []
    assert "half-registered on purpose" in rows["half"]["errors"][0]
    proc = run("probe", "--plugin", "half-probe", env=env, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    [line] = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    assert ("probe half-probe of plugin half did not load (advisor_register_probes): "
            "RuntimeError: half-registered on purpose") in line


def test_verify_reports_a_joint_verdict_for_every_plugin(tmp_path, advisor_home):
    """``advisor verify`` of a full profile (the shipped Ice Lake profile with this machine's
    facts) measures the whole emitted environment through each plugin's own verify: one joint
    verdict per recommendation of every plugin that has one, stored and shown.  The verdicts
    depend on this machine; only their consistency with the CI and the exit code is checked."""
    from support import profile_made_here

    path = profile_made_here(tmp_path / "here.toml")
    with_recs = {r.probe for r in load_profile(path).results if r.recommendations}
    proc = run("verify", "--profile", str(path), "--quick", "--time-budget", "40", "--json",
               check=False)
    assert proc.returncode in (0, 1, 3), proc.stderr
    data = json.loads(proc.stdout)
    joint, alone = data["joint"], data["verifications"]
    assert {d["probe"] for d in joint} == with_recs
    assert [(d["probe"], d["recommendation"]) for d in joint] == [
        (d["probe"], d["recommendation"]) for d in alone]
    for d in joint:
        assert d["scope"] == "joint"
        assert d["verdict"] in ("confirmed", "no-effect", "regression", "not-measurable"), d
        if d["verdict"] == "not-measurable":
            assert d["note"] or d["error"], d
        if d["verdict"] == "confirmed":
            assert d["ci_low"] > 1, d
        if d["verdict"] == "regression":
            assert d["ci_high"] < 1, d
    bad = any(d["verdict"] == "regression" for d in alone + joint) or data["findings"]
    failed = any(d["error"] for d in alone + joint)
    assert proc.returncode == (1 if bad else 3 if failed else 0), proc.stderr
    assert "Joint verification" in proc.stderr
    stored = {v.recommendation for v in load_profile(path).verifications}
    assert {f"{d['probe']}:{d['recommendation']}@joint" for d in joint} <= stored
    shown = run("show", "--profile", str(path), env={"COLUMNS": "400"})  # no folded cells
    assert "@joint" in shown.stdout + shown.stderr


def test_show_prints_each_rationale_as_lines(tmp_path):
    """The rationale holds what a title cannot (per-size figures, what a stability share
    means): show prints it in full under the table, never folded into a cell."""
    prof = sample_profile()
    rec = prof.results[0].recommendations[0]
    long = ("Per size: 8 KiB: default x0.61, advice x1.00; 16 KiB: default x0.64, advice x1.00. "
            "Stability: the same advice in 97% of 200 bootstrap resamples.")
    res = prof.results[0].model_copy(update={"recommendations": [
        rec.model_copy(update={"rationale": long})]})
    path = save_profile(prof.model_copy(update={"results": [res]}), tmp_path / "p.toml")
    out = run("show", "--profile", str(path), env={"COLUMNS": "80"}).stdout
    assert "Why" in out
    assert f"mpich-cma: cma-threshold: {long}" in " ".join(out.split())
