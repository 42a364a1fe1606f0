"""Run a plugin-supplied step (probe step, fact detector) with a time limit, in a worker thread.

Plugin code may hang or call ``sys.exit``; the host must outlive both.  Used by ``advisor.runner``
for probe steps and by ``advisor.facts`` for plugin fact detectors.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional


class StepTimeout(Exception):
    """A step did not return within its time limit.

    Attributes:
        thread: the worker thread left running (a daemon), so the caller can tell whether the
            abandoned step is still running later; None when not known.
    """

    def __init__(self, message: str, thread: Optional[threading.Thread] = None):
        super().__init__(message)
        self.thread = thread


class StepAborted(Exception):
    """A probe step raised ``SystemExit``, ``KeyboardInterrupt`` or another ``BaseException``
    that is not an ``Exception``: inside a worker thread it can only come from the plugin (a real
    Ctrl-C reaches the main thread), so it fails that probe instead of ending ``advisor``."""


def start_step(fn: Callable[[], Any], *,
               name: str = "advisor-step") -> Callable[[Optional[float]], Any]:
    """Start ``fn()`` in a daemon worker thread now; returns ``result(timeout_s)``, which waits
    at most ``timeout_s`` seconds (None: until it returns) and returns its value.

    ``result`` raises ``StepTimeout`` when ``fn`` has not returned by then (the thread is
    abandoned), ``StepAborted`` for a ``BaseException`` that is not an ``Exception``
    (``SystemExit`` from plugin code), and re-raises any ``Exception`` ``fn`` raised.  Used to
    overlap slow detection (a subprocess) with other start-up work."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    th = threading.Thread(target=target, daemon=True, name=name)
    th.start()

    def result(timeout_s: Optional[float]) -> Any:
        th.join(None if timeout_s is None else max(0.0, timeout_s))
        if th.is_alive():
            raise StepTimeout(f"did not return within {timeout_s:.0f} s", th)
        if "error" in box:
            exc = box["error"]
            if not isinstance(exc, Exception):
                raise StepAborted(f"the probe raised {type(exc).__name__}({exc})") from None
            raise exc
        return box.get("value")

    return result


def call_with_timeout(fn: Callable[[], Any], timeout_s: float) -> Any:
    """``fn()`` in a daemon worker thread; raises ``StepTimeout`` when it has not returned within
    ``timeout_s`` seconds (the thread is abandoned), ``StepAborted`` for a ``BaseException`` that
    is not an ``Exception`` (``SystemExit`` from plugin code), and re-raises any ``Exception``."""
    return start_step(fn, name="advisor-probe-step")(timeout_s)
