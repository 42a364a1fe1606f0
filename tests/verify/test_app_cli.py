"""advisor verify --app on the command line: bad input (one line, exit 2, the profile untouched),
the record stored in the profile, --json, and the exit code of a regression."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from support import SHIPPED_PROFILE

WORK = ("import os\n"
        "print('work=%.3f' % (100 * float(os.environ.get('APPV_WORK', '1'))))\n")


def _advisor(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ), cwd=cwd)


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "p.toml"
    path.write_bytes(SHIPPED_PROFILE.read_bytes())
    return path


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("args,needle", [
    (["--", "no-such-command-xyz"], "not found on PATH"),
    (["--", "./no/such/file"], "no such file"),
    (["--"], "empty command"),
    (["--", ""], "empty command"),
    (["--runs", "0", "--", sys.executable, "-c", "pass"], "--runs 0"),
    (["--metric", "never=([0-9]+)", "--higher-is-better", "--", sys.executable, "-c",
      "print('x')"], "--metric 'never=([0-9]+)' matches no number"),
    (["--metric", "([0-9", "--higher-is-better", "--", sys.executable, "-c", "pass"],
     "not a regular expression"),
    (["--metric", "x=([0-9]+)", "--", sys.executable, "-c", "pass"], "--higher-is-better"),
    (["--", sys.executable, "-c", "import sys; sys.exit(5)"], "fails in the baseline"),
    (["--quick", "--", sys.executable, "-c", "pass"], "not used with --app"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(profile, args, needle, advisor_home):
    before = _digest(profile)
    done = _advisor("verify", "--app", "--profile", str(profile), "--time-budget", "60", *args)
    assert done.returncode == 2, done.stderr
    assert needle in done.stderr
    assert "Traceback" not in done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("advisor: error:")]
    assert len(errors) == 1 and needle in errors[0], done.stderr
    assert done.stdout == ""
    assert _digest(profile) == before


def test_a_command_without_app_is_refused(profile):
    done = _advisor("verify", "--profile", str(profile), "--", "true")
    assert done.returncode == 2 and "only with --app" in done.stderr


def test_regression_exits_1_and_the_record_is_stored(profile, tmp_path):
    from advisor.profile import load_profile

    env = tmp_path / "slow.sh"
    env.write_text("export APPV_WORK=1.5\n")
    done = _advisor("verify", "--app", "--profile", str(profile), "--env", str(env), "--json",
                    "--runs", "6", "--metric", r"work=([0-9.]+)", "--lower-is-better", "--",
                    sys.executable, "-c", WORK)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["verdict"] == "regression" and data["kind"] == "app-verify"
    assert data["advised"] == {"APPV_WORK": "1.5"} and data["unset"] == ["APPV_WORK"]
    assert "REGRESSION" in done.stderr and "A/A floor" in done.stderr
    stored = load_profile(profile).app_verifications
    assert len(stored) == 1 and stored[0].verdict == "regression"
    assert stored[0].ratio == pytest.approx(1 / 1.5, rel=1e-3)
    assert [r.value for r in stored[0].runs if r.arm == "B" and r.phase == "compare"][0] == 150.0


def test_the_profile_env_against_a_shipped_profile_is_not_stored(advisor_home):
    done = _advisor("verify", "--app", "--profile", "@x86_64-icelake-2core-vm", "--runs", "5",
                    "--", sys.executable, "-c", "pass")
    assert done.returncode in (0, 1), done.stderr
    assert "GLIBC_TUNABLES" in done.stderr  # B is what emit writes for the profile
    assert "not stored" in done.stderr and done.stdout == ""
