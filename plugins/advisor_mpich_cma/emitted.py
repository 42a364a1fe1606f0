"""Measure what you emit (issue 25 item 7): does the threshold advised, in the form ``emit``
writes it, route messages the way the decision assumed?

The decision (``advisor_mpich_cma.minimax``) scores a threshold ``T`` as "messages of ``T``
bytes and more use CMA, smaller ones the copy path", from rounds that wrote the threshold
through MPI_T (or set the forced on / off extremes in the environment).  ``emit`` writes ``T``
into the environment (``MPIR_CVAR_CH4_CMA_ENABLE=1`` and the threshold CVAR).  Whether the
library compares with ``>=`` or ``>``, and whether the environment form acts like the run-time
one, is what this check shows at the one decisive point: fresh launches with the emitted
environment, one exchanging a message of exactly ``T`` bytes, one of ``T - 1`` bytes, and a
third of 1 byte for the baseline, under ``strace -f -c`` counting
``process_vm_readv``/``process_vm_writev`` (the CMA path's system calls).  MPICH makes some at
init whatever the messages (its CMA check: measured 8 readv, 4 of them failing, and 4 writev
on the 5.0.2 wheel), so the baseline launch's count is subtracted.  It behaves as measured when
the ``T``-byte launch makes more calls than the baseline and the ``T - 1``-byte one no more.

Evidence ``cma-emitted-route``: values ``threshold_bytes``, ``calls_at``, ``calls_below``,
``calls_baseline`` (counts, -1 when not counted), ``checked`` (bool), ``behaves`` (bool, only
when checked), ``why``.  Where ``strace`` is missing or cannot trace here, ``checked`` is False and the
advice stands with that said (``recommend``); where it misbehaves, ``recommend`` withdraws the
threshold advice (``cma-emitted-form-differs``).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from advisor.models import Evidence, Finding, MpiFacts

if TYPE_CHECKING:  # pragma: no cover
    from advisor.probe import MeasureContext

EMITTED = "cma-emitted-route"
#: The CMA path's system calls (process_vm_readv(2); MPICH's CMA reads the peer's buffer).
SYSCALLS = ("process_vm_readv", "process_vm_writev")


def count_calls(strace_summary: str) -> int:
    """Calls of ``SYSCALLS`` in a ``strace -c`` summary table (0 when none is listed).

    :raises ValueError: the text holds no strace summary table.
    """
    if "syscall" not in strace_summary:
        raise ValueError("no strace -c summary in the output")
    total = 0
    for line in strace_summary.splitlines():
        parts = line.split()
        # columns: % time, seconds, usecs/call, calls, [errors,] syscall
        if len(parts) >= 5 and parts[-1] in SYSCALLS and parts[3].isdigit():
            total += int(parts[3])
    return total


def route_ok(threshold: int, calls_at: int, calls_below: int,
             calls_baseline: int = 0) -> tuple[bool, str]:
    """``(behaves, why)``: CMA calls beyond the baseline launch's at ``threshold`` bytes and
    none beyond it one byte below (pure; counts of ``SYSCALLS`` per launch)."""
    calls_at, calls_below = calls_at - calls_baseline, calls_below - calls_baseline
    if calls_at > 0 and calls_below <= 0:
        return True, (f"with the emitted threshold {threshold}, a {threshold}-byte message took "
                      f"the CMA path ({calls_at} process_vm_readv/writev calls beyond MPI "
                      f"init's) and a {threshold - 1}-byte one the copy path (none), as "
                      f"measured")
    if calls_at <= 0:
        return False, (f"with the emitted threshold {threshold} in the environment, a "
                       f"{threshold}-byte message made no process_vm_readv/writev call: the "
                       f"library does not send messages of the threshold itself by CMA in this "
                       f"form (it may compare with '>' or ignore the variable)")
    return False, (f"with the emitted threshold {threshold}, a {threshold - 1}-byte message "
                   f"made {calls_below} process_vm_readv/writev calls: messages below the "
                   f"threshold took the CMA path")


def run_route_check(ctx: "MeasureContext", mpi: MpiFacts, threshold: int) -> Evidence:
    """The three traced launches (module docstring) -> ``cma-emitted-route`` evidence.  Never
    raises for a missing or failing ``strace``: the evidence says why nothing was counted."""
    from advisor.measure import LaunchError, resolve_launcher, run_command
    from advisor.measure.launch import python_argv

    from advisor_mpich_cma.launch import config_env
    from advisor_mpich_cma.evidence import ON
    from advisor_mpich_cma.workers import RANK

    # the verdict first: a listing that shows the first values shows it
    values: dict = {"threshold_bytes": int(threshold), "checked": False, "calls_at": -1,
                    "calls_below": -1, "calls_baseline": -1}
    strace = shutil.which("strace")
    launcher = resolve_launcher(ctx.launcher)
    if strace is None or not launcher or threshold < 2:
        values["why"] = ("strace not found: the route of the emitted threshold was not counted"
                         if strace is None else "no launcher or no threshold to check")
        return _evidence(values)
    env = config_env(mpi.flavour, ON, int(threshold))
    counts = []
    with tempfile.TemporaryDirectory() as tmp:
        for nbytes in (threshold, threshold - 1, 1):
            out = Path(tmp) / f"strace-{nbytes}.txt"
            argv = [strace, "-f", "-c", "-o", str(out), "-e", "trace=" + ",".join(SYSCALLS),
                    *launcher, *python_argv(RANK, ["smoke", "--bytes", str(nbytes)])]
            what = ("the baseline: MPI init's own CMA calls" if nbytes == 1 else
                    f"a {nbytes}-byte message")
            ctx.progress(f"tracing the emitted threshold {threshold}: {what}", None)
            try:
                cp = run_command(argv, env=env, timeout_s=max(20.0, min(60.0,
                                                                        ctx.remaining_s() + 10)))
            except LaunchError as exc:
                values["why"] = f"the traced launch failed: {str(exc)[:200]}"
                return _evidence(values)
            try:
                counts.append(count_calls(out.read_text() if out.exists() else ""))
            except ValueError:
                values["why"] = ("strace could not trace the launch here (exit "
                                 f"{cp.returncode}): {cp.stderr.strip()[-200:]}")
                return _evidence(values)
    behaves, why = route_ok(threshold, *counts)
    values = {"threshold_bytes": int(threshold), "behaves": behaves, "checked": True,
              "calls_at": counts[0], "calls_below": counts[1], "calls_baseline": counts[2],
              "why": why}
    return _evidence(values)


def _evidence(values: dict) -> Evidence:
    return Evidence(id=EMITTED, description="the advised threshold in the form emit writes it "
                    "(environment), traced: process_vm_readv/writev calls of a message at the "
                    "threshold and one byte below", values=values)


def emitted_findings(evidence: Sequence[Evidence]) -> tuple[list[Finding], Optional[bool]]:
    """``(findings, behaves)``: ``cma-emitted-form-differs`` (warning) when the emitted form
    routes otherwise than measured (``behaves`` False: the threshold advice is withdrawn),
    ``cma-emitted-form-unchecked`` (info) when it could not be counted (``behaves`` None),
    ``cma-emitted-form-checked`` (info) when it behaves as measured (``behaves`` True)."""
    ev = Evidence.find(evidence, EMITTED)
    if ev is None:
        return [], None
    v = ev.values
    if not v.get("checked"):
        return [Finding(id="cma-emitted-form-unchecked", severity="info", evidence=[EMITTED],
                        message=f"the emitted threshold's route was not checked: {v.get('why')}",
                        remedy="install strace on the node to have the probe count the CMA "
                               "calls of the emitted setting")], None
    if v.get("behaves"):
        return [Finding(id="cma-emitted-form-checked", severity="info", evidence=[EMITTED],
                        message=f"the emitted form was traced: {v.get('why')}")], True
    return [Finding(id="cma-emitted-form-differs", severity="warning", evidence=[EMITTED],
                    message=f"threshold advice withdrawn: {v.get('why')}",
                    remedy="keep the library default; report the library version with this "
                           "profile")], False
