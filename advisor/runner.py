"""Run the registered probes into a Profile, isolating faults and sharing one time budget.

Order per probe: ``check(facts)``; when usable, ``measure(ctx)``; always ``recommend(evidence,
facts)`` (see ``advisor.probe``).  Each step runs in a worker thread so that a probe that hangs
past its deadline (plus a grace period) is abandoned and recorded as ``failed``; the remaining
probes still run and the profile is still written.  Subprocesses started through the harness carry
their own timeouts and are killed with their process group.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Optional, Sequence

from advisor import __version__
from advisor.models import (Advice, Evidence, Facts, Finding, PluginResult, Profile,
                            Provenance)
from advisor.probe import Applicability, MeasureContext
from advisor.steps import StepTimeout, call_with_timeout

#: ``on_event(probe, message, fraction)``; fraction of that probe's work in [0, 1] or None.
EventCallback = Callable[[str, str, Optional[float]], None]

#: Default total budget of ``advisor probe`` in seconds, and with ``--quick``.  Chosen so a full
#: probe of the three built-ins fits a batch job's epilogue on the 2-core reference machine.
DEFAULT_BUDGET_S = 300.0
QUICK_BUDGET_S = 60.0

#: Extra time a step may run past its deadline before it is abandoned: the harness checks the
#: deadline between samples, so a well-behaved step overruns by at most one sample or launch.
GRACE_S = 15.0

#: Most seconds the next probe waits for an abandoned step to return once the processes it
#: started are killed.  A step blocked on a child it launched through the harness returns as
#: soon as the child dies: with the fault-hang test plugin it had always returned before the
#: next probe started.  This bounds the wait for one that unwinds more slowly; a step still
#: running after it is reported beside the next probes' measurements.
ABANDONED_JOIN_S = 1.0


def _children() -> set[int]:
    """PIDs of this process's live descendants (all generations)."""
    import psutil

    try:
        return {p.pid for p in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return set()


#: ``PR_SET_CHILD_SUBREAPER`` from <linux/prctl.h> (Linux >= 3.4, prctl(2)): orphaned
#: descendants are re-parented to this process instead of init, so they can still be found.
PR_SET_CHILD_SUBREAPER = 36


def _set_subreaper(on: bool) -> bool:
    """Make this process a child subreaper (Linux) so that a daemon a probe leaves behind (a
    double fork, a launcher's detached proxy) stays a descendant that ``_reap_new_children``
    finds.  Best effort: False where prctl is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap_new_children(before: set[int]) -> list[str]:
    """Kill (SIGKILL) descendants of this process that are not in ``before``: the processes an
    abandoned probe step started (the harness puts each job in its own session, so they would
    otherwise outlive ``advisor``) or a probe left running.  Zombies (orphans re-parented here
    that already ended) are only reaped.  Returns the names of the live processes killed."""
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
    psutil.wait_procs(procs, timeout=GRACE_S)
    return killed


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


#: Raw samples kept per point in a profile.  Statistics are computed by the harness on every
#: sample before this cut (``Stats.n`` counts them all); the profile keeps every k-th sample in
#: time order, so trends and spread stay visible.  Sized so that a full probe's profile (the
#: mpich-cma sweep alone takes ~80,000 latency and bandwidth samples here) stays small enough for
#: ``advisor emit`` to parse within its 0.3 s start-up target (tomllib reads ~6 MB/s here).
MAX_SAMPLES_PER_POINT = 48


def thin_evidence(ev: Evidence, limit: int = MAX_SAMPLES_PER_POINT) -> Evidence:
    """``ev`` with at most ``limit`` samples per point (every k-th, first kept); warm-up samples,
    statistics and values are kept whole.  ``recommend`` sees the thinned evidence, so advice
    re-derived from a stored profile matches the advice given at probe time."""
    if all(len(pt.samples) <= limit for s in ev.series for pt in s.points):
        return ev
    series = []
    for s in ev.series:
        points = []
        for pt in s.points:
            if len(pt.samples) > limit:
                step = -(-len(pt.samples) // limit)  # ceil
                pt = pt.model_copy(update={"samples": pt.samples[::step]})
            points.append(pt)
        series.append(s.model_copy(update={"points": points}))
    return ev.model_copy(update={"series": series})


def run_probe(
    name: str,
    probe: Any,
    plugin: str,
    facts: Facts,
    *,
    deadline: float,
    quick: bool = False,
    launcher: Optional[list[str]] = None,
    options: Optional[dict[str, str]] = None,
    on_event: Optional[EventCallback] = None,
    seed: int = 12345,
    abandoned: Optional[list[tuple[str, threading.Thread]]] = None,
) -> PluginResult:
    """Run one probe; never raises for the probe's own faults (they become ``failed``).

    A step abandoned at its deadline is appended to ``abandoned`` as ``(name, thread)`` when a
    list is given: ``run_probes`` uses it to flag later measurements taken beside it."""
    t0 = time.monotonic()
    findings: list = []
    evidence: list[Evidence] = []
    status = "ok"
    reason: Optional[str] = None

    def progress(message: str, fraction: Optional[float]) -> None:
        if on_event is not None:
            on_event(name, message, fraction)

    def remaining() -> float:
        return deadline - time.monotonic()

    before = _children()
    step = "check"
    try:
        app = call_with_timeout(lambda: probe.check(facts), max(remaining(), 0) + GRACE_S)
        if not isinstance(app, Applicability):
            raise TypeError(f"check() returned {type(app).__name__}, not Applicability")
        findings.extend(app.findings)
        evidence.extend(app.evidence)
        if not app.usable:
            status, reason = "not-applicable", app.reason or "not usable here"
        else:
            ctx = MeasureContext(facts=facts, deadline=deadline, quick=quick, launcher=launcher,
                                 options=dict(options or {}), progress=progress, seed=seed,
                                 applicability=app)
            progress("measuring", 0.0)
            step = "measure"
            measured = call_with_timeout(lambda: probe.measure(ctx), max(remaining(), 0) + GRACE_S)
            measured = list(measured or [])
            bad = [type(e).__name__ for e in measured if not isinstance(e, Evidence)]
            if bad:
                raise TypeError(f"measure() returned non-Evidence items: {', '.join(bad)}")
            evidence.extend(thin_evidence(e) for e in measured)
    except StepTimeout as exc:
        status, reason = "failed", f"{step}: exceeded its time budget: {exc}"
        if abandoned is not None and exc.thread is not None:
            abandoned.append((name, exc.thread))
        killed = _reap_new_children(before)
        if killed:
            reason += f"; {len(killed)} process(es) it started were killed"
    except Exception as exc:
        status, reason = "failed", f"{step}: {_why(exc)}"

    recs: list = []
    try:
        advice = call_with_timeout(lambda: probe.recommend(list(evidence), facts), GRACE_S)
        if not isinstance(advice, Advice):
            raise TypeError(f"recommend() returned {type(advice).__name__}, not Advice")
        findings.extend(advice.findings)
        recs = list(advice.recommendations)
    except StepTimeout as exc:
        _reap_new_children(before)
        if abandoned is not None and exc.thread is not None:
            abandoned.append((name, exc.thread))
        if status != "failed":
            status, reason = "failed", f"recommend: exceeded its time budget: {exc}"
    except Exception as exc:
        if status != "failed":
            status, reason = "failed", f"recommend: {_why(exc)}"
    left = _reap_new_children(before)
    if left:  # a well-behaved probe leaves nothing running: say what was left, and killed
        findings.append(Finding(
            id="advisor-leftover-processes", severity="warning",
            message=f"the probe left {len(left)} process(es) running "
                    f"({', '.join(sorted(set(left)))}); advisor killed them"))
    progress("done", 1.0)
    return PluginResult(plugin=plugin, probe=name, status=status, reason=reason,
                        duration_s=round(time.monotonic() - t0, 3), findings=findings,
                        recommendations=recs, evidence=evidence)


def _still_running(abandoned: list[tuple[str, threading.Thread]], before: set[int]) -> list[str]:
    """Names of probes whose abandoned step is still running after its processes were killed
    and it was given ``ABANDONED_JOIN_S`` to return."""
    alive = [(n, th) for n, th in abandoned if th.is_alive()]
    if not alive:
        return []
    _reap_new_children(before)
    end = time.monotonic() + ABANDONED_JOIN_S
    for _, th in alive:
        th.join(max(0.0, end - time.monotonic()))
    return sorted({n for n, th in alive if th.is_alive()})


def _beside_finding(names: list[str]) -> Finding:
    return Finding(
        id="advisor-abandoned-step-running", severity="warning",
        message=(f"measured while the abandoned step of {', '.join(names)} was still running "
                 "(it passed its deadline and did not stop); its load may have slowed these "
                 "measurements: probe this plugin again on its own (--plugin NAME)"))


def run_probes(
    probes: dict[str, Any],
    probe_plugin: dict[str, str],
    facts: Facts,
    *,
    time_budget_s: Optional[float] = None,
    quick: bool = False,
    launcher: Optional[list[str]] = None,
    options: Optional[dict[str, str]] = None,
    on_event: Optional[EventCallback] = None,
    command: str = "advisor probe",
    seed: int = 12345,
) -> Profile:
    """Run ``probes`` (name -> probe) in name order and return the Profile.

    The budget (seconds; default ``DEFAULT_BUDGET_S`` or ``QUICK_BUDGET_S``) is shared: each probe
    gets a slice of what is left, in proportion to its optional ``budget_weight`` attribute
    (default 1.0), so time a fast probe leaves unused goes to the next.

    A step abandoned at its deadline that is still running when a later probe starts (it
    ignores the deadline and started no process that could be killed) cannot be stopped from
    here: every later probe that measured something gets an ``advisor-abandoned-step-running``
    warning naming it, since its load may have slowed those measurements.

    Processes that probes started and left running (a step abandoned at its deadline, a daemon
    a probe forked off) are killed before the profile is returned, so none outlives ``advisor
    probe``; on Linux the run makes this process a child subreaper so orphans stay findable.

    A ``KeyboardInterrupt`` in the calling thread (SIGINT; the CLI raises it for SIGTERM and
    SIGHUP too) stops the run: the probes that completed keep their results, the running one and
    those not started are ``failed`` with the signal named, and the profile is still returned.
    """
    budget = time_budget_s if time_budget_s is not None else (
        QUICK_BUDGET_S if quick else DEFAULT_BUDGET_S)
    created = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    t0 = time.monotonic()
    end = t0 + budget
    names = sorted(probes)
    weights = {n: float(getattr(probes[n], "budget_weight", 1.0) or 1.0) for n in names}
    results: list[PluginResult] = []
    before = _children()
    subreaper = _set_subreaper(True)
    interrupted: Optional[str] = None
    abandoned: list[tuple[str, threading.Thread]] = []
    for i, name in enumerate(names):
        plugin = probe_plugin.get(name, "?")
        if interrupted is not None:
            results.append(PluginResult(plugin=plugin, probe=name, status="failed",
                                        reason=f"not run: advisor was interrupted ({interrupted})"))
            continue
        t_start = time.monotonic()
        try:
            left = max(0.0, end - time.monotonic())
            share = left * weights[name] / sum(weights[n] for n in names[i:])
            beside = _still_running(abandoned, before)
            res = run_probe(name, probes[name], plugin, facts,
                            deadline=time.monotonic() + share, quick=quick,
                            launcher=launcher, options=options, on_event=on_event,
                            seed=seed, abandoned=abandoned)
            if beside and res.evidence:
                res = res.model_copy(update={"findings": [*res.findings,
                                                          _beside_finding(beside)]})
            results.append(res)
        except KeyboardInterrupt as exc:
            # SIGINT, or SIGTERM/SIGHUP (a batch system's time limit) turned into
            # KeyboardInterrupt by the CLI: keep what completed, record the rest as failed
            interrupted = str(exc) or "SIGINT"
            results.append(PluginResult(
                plugin=plugin, probe=name, status="failed",
                reason=f"interrupted ({interrupted}) while running",
                duration_s=round(time.monotonic() - t_start, 3)))
    # a step abandoned at its deadline may still be running and may have started processes
    # since; none may outlive the run (well-behaved probes leave none: the harness reaps them)
    _reap_new_children(before)
    if subreaper:
        _set_subreaper(False)
    prov = Provenance(advisor_version=__version__, command=command, created=created,
                      duration_s=round(time.monotonic() - t0, 3),
                      hostname=facts.hostname or socket.gethostname())
    return Profile(provenance=prov, fingerprint=facts.fingerprint(), facts=facts, results=results)


def partial(profile: Profile) -> bool:
    """True when a probe failed: ``advisor probe`` then exits with ``EXIT_PARTIAL``."""
    return any(r.status == "failed" for r in profile.results)


def rerecommend(profile: Profile, probes: dict[str, Any]) -> Profile:
    """Re-derive advice from the recorded evidence with the installed probes (no measuring)."""
    out: list[PluginResult] = []
    for res in profile.results:
        probe = probes.get(res.probe)
        if probe is None:
            out.append(res)
            continue
        advice: Advice = probe.recommend(list(res.evidence), profile.facts)
        out.append(res.model_copy(update={"recommendations": advice.recommendations}))
    return profile.model_copy(update={"results": out})


__all__: Sequence[str] = ["run_probes", "run_probe", "partial", "rerecommend",
                          "DEFAULT_BUDGET_S", "QUICK_BUDGET_S"]
