"""One run of the user's command under an environment overlay, and what it measured.

The command is run as given (``argv``, no shell), in ``cwd``, with standard input closed, in a
new session whose whole process tree is killed at the timeout (``advisor.measure.launch``).
Its figure of merit is the wall time of the run, or a number taken from what it printed:

* ``metric``: a regular expression (``re.MULTILINE``) searched in stdout then stderr, and in the
  files matching ``metric_file`` written during the run; the **last** match counts (OSU, HPCG
  and most solvers print a table or a log whose last line is the final figure); the number is
  the first capture group, or the whole match when the pattern has no group;
* ``check``: a regular expression that must match somewhere in the same text, or the run failed.

A run fails on a non-zero exit, a signal, the timeout, a failed ``check``, or a missing or
non-positive metric; a failed run has no value (never a zero).
"""

from __future__ import annotations

import glob
import math
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

from advisor.errors import BadInputError
from advisor.measure.launch import LaunchError, run_command

#: Characters of a failed run's output kept for messages (display limit only).
TAIL_CHARS = 1200
#: Largest metric file read per run, bytes (a result file is a few KiB; a runaway log is not
#: read into memory).
MAX_METRIC_FILE_BYTES = 16 * 1024 * 1024

Overlay = Mapping[str, Optional[str]]


@dataclass(frozen=True)
class AppCommand:
    """The user's command and how to read its figure of merit.

    :ivar argv: the command, at least one word.
    :ivar metric: compiled ``--metric`` pattern, or None for the wall time.
    :ivar higher_is_better: orientation of ``metric`` (the wall time: False).
    :ivar check: compiled ``--check`` pattern, or None.
    :ivar metric_file: glob (relative to ``cwd``) of result files the command writes.
    :ivar cwd: working directory (None: the caller's).
    """

    argv: tuple[str, ...]
    metric: Optional[re.Pattern] = None
    higher_is_better: bool = False
    check: Optional[re.Pattern] = None
    metric_file: Optional[str] = None
    cwd: Optional[Path] = None

    @property
    def metric_name(self) -> str:
        return "wall time" if self.metric is None else self.metric.pattern

    @property
    def unit(self) -> str:
        return "s" if self.metric is None else "metric"


@dataclass(frozen=True)
class RunOutcome:
    """What one run gave: ``value`` (None when it failed), the wall time in seconds, the exit
    status (negative: the signal; None: timed out), why it failed, and the output's tail."""

    value: Optional[float]
    wall_s: float
    returncode: Optional[int]
    failure: Optional[str] = None
    tail: str = ""

    @property
    def ok(self) -> bool:
        return self.failure is None


def compile_pattern(option: str, text: Optional[str]) -> Optional[re.Pattern]:
    """``text`` compiled with ``re.MULTILINE``.

    :raises BadInputError: an empty or invalid expression (the option named)."""
    if text is None:
        return None
    if not text:
        raise BadInputError(f"{option}: empty regular expression")
    try:
        return re.compile(text, re.MULTILINE)
    except re.error as exc:
        raise BadInputError(f"{option} {text!r}: not a regular expression: {exc}") from None


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _file_text(cmd: AppCommand, since: float) -> str:
    """Text of the files matching ``metric_file`` modified at or after ``since`` (epoch s),
    oldest first (so the newest result's lines come last)."""
    if not cmd.metric_file:
        return ""
    base = Path(cmd.cwd) if cmd.cwd else Path.cwd()
    paths = [Path(p) for p in glob.glob(str(base / cmd.metric_file))]
    fresh = []
    for p in paths:
        try:
            st = p.stat()
        except OSError:
            continue
        if p.is_file() and st.st_mtime >= since - 1.0:  # mtime granularity of some filesystems
            fresh.append((st.st_mtime, p))
    out = []
    for _, p in sorted(fresh):
        try:
            with p.open("rb") as fh:
                out.append(fh.read(MAX_METRIC_FILE_BYTES).decode("utf-8", "replace"))
        except OSError:
            continue
    return "\n".join(out)


def read_metric(pattern: re.Pattern, text: str) -> Optional[float]:
    """The number of the last match of ``pattern`` in ``text`` (first group, else the whole
    match), or None when nothing matches or the match is not a finite number."""
    last = None
    for m in pattern.finditer(text):
        last = m
    if last is None:
        return None
    raw = last.group(1) if pattern.groups else last.group(0)
    try:
        value = float(raw.strip())
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def run_once(cmd: AppCommand, overlay: Overlay, *, timeout_s: float) -> RunOutcome:
    """Run ``cmd`` once with ``overlay`` applied to this process's environment (None removes a
    variable) and classify the result (module docstring).

    :raises BadInputError: the command cannot be started (not found, not executable).
    """
    start_wall = time.time()
    t0 = time.perf_counter()
    try:
        cp = run_command(list(cmd.argv), env=overlay, timeout_s=timeout_s, cwd=cmd.cwd)
    except LaunchError as exc:
        wall = time.perf_counter() - t0
        if exc.timed_out:
            tail = (exc.stdout + exc.stderr)[-TAIL_CHARS:]
            return RunOutcome(None, wall, None, f"timed out after {timeout_s:g} s", tail)
        raise BadInputError(f"command {cmd.argv[0]!r}: cannot be started: "
                            f"{str(exc).splitlines()[0].split(': ', 1)[-1]}") from None
    wall = time.perf_counter() - t0
    text = "\n".join((cp.stdout, cp.stderr, _file_text(cmd, start_wall)))
    tail = (cp.stdout + cp.stderr)[-TAIL_CHARS:]
    if cp.returncode < 0:
        return RunOutcome(None, wall, cp.returncode, f"killed by {_signal_name(-cp.returncode)}",
                          tail)
    if cp.returncode > 0:
        return RunOutcome(None, wall, cp.returncode, f"exit status {cp.returncode}", tail)
    if cmd.check is not None and not cmd.check.search(text):
        return RunOutcome(None, wall, 0, f"--check {cmd.check.pattern!r} did not match the "
                          "output", tail)
    if cmd.metric is None:
        return RunOutcome(wall, wall, 0, None, tail)
    value = read_metric(cmd.metric, text)
    if value is None:
        return RunOutcome(None, wall, 0, f"--metric {cmd.metric.pattern!r} found no number in "
                          "the output", tail)
    if value <= 0:
        return RunOutcome(None, wall, 0, f"--metric gave {value:g}: a ratio needs a positive "
                          "figure", tail)
    return RunOutcome(value, wall, 0, None, tail)


def describe_argv(argv: Sequence[str]) -> str:
    """The command as one shell-quoted line (for messages)."""
    import shlex

    return shlex.join(list(argv))


def environ_copy() -> dict[str, str]:
    """This process's environment (the base every arm's overlay applies to)."""
    return dict(os.environ)
