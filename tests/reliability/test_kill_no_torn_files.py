"""No torn files: ``advisor probe -o`` and ``advisor emit -o`` SIGKILLed at random points leave
either the previous file or the complete new one, and at most one stale temporary (the next
write removes it)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

from advisor.profile import load_profile, save_profile
from reliability_support import advisor_cmd, need_fault_plugins
from support import sample_profile

#: Kills per command: 2 x 50 = 100 SIGKILLs (the issue asks for 100).
KILLS_PER_COMMAND = 50
#: Kill delays are drawn in [0, DELAY_SPAN x one uninterrupted run], half of them in the last
#: 40 % of it where the write happens, so kills land before, during and after the write.
DELAY_SPAN = 1.1


def _env(value: str) -> dict:
    env = dict(os.environ)
    env.update({"ADVISOR_TEST_FAULTS": "ok", "ADVISOR_TEST_FAULT_VALUE": value,
                "ADVISOR_DISABLE_PLUGINS": "example-broken"})
    env.pop("ADVISOR_LAUNCHER", None)
    return env


def _run_and_kill(argv, env, delay: float) -> int | None:
    """Start ``argv`` in its own process group, SIGKILL the group after ``delay`` seconds.
    Returns the exit status when it finished first, else None."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        return proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        return None


def _timed(argv, env) -> float:
    t0 = time.monotonic()
    subprocess.run(argv, env=env, check=False, capture_output=True, timeout=60)
    return time.monotonic() - t0


def _delays(rng: random.Random, span: float, n: int) -> list[float]:
    early = [rng.uniform(0.0, span * DELAY_SPAN) for _ in range(n - n // 2)]
    late = [rng.uniform(0.6 * span, span * DELAY_SPAN) for _ in range(n // 2)]
    out = early + late
    rng.shuffle(out)
    return out


def _stale(target: Path) -> list[str]:
    return [p.name for p in target.parent.iterdir()
            if p.name.startswith(f".{target.name}.") and p.name.endswith(".tmp")]


def _setting_value(path: Path) -> str:
    prof = load_profile(path)
    (res,) = prof.results
    return str(res.recommendations[0].settings[0].value)


def _probe_lane(tmp_path: Path, rng: random.Random, outcomes: dict) -> None:
    """``advisor probe -o``: run ``i`` writes a profile whose setting value is ``i``."""
    target = tmp_path / "profile.toml"
    save_profile(sample_profile(), target)
    previous = target.read_bytes()
    span = _timed(advisor_cmd("probe", "--plugin", "fault-ok", "-o", str(tmp_path / "warm.toml")),
                  _env("warm"))
    for i, delay in enumerate(_delays(rng, span, KILLS_PER_COMMAND)):
        rc = _run_and_kill(advisor_cmd("probe", "--plugin", "fault-ok", "-o", str(target)),
                           _env(str(i)), delay)
        now = target.read_bytes()
        if now == previous:
            outcomes["old"] += 1
            assert rc is None, f"probe run {i} finished (exit {rc}) but the file did not change"
        else:
            assert _setting_value(target) == str(i), f"probe run {i}: neither old nor new profile"
            outcomes["new"] += 1
        outcomes["kills"] += 1
        assert len(_stale(target)) <= 1, _stale(target)
        previous = now
    _run_and_kill(advisor_cmd("probe", "--plugin", "fault-ok", "-o", str(target)), _env("end"), 60)
    assert _stale(target) == [] and _setting_value(target) == "end"


def _emit_lane(tmp_path: Path, rng: random.Random, outcomes: dict) -> None:
    """``advisor emit -o``: alternate between two profiles, so each complete file is known."""
    sources = []
    for name in ("a", "b"):
        src = tmp_path / f"{name}.toml"
        save_profile(sample_profile(fingerprint=name * 16), src)
        sources.append(src)
    env_file = tmp_path / "site.sh"
    expected = []
    for src in sources:
        t0 = time.monotonic()
        subprocess.run(advisor_cmd("emit", "-p", str(src), "-o", str(env_file)), env=_env("x"),
                       check=True, capture_output=True, timeout=60)
        span = time.monotonic() - t0
        expected.append(env_file.read_bytes())
    assert expected[0] != expected[1]
    previous = env_file.read_bytes()
    for i, delay in enumerate(_delays(rng, span, KILLS_PER_COMMAND)):
        new = expected[i % 2]
        _run_and_kill(advisor_cmd("emit", "-p", str(sources[i % 2]), "-o", str(env_file)),
                      _env("x"), delay)
        now = env_file.read_bytes()
        assert now in (previous, new), f"emit run {i}: torn file ({len(now)} bytes)"
        outcomes["new" if (now == new and new != previous) else "old"] += 1
        outcomes["kills"] += 1
        assert len(_stale(env_file)) <= 1, _stale(env_file)
        previous = now
    # a complete write after the kills leaves no temporary behind
    _run_and_kill(advisor_cmd("emit", "-p", str(sources[0]), "-o", str(env_file)), _env("x"), 60)
    assert _stale(env_file) == [] and env_file.read_bytes() == expected[0]


def test_kill_probe_and_emit_100_times(tmp_path):
    """Two lanes at once (probe, emit) on separate files, 50 kills each: 100 SIGKILLs."""
    from concurrent.futures import ThreadPoolExecutor

    need_fault_plugins()
    outcomes = {"probe": {"old": 0, "new": 0, "kills": 0}, "emit": {"old": 0, "new": 0, "kills": 0}}
    (tmp_path / "probe").mkdir()
    (tmp_path / "emit").mkdir()
    with ThreadPoolExecutor(2) as pool:
        futs = [pool.submit(_probe_lane, tmp_path / "probe", random.Random(1), outcomes["probe"]),
                pool.submit(_emit_lane, tmp_path / "emit", random.Random(2), outcomes["emit"])]
        for f in futs:
            f.result()
    assert sum(o["kills"] for o in outcomes.values()) == 2 * KILLS_PER_COMMAND
    # the kills must have hit both sides of the rename for the test to mean anything
    for lane, o in outcomes.items():
        assert o["old"] >= 5 and o["new"] >= 5, (lane, o)
