"""Progress of ``advisor probe``: a rich progress bar on a terminal, plain lines in a log.

When stderr is not a terminal (a batch job's log, ``advisor probe 2>log``), each step of each
probe is one line on stderr, with the seconds elapsed since the first probe began::

    advisor: [   0.0 s] host-buffer: checking
    advisor: [   0.4 s] host-buffer: measuring
    advisor: [  21.7 s] host-buffer: recommending
    advisor: [  21.8 s] host-buffer: done (21.8 s)

The step lines are ``advisor.runner.STEP_EVENTS``.  A probe's own progress messages in between
(a stage's name, ``round 3/12: on``: some probes send one per repeat) are written at most once
every ``HEARTBEAT_S`` seconds per probe, so a long measure step still shows it is alive without
flooding the log.  On a terminal the rich bar shows every message, as before.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable, Iterator, Optional

from advisor.cli.boundary import err

#: Most one line per this many seconds, per probe, for a probe's own messages in a log.  Chosen
#: so a log of a full probe (60-90 s on the reference VM) shows a few lines per probe.
HEARTBEAT_S = 10.0

Event = Callable[[str, str, Optional[float]], None]


class LogProgress:
    """``on_event`` for a non-terminal stderr: one line per step (see the module docstring).

    :param clock: seconds, monotonic (``time.monotonic``; a test may pass its own).
    :param write: where a line goes (``advisor.cli.boundary.err``).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 write: Callable[[str], None] = err) -> None:
        from advisor.runner import STEP_EVENTS

        self._steps = STEP_EVENTS
        self._clock = clock
        self._write = write
        self._t0 = clock()
        self._started: dict[str, float] = {}
        self._step: dict[str, str] = {}
        self._last: dict[str, float] = {}

    def __call__(self, name: str, message: str, fraction: Optional[float]) -> None:
        now = self._clock()
        _, _, recommending, done = self._steps
        # "done" ends the probe only after "recommending" (recommend always runs): a probe may
        # say "done" itself at the end of its measure step
        if message in self._steps and (message != done or self._step.get(name) == recommending):
            self._step[name] = message
            self._started.setdefault(name, now)
            if message == done:
                message = f"{done} ({now - self._started[name]:.1f} s)"
        elif now - self._last.get(name, -HEARTBEAT_S) < HEARTBEAT_S:
            return
        self._last[name] = now
        self._write(f"[{now - self._t0:6.1f} s] {name}: {message}")


@contextlib.contextmanager
def probe_progress() -> Iterator[Event]:
    """The ``on_event`` callback for ``run_probes``: a rich bar on a terminal, else
    :class:`LogProgress` lines on stderr."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield LogProgress()
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=console) as bar:
        tasks: dict[str, int] = {}

        def on_event(name: str, message: str, fraction: Optional[float]) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=1.0)
            bar.update(tasks[name], description=f"{name}: {message}",
                       completed=fraction if fraction is not None else None)

        yield on_event
