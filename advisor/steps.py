"""The one executor of plugin code: probe and verify steps, fact detectors, pure plugin methods.

Plugin code may hang, call ``sys.exit``, return the wrong type, or leave processes behind; the
host must outlive all of it and say which step did what, in the same words whichever command ran
it.  Everything that runs plugin code goes through here:

* :func:`run_step` runs one callable in a daemon worker thread with a time limit and returns a
  :class:`StepOutcome` (never raises for the step's faults): its value, or one line saying what
  went wrong (``"<step>: <what>"``), with the result's type checked.
* :class:`StepRunner` (a context manager) adds the command's shared budget
  (:meth:`StepRunner.deadline`), deadlines with a grace period and reaping: on
  Linux it makes this process a child subreaper, kills the processes an abandoned step started,
  remembers abandoned threads (:meth:`StepRunner.still_running`) and, on exit, kills whatever
  the steps left running.  ``advisor.runner`` (probe) and ``advisor.verify`` (verify) use it;
  ``advisor.facts.run_extra`` uses :func:`run_step`.
* :meth:`StepRunner.call` runs a probe's pure methods, wherever a command calls them:
  ``recommend`` (``advisor probe``, ``advisor.runner.rerecommend``, the pooled class advice of
  ``advisor.fleet.pool``), ``lint`` (``advisor.lint``), ``headline`` (``advisor.fleet``) and
  ``figures`` (``advisor.report``): the same texts, with the time limit :data:`GRACE_S`.
* :func:`start_step` / :func:`call_with_timeout`: the raising form, for the host's own
  background work (``advisor emit`` overlaps fact detection with reading the profile).

Error texts (``StepOutcome.error``), ``<step>`` being ``check``, ``measure``, ``recommend``,
``verify``, ``lint``, ``headline``, ``figures`` or a detector's name:

* ``<step>: exceeded its time budget: did not return within T s`` (the thread is abandoned;
  ``; N process(es) it started were killed`` is appended when the runner killed some);
* ``<step>: SystemExit(3) raised by the plugin`` for a ``BaseException`` that is not an
  ``Exception`` (inside a worker thread it can only come from plugin code: a real Ctrl-C reaches
  the main thread);
* ``<step>: TypeError: <step>() returned str, not Applicability`` for a result of the wrong type;
* ``<step>: <ExceptionType>: <first line of its message>`` for any other exception;
* ``<step>: not run: an earlier call is still running past its time budget`` when
  :meth:`StepRunner.call` finds the same owner's step abandoned and still running in this
  process (a thread cannot be stopped: a fleet report of 10,000 nodes must not wait on a hung
  ``headline`` once per node, nor pile up threads).
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Literal, Optional

#: Extra seconds a step may run past its deadline before it is abandoned: the harness checks the
#: deadline between samples, so a well-behaved step overruns by at most one sample or launch.
GRACE_S = 15.0

#: Most seconds :meth:`StepRunner.still_running` waits for abandoned steps to return once the
#: processes they started are killed.  A step blocked on a child it launched through the harness
#: returns as soon as the child dies: with the fault-hang test plugin it had always returned
#: before the next probe started.  This bounds the wait for one that unwinds more slowly.
ABANDONED_JOIN_S = 1.0

#: ``PR_SET_CHILD_SUBREAPER`` from <linux/prctl.h> (Linux >= 3.4, prctl(2)): orphaned
#: descendants are re-parented to this process instead of init, so they can still be found.
PR_SET_CHILD_SUBREAPER = 36

StepKind = Literal["ok", "timeout", "aborted", "failed"]


class StepTimeout(Exception):
    """A step did not return within its time limit (raised by :func:`start_step`'s ``result``).

    Attributes:
        thread: the worker thread left running (a daemon), so the caller can tell whether the
            abandoned step is still running later; None when not known.
    """

    def __init__(self, message: str, thread: Optional[threading.Thread] = None):
        super().__init__(message)
        self.thread = thread


class StepAborted(Exception):
    """A step raised ``SystemExit``, ``KeyboardInterrupt`` or another ``BaseException`` that is
    not an ``Exception``: inside a worker thread it can only come from plugin code, so it fails
    that step instead of ending ``advisor``."""


@dataclass(frozen=True)
class StepOutcome:
    """What one step did.

    Attributes:
        step: the step's name (``check``, ``measure``, ``verify``, a detector's name).
        kind: ``ok``; ``timeout`` (abandoned at its limit); ``aborted`` (a ``BaseException``
            that is not an ``Exception``); ``failed`` (an exception or a wrong result type).
        value: what the step returned (``ok`` only; a list when ``each`` was given).
        error: one line ``"<step>: <what>"`` (module docstring), None when ``ok``.
        exc: the exception raised, when one was (``TypeError`` for a wrong result type).
        thread: the abandoned worker thread (``timeout`` only).
        killed: names of the processes the runner killed after this step was abandoned.
    """

    step: str
    kind: StepKind = "ok"
    value: Any = None
    error: Optional[str] = None
    exc: Optional[BaseException] = None
    thread: Optional[threading.Thread] = None
    killed: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def why(exc: BaseException) -> str:
    """``"Type: first line of the message"`` (``"Type"`` when the message is empty); for
    ``advisor.errors.BadInputError`` (the user's input, e.g. an ``--option`` value) the line
    alone: it names the input, and the type is no news to the user."""
    from advisor.errors import BadInputError

    lines = str(exc).strip().splitlines()
    if lines and isinstance(exc, BadInputError):
        return lines[0]
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def fault_text(step: str, exc: BaseException) -> str:
    """The one-line text of a step's fault: ``"<step>: Type: first line"`` (:func:`why`)."""
    return f"{step}: {why(exc)}"


def _seconds(t: Optional[float]) -> str:
    if t is None:
        return "?"
    return f"{t:.1f}" if t < 10 else f"{t:.0f}"


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
            raise StepTimeout(f"did not return within {_seconds(timeout_s)} s", th)
        if "error" in box:
            exc = box["error"]
            if not isinstance(exc, Exception):
                raise StepAborted(f"{type(exc).__name__}({exc}) raised by the plugin") from None
            raise exc
        return box.get("value")

    return result


def call_with_timeout(fn: Callable[[], Any], timeout_s: float) -> Any:
    """``fn()`` in a daemon worker thread; raises as :func:`start_step`'s ``result`` does."""
    return start_step(fn, name="advisor-step")(timeout_s)


def run_step(fn: Callable[[], Any], *, step: str, timeout_s: Optional[float],
             expect: Optional[type] = None, each: Optional[type] = None) -> StepOutcome:
    """Run ``fn()`` in a daemon worker thread for at most ``timeout_s`` seconds (None: no
    limit); never raises for the step's own faults (see the module docstring for the texts).

    :param step: the step's name, the first word of every error text.
    :param expect: the type the result must have (``ok`` only when it has it).
    :param each: the result is a sequence (None: empty) whose items must all be of this type;
        the outcome's ``value`` is then a list.
    """
    try:
        value = start_step(fn, name=f"advisor-{step}")(timeout_s)
    except StepTimeout as exc:
        return StepOutcome(step, "timeout", error=f"{step}: exceeded its time budget: {exc}",
                           exc=exc, thread=exc.thread)
    except StepAborted as exc:
        return StepOutcome(step, "aborted", error=f"{step}: {exc}", exc=exc)
    except Exception as exc:
        return StepOutcome(step, "failed", error=fault_text(step, exc), exc=exc)
    bad: Optional[str] = None
    if expect is not None and not isinstance(value, expect):
        bad = f"{step}() returned {type(value).__name__}, not {expect.__name__}"
    elif each is not None:
        try:
            value = list(value or [])
        except TypeError:
            bad = f"{step}() returned {type(value).__name__}, not a list of {each.__name__}"
        else:
            wrong = [type(v).__name__ for v in value if not isinstance(v, each)]
            if wrong:
                bad = f"{step}() returned non-{each.__name__} items: {', '.join(wrong)}"
    if bad is not None:
        exc = TypeError(bad)
        return StepOutcome(step, "failed", error=fault_text(step, exc), exc=exc)
    return StepOutcome(step, value=value)


def _children() -> set[int]:
    """PIDs of this process's live descendants (all generations)."""
    import psutil

    try:
        return {p.pid for p in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return set()


def _set_subreaper(on: bool) -> bool:
    """Make this process a child subreaper (Linux) so that a daemon a step leaves behind (a
    double fork, a launcher's detached proxy) stays a descendant that reaping finds.  Best
    effort: False where prctl is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_new_children(before: set[int], wait_s: float = GRACE_S) -> list[str]:
    """Kill (SIGKILL) descendants of this process whose PID is not in ``before``: the processes
    an abandoned step started (the harness puts each job in its own session, so they would
    otherwise outlive ``advisor``) or a step left running.  Zombies (orphans re-parented here
    that already ended) are only reaped.  Waits at most ``wait_s`` seconds for them to end.
    Returns the names of the live processes killed."""
    import psutil

    try:
        procs = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    except psutil.Error:
        return []
    killed = []
    for p in procs:
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                name = p.name()
                p.kill()
                killed.append(name)
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=wait_s)
    return killed


class StepRunner:
    """Runs the steps of one command (``advisor probe``, ``advisor verify``; the pure methods
    ``lint``, ``headline``, ``figures`` and ``recommend`` wherever called, :meth:`call`) and
    reaps after them.  Use as a context manager::

        with StepRunner() as steps:
            out = steps.run(lambda: probe.check(facts), step="check", owner="mpich-cma",
                            deadline=deadline, expect=Applicability)

    On entry it records this process's descendants and (Linux) becomes a child subreaper; on
    exit it kills every descendant started since (:func:`reap_new_children`) and stops being a
    subreaper.  Not thread-safe: one command's steps run one at a time.

    :param grace_s: seconds a step may run past its deadline, and the time limit of a pure
        method (:meth:`call`) (default :data:`GRACE_S`, read when the runner is made).
    :param reap: False: no subreaper and no killing (threads and deadlines only).
    :param budget_s: seconds the command's steps share (:meth:`deadline`), counted from when
        the runner is made; None: no shared budget.
    """

    #: ``(owner, step)`` -> thread of every pure call (:meth:`call`) abandoned in this process:
    #: one that is still running is not started again, by any runner.
    _hung: dict[tuple[str, str], threading.Thread] = {}

    def __init__(self, *, grace_s: Optional[float] = None, reap: bool = True,
                 budget_s: Optional[float] = None):
        self.grace_s = GRACE_S if grace_s is None else grace_s
        self.reaps = reap
        self.before: set[int] = set()
        #: ``(owner, thread)`` of every step abandoned at its limit, in order.
        self.abandoned: list[tuple[str, threading.Thread]] = []
        self._subreaper = False
        #: ``time.monotonic()`` value at which the shared budget ends (None: no budget).
        self.end = None if budget_s is None else time.monotonic() + budget_s

    def deadline(self, weight: float = 1.0, of: float = 1.0) -> Optional[float]:
        """The deadline (a ``time.monotonic()`` value) of the next step: ``weight / of`` of the
        budget still left, ``of`` being the summed weight of the steps still to run (itself
        included), so time a fast step leaves unused goes to the next.  None without a
        budget."""
        if self.end is None:
            return None
        now = time.monotonic()
        return now + max(0.0, self.end - now) * weight / (of or 1.0)

    def __enter__(self) -> "StepRunner":
        if self.reaps:
            self.before = _children()
            self._subreaper = _set_subreaper(True)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.reap()
        if self._subreaper:
            _set_subreaper(False)
            self._subreaper = False

    def run(self, fn: Callable[[], Any], *, step: str, owner: str = "",
            deadline: Optional[float] = None, timeout_s: Optional[float] = None,
            expect: Optional[type] = None, each: Optional[type] = None) -> StepOutcome:
        """Run one step (as :func:`run_step`) until ``deadline`` (a ``time.monotonic()`` value)
        plus ``grace_s``, or for ``timeout_s`` seconds when no deadline is given (neither: no
        limit).  When it is abandoned, its thread is recorded under ``owner`` and the processes
        started since the runner was entered are killed; the outcome's ``killed`` names them and
        its ``error`` ends ``; N process(es) it started were killed``."""
        if deadline is not None:
            timeout_s = max(0.0, deadline - time.monotonic()) + self.grace_s
        out = run_step(fn, step=step, timeout_s=timeout_s, expect=expect, each=each)
        if out.kind != "timeout":
            return out
        if out.thread is not None:
            self.abandoned.append((owner or step, out.thread))
        killed = tuple(self.reap())
        error = out.error
        if killed:
            error = f"{error}; {len(killed)} process(es) it started were killed"
        return StepOutcome(step, "timeout", error=error, exc=out.exc, thread=out.thread,
                           killed=killed)

    def call(self, fn: Callable[[], Any], *, step: str, owner: str,
             expect: Optional[type] = None, each: Optional[type] = None) -> StepOutcome:
        """Call one of a probe's pure methods (``recommend``, ``lint``, ``headline``,
        ``figures``) as :meth:`run` runs a step, with the time limit ``grace_s`` (what
        ``recommend`` gets in ``advisor probe``).  Never raises for the method's faults: the
        outcome's ``error`` is the one line of the module docstring.  When ``owner``'s
        ``step`` was abandoned earlier in this process and still runs, it is not called again
        (kind ``timeout``, ``<step>: not run: ...``)."""
        key = (owner, step)
        hung = self._hung.get(key)
        if hung is not None and hung.is_alive():
            return StepOutcome(step, "timeout", error=f"{step}: not run: an earlier call is "
                               "still running past its time budget", thread=hung)
        out = self.run(fn, step=step, owner=owner, timeout_s=self.grace_s, expect=expect,
                       each=each)
        if out.kind == "timeout" and out.thread is not None:
            self._hung[key] = out.thread
        return out

    def reap(self) -> list[str]:
        """Kill every descendant started since the runner was entered; their names (none when
        made with ``reap=False``)."""
        return reap_new_children(self.before, self.grace_s) if self.reaps else []

    def still_running(self) -> list[str]:
        """Owners of abandoned steps still running after the processes they started were killed
        and they were given :data:`ABANDONED_JOIN_S` seconds to return, sorted.  Such a step
        cannot be stopped from here; its load may slow what is measured beside it."""
        alive = [(n, th) for n, th in self.abandoned if th.is_alive()]
        if not alive:
            return []
        self.reap()
        end = time.monotonic() + ABANDONED_JOIN_S
        for _, th in alive:
            th.join(max(0.0, end - time.monotonic()))
        return sorted({n for n, th in alive if th.is_alive()})


__all__ = ["GRACE_S", "ABANDONED_JOIN_S", "StepAborted", "StepOutcome", "StepRunner",
           "StepTimeout", "call_with_timeout", "fault_text", "reap_new_children", "run_step",
           "start_step", "why"]
