"""``advisor check``: this node, measured briefly, against its class profile.

Steps, all bounded by ``quick_s`` (seconds of measurement, :data:`DEFAULT_QUICK_S`):

1. the class profile must carry the fleet bands (``Profile.fleet``, written by ``advisor
   fleet report``);
2. this node's facts: the fast detection (``advisor.facts.detect_fingerprint_facts``, about
   0.05 s here) when it can identify the class's MPI (``fast_detection_sees_mpi``), else the
   full one without OpenCL; compared by ``advisor.machine_class.class_differences``;
3. per probe with a banded headline figure: its optional ``measure_headline(ctx, recorded)``
   (``advisor.specs.headline``) with ``recorded`` the class profile's evidence of that probe,
   through ``advisor.steps.StepRunner`` (step ``measure``: a hang, a raise or an exit is one
   failed line, never a crash), read by ``advisor.fleet.headline.headlines_of`` exactly as the
   fleet report read the nodes' full probes;
4. a figure outside its band is measured once more (its probe only, with a fresh ``quick_s``):
   a drift is reported only when both measurements lie outside, and the figure keeps the one
   nearer the class median.  A single short copy on a shared node ranged 0.6-2.9x of the class
   median under load here (tests/fleet/test_reframe_run.py), so one stray sample must not drain
   a healthy node; a node really slowed is outside both times (a 5 % CPU quota: 0.27 GB/s
   against a band from 8.2 GB/s);
5. :func:`advisor.fleet.check.verdict`.

A probe that is not installed here, or has no ``measure_headline``, is listed in ``skipped``.

Public API: :func:`run_check`, :func:`node_name`, :data:`DEFAULT_QUICK_S`.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any, Mapping, Optional

from advisor.errors import BadInputError
from advisor.fleet.check import CheckResult, verdict

__all__ = ["DEFAULT_QUICK_S", "run_check", "node_name"]

#: Most seconds the short measurement may take: a bound, not its length.  The host-buffer
#: headline (one fresh process, one 256 MiB random-filled buffer pair, six copies) takes about
#: 2 s on the idle 2-core VM and 3-4 s with its two cores loaded 2.5 times over (load
#: average 5.5, other test runs); 8 s leaves room for that, so that a busy node is not called
#: drifted for being slow to start, while a hung measurement still ends the check.
DEFAULT_QUICK_S = 8.0


def node_name() -> str:
    """``$SLURMD_NODENAME``, else the host name up to its first dot (as ``advisor fleet``)."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def _why(done: Any, faults: list, quick_s: float) -> str:
    """Why a figure was not measured, in one short line: a node health checker makes it the
    node's drain reason, so no worker command line (seen: a timed-out worker's JSON argument)."""
    from advisor.fleet.summary import one_line

    if done.ok:
        return one_line(faults[0], 160) if faults else "the short measurement gave no value"
    if done.kind == "timeout" or "timed out" in (done.error or ""):
        return f"the short measurement did not end within --quick-s {quick_s:g} s"
    return one_line(done.error or done.kind, 160)


def _ok(fig: str, value: float, band: Any) -> bool:
    from advisor.fleet.check import FigureCheck

    return FigureCheck(fig, value, band.low, band.high, band.median, band.unit).ok


def _facts_here(recorded: Any):
    from advisor import facts

    if facts.fast_detection_sees_mpi(recorded):
        return facts.detect_fingerprint_facts()
    return facts.detect(opencl=False)


def run_check(profile: Any, *, source: str = "<profile>", quick_s: float = DEFAULT_QUICK_S,
              probes: Optional[Mapping[str, Any]] = None, node_facts: Any = None,
              measure: bool = True, seed: int = 12345) -> CheckResult:
    """Check this node against the class profile ``profile`` (an ``advisor.models.Profile``
    read from ``source``).

    :param quick_s: seconds one round of measurements may take (> 0); a figure outside its
        band gets a second round (step 4 of the module docstring).
    :param probes: probe name -> probe (default: the installed plugins).
    :param node_facts: this node's ``Facts`` (default: detected, see the module docstring).
    :param measure: False: the class facts only, no measurement (for a node running jobs).
    :raises BadInputError: the profile has no ``[fleet]`` bands, or none of its banded figures
        can be measured here (no installed probe offers ``measure_headline``).
    """
    from advisor.fleet.headline import headlines_of
    from advisor.machine_class import class_differences
    from advisor.models import Evidence
    from advisor.probe import MeasureContext
    from advisor.steps import StepRunner

    t0 = time.monotonic()
    fleet = profile.fleet
    if fleet is None or not fleet.headlines:
        raise BadInputError(f"{source}: no [fleet.headlines] table: not a class profile of "
                            "'advisor fleet report' (DIR/classes/<class>.toml)")
    here = node_facts if node_facts is not None else _facts_here(profile.facts)
    differences = class_differences(profile.facts, here)
    if not measure:
        return verdict(node_name(), differences, {}, fleet.headlines,
                       took_s=time.monotonic() - t0)
    if probes is None:  # only the plugins of the banded probes: loading all took 1.0 s here
        from advisor.plugins import load

        wanted = {f.partition(":")[0] for f in fleet.headlines}
        probes = load(only_plugins={r.plugin for r in profile.results
                                    if r.probe in wanted}).probes
    by_probe: dict[str, list[str]] = {}
    for fig in fleet.headlines:
        by_probe.setdefault(fig.partition(":")[0], []).append(fig)
    runnable = {p: figs for p, figs in by_probe.items()
                if p in probes and callable(getattr(probes[p], "measure_headline", None))}
    skipped = sorted(f for p, figs in by_probe.items() if p not in runnable for f in figs)
    if not runnable:
        raise BadInputError(f"{source}: none of its headline figures ({', '.join(skipped)}) can "
                            "be measured here: no installed probe offers a short measurement")
    measured: dict[str, float] = {}
    failed: list[str] = []

    def measure_all(todo: Mapping[str, list[str]], attempt: int) -> None:
        deadline = time.monotonic() + quick_s
        for name, figs in sorted(todo.items()):
            probe = probes[name]
            recorded = [e for r in profile.results if r.probe == name for e in r.evidence]
            ctx = MeasureContext(facts=here, deadline=deadline, quick=True, seed=seed + attempt)
            done = runner.run(lambda: probe.measure_headline(ctx, recorded), step="measure",
                              owner=name, deadline=deadline, each=Evidence)
            faults: list[str] = []
            got = headlines_of(probe, done.value, faults=faults) if done.ok else {}
            for fig in figs:
                value = got.get(fig.partition(":")[2])
                band = fleet.headlines[fig]
                if value is not None and (fig not in measured or abs(value - band.median)
                                          < abs(measured[fig] - band.median)):
                    measured[fig] = value
                elif value is None and not attempt:
                    failed.append(f"{fig}: not measured ({_why(done, faults, quick_s)})")

    with StepRunner() as runner:
        measure_all(runnable, 0)
        outside = {p: [f for f in figs if f in measured and not _ok(f, measured[f],
                                                                    fleet.headlines[f])]
                   for p, figs in runnable.items()}
        if any(outside.values()):  # step 4 of the module docstring
            measure_all({p: figs for p, figs in outside.items() if figs}, 1)
    return verdict(node_name(), differences, measured, fleet.headlines, failed=failed,
                   skipped=skipped, took_s=time.monotonic() - t0)
