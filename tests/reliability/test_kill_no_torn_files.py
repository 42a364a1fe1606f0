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

from advisor.profile import load_profile

from advisor.save import save_profile
from reliability_support import advisor_cmd, need_fault_plugins
from support import sample_profile

#: Kills per command: 2 x 50 = 100 SIGKILLs (the issue asks for 100).
KILLS_PER_COMMAND = 50
#: Kill delays are drawn in [0, DELAY_SPAN x one uninterrupted run], half of them in the last
#: 40 % of it where the write happens, so kills land before, during and after the write (the
#: run time is re-estimated as the test goes: see ``Killer``).
DELAY_SPAN = 1.1


def _env(value: str) -> dict:
    env = dict(os.environ)
    env.update({"ADVISOR_TEST_FAULTS": "ok", "ADVISOR_TEST_FAULT_VALUE": value,
                "ADVISOR_DISABLE_PLUGINS": "example-broken"})
    env.pop("ADVISOR_LAUNCHER", None)
    return env


class Killer:
    """Runs a command and SIGKILLs its process group after a random delay drawn from the
    command's run time, which it keeps estimating (machines here are shared and loaded: a fixed
    estimate would let every kill land before, or after, the write)."""

    def __init__(self, rng: random.Random, span_s: float) -> None:
        self.rng, self.span = rng, span_s

    def delay(self, i: int) -> float:
        if i % 2:  # half of the kills aimed at the end of the run, where the write happens
            return self.rng.uniform(0.6 * self.span, self.span * DELAY_SPAN)
        return self.rng.uniform(0.0, self.span * DELAY_SPAN)

    def run(self, argv, env, i: int) -> int | None:
        """Exit status when the command finished before its kill, else None."""
        delay = self.delay(i)
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = proc.wait(timeout=delay)
            self.span = 0.7 * self.span + 0.3 * (time.monotonic() - t0)
            return rc
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            if delay > self.span:  # it was still running: the run takes longer than thought
                self.span = delay * 1.1
            return None


def _run_to_end(argv, env) -> None:
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=120)


def _timed(argv, env) -> float:
    t0 = time.monotonic()
    subprocess.run(argv, env=env, check=False, capture_output=True, timeout=60)
    return time.monotonic() - t0


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
    killer = Killer(rng, _timed(advisor_cmd("probe", "--plugin", "fault-ok", "-o",
                                            str(tmp_path / "warm.toml")), _env("warm")))
    for i in range(KILLS_PER_COMMAND):
        rc = killer.run(advisor_cmd("probe", "--plugin", "fault-ok", "-o", str(target)),
                        _env(str(i)), i)
        now = target.read_bytes()
        if now == previous:
            outcomes["old"] += 1
            assert rc is None, f"probe run {i} finished (exit {rc}) but the file did not change"
        else:
            assert _setting_value(target) == str(i), f"probe run {i}: neither old nor new profile"
            outcomes["new"] += 1
        outcomes["kills"] += 1
        assert len(_stale(target)) <= 1, _stale(target)
        outcomes["mid_write"] += len(_stale(target))
        previous = now
    _run_to_end(advisor_cmd("probe", "--plugin", "fault-ok", "-o", str(target)), _env("end"))
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
    killer = Killer(rng, span)
    for i in range(KILLS_PER_COMMAND):
        new = expected[i % 2]
        killer.run(advisor_cmd("emit", "-p", str(sources[i % 2]), "-o", str(env_file)),
                   _env("x"), i)
        now = env_file.read_bytes()
        assert now in (previous, new), f"emit run {i}: torn file ({len(now)} bytes)"
        outcomes["new" if (now == new and new != previous) else "old"] += 1
        outcomes["kills"] += 1
        assert len(_stale(env_file)) <= 1, _stale(env_file)
        outcomes["mid_write"] += len(_stale(env_file))
        previous = now
    # a complete write after the kills leaves no temporary behind
    _run_to_end(advisor_cmd("emit", "-p", str(sources[0]), "-o", str(env_file)), _env("x"))
    assert _stale(env_file) == [] and env_file.read_bytes() == expected[0]


def test_kill_probe_and_emit_100_times(tmp_path):
    """Two lanes at once (probe, emit) on separate files, 50 kills each: 100 SIGKILLs."""
    from concurrent.futures import ThreadPoolExecutor

    need_fault_plugins()
    outcomes = {"probe": {"old": 0, "new": 0, "kills": 0, "mid_write": 0}, "emit": {"old": 0, "new": 0, "kills": 0, "mid_write": 0}}
    (tmp_path / "probe").mkdir()
    (tmp_path / "emit").mkdir()
    with ThreadPoolExecutor(2) as pool:
        futs = [pool.submit(_probe_lane, tmp_path / "probe", random.Random(1), outcomes["probe"]),
                pool.submit(_emit_lane, tmp_path / "emit", random.Random(2), outcomes["emit"])]
        for f in futs:
            f.result()
    print(f"kill outcomes: {outcomes}")  # shown with -s: how the kills fell
    assert sum(o["kills"] for o in outcomes.values()) == 2 * KILLS_PER_COMMAND
    # the kills must have hit both sides of the rename for the test to mean anything
    for lane, o in outcomes.items():
        assert o["old"] >= 5 and o["new"] >= 5, (lane, o)


#: Writer for the next test: rewrites the target with 32 MiB of one letter, alternating letters,
#: until it is killed; it prints READY once the module is imported.
WRITER = """
import sys
from advisor.save import atomic_write_text
path = sys.argv[1]
print("READY", flush=True)
i = 0
while True:
    atomic_write_text(path, "ab"[i % 2] * (32 << 20))
    i += 1
"""
#: SIGKILLs of the continuous writer (each lands mid-write most of the time: the loop spends
#: nearly all its time between mkstemp and rename).
WRITER_KILLS = 30


def test_kill_during_large_writes(tmp_path):
    """SIGKILL a process that does nothing but atomic writes: every kill lands while a write is
    in flight, and the target is always one complete version."""
    import sys

    rng = random.Random(3)
    target = tmp_path / "big.txt"
    target.write_text("a" * (32 << 20))
    complete = {"a" * (32 << 20), "b" * (32 << 20)}
    mid_write = 0
    for _ in range(WRITER_KILLS):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "READY"
        time.sleep(rng.uniform(0.0, 0.3))
        proc.kill()
        proc.wait()
        proc.stdout.close()
        assert target.read_text() in complete
        stale = _stale(target)
        assert len(stale) <= 1, stale
        mid_write += len(stale)
    print(f"writer kills: {WRITER_KILLS}, caught mid-write: {mid_write}")  # shown with -s
    # most kills must have caught a write in flight for this test to mean anything
    assert mid_write >= 2, mid_write
