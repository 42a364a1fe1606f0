"""Measure what you emit (issue 25 item 7): does the threshold advised, in the form ``emit``
writes it, route messages the way the decision assumed?

The decision (``advisor_mpich_cma.minimax``) scores a threshold ``T`` as "messages of ``T``
bytes and more use CMA, smaller ones the copy path", from rounds that wrote the threshold
through MPI_T (or set the forced on / off extremes in the environment).  ``emit`` writes ``T``
into the environment (``MPIR_CVAR_CH4_CMA_ENABLE=1`` and the threshold CVAR).  Whether the
library compares with ``>=`` or ``>``, and whether the environment form acts like the run-time
one, is what this check shows at the one decisive point: one fresh launch with the emitted
environment (the worker's ``route`` mode, ``--env-form``: nothing written through MPI_T),
exchanging messages of exactly ``T`` bytes, then ``T - 1`` bytes, then 1 byte (the baseline),
each phase marked by an ``access(2)`` of a marker path, under ``strace -f`` tracing
``process_vm_readv``/``process_vm_writev`` (the CMA path's system calls) and the markers.
MPICH makes some CMA calls at init whatever the messages (its CMA check: measured 8 readv, 4 of
them failing, and 4 writev on the 5.0.2 wheel); they fall before the first marker and are not
counted (``phase_counts``).  It behaves as measured when the ``T``-byte phase makes more calls
than the baseline phase and the ``T - 1``-byte one no more.  The same traced launch, writing
each threshold through MPI_T instead, checks the run-time switch (``trust.run_trace_check``).

Evidence ``cma-emitted-route``: values ``threshold_bytes``, ``calls_at``, ``calls_below``,
``calls_baseline`` (counts per phase, -1 when not counted), ``checked`` (bool), ``behaves``
(bool, only when checked), ``why``.  Where ``strace`` is missing or cannot trace here,
``checked`` is False and the advice stands with that said (``recommend``); where it misbehaves,
``recommend`` withdraws the threshold advice (``cma-emitted-form-differs``).
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
#: The marker calls of the worker's ``route`` mode (``os.access``: glibc issues one of these).
MARKER_SYSCALLS = ("access", "faccessat", "faccessat2")


def phase_counts(strace_text: str) -> dict[tuple[int, int], int]:
    """CMA calls (``SYSCALLS``) per ``(threshold, bytes)`` phase of a ``strace -f`` log of the
    worker's ``route`` mode, split at its marker calls (``workers.route.ROUTE_MARKER``); calls
    before the first marker (MPI init) and after the end marker are not counted.  Pure.

    :raises ValueError: no marker in the text (the launch was not traced).
    """
    import re

    from advisor_mpich_cma.workers.route import ROUTE_MARKER

    marker = re.compile(re.escape(ROUTE_MARKER) + r"(?:(\d+):(\d+)|end)")
    call = re.compile(r"\b(?:" + "|".join(SYSCALLS) + r")\(")
    counts: dict[tuple[int, int], int] = {}
    cur = None
    for line in strace_text.splitlines():
        m = marker.search(line)
        if m:
            cur = (int(m.group(1)), int(m.group(2))) if m.group(1) else None
            if cur is not None:
                counts.setdefault(cur, 0)
        elif cur is not None and call.search(line):
            counts[cur] += 1
    if not counts:
        raise ValueError("no phase marker in the strace log")
    return counts


def traced_route(ctx: "MeasureContext", env: dict, phases: Sequence[tuple[int, int]], *,
                 write: bool, env_phases: int = 0
                 ) -> tuple[Optional[dict[tuple[int, int], int]], int, str]:
    """One launch of the worker's ``route`` mode under ``strace -f`` with the env overlay
    ``env``: ``(CMA calls per phase, messages per phase, "")``, or ``(None, 0, why)`` when it
    could not be counted here (no ``strace`` or launcher, the launch failed, MPI_T refused,
    strace unable to trace).  ``write``: each phase's threshold is written through MPI_T;
    otherwise the environment's stands (and so in the first ``env_phases`` phases, before any
    write).  Never raises for a failing launch."""
    from advisor.measure import LaunchError, resolve_launcher, run_command
    from advisor.measure.launch import parse_json_result, python_argv

    from advisor_mpich_cma.workers import RANK

    strace, launcher = shutil.which("strace"), resolve_launcher(ctx.launcher)
    if strace is None:
        return None, 0, "strace not found"
    if not launcher:
        return None, 0, "no MPI launcher"
    args = ["route", "--checks", ",".join(f"{t}:{n}" for t, n in phases)]
    form = (["--env-form"] if not write else
            ["--env-phases", str(env_phases)] if env_phases else [])
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "strace.txt"
        argv = [strace, "-f", "-o", str(log), "-e",
                "trace=" + ",".join((*SYSCALLS, *MARKER_SYSCALLS)), *launcher,
                *python_argv(RANK, args + form)]
        try:
            cp = run_command(argv, env=env, timeout_s=max(20.0, min(60.0,
                                                                    ctx.remaining_s() + 10)))
        except LaunchError as exc:
            return None, 0, f"the traced launch failed: {str(exc)[:200]}"
        res = parse_json_result(cp.stdout) or {}
        try:
            counts = phase_counts(log.read_text() if log.exists() else "")
        except ValueError:
            return None, 0, ("strace could not trace the launch here (exit "
                             f"{cp.returncode}): {(res.get('mpit_error') or cp.stderr.strip())[-200:]}")
    if cp.returncode != 0 or "phases" not in res or any(p not in counts for p in phases):
        return None, 0, (f"the traced launch gave no phase counts (exit {cp.returncode}): "
                         f"{(res.get('mpit_error') or cp.stderr.strip())[-200:]}")
    return counts, int(res.get("messages_per_phase", 1)), ""


def route_ok(threshold: int, calls_at: int, calls_below: int,
             calls_baseline: int = 0) -> tuple[bool, str]:
    """``(behaves, why)``: CMA calls beyond the baseline phase's at ``threshold`` bytes and
    none beyond it one byte below (pure; counts of ``SYSCALLS`` per phase)."""
    calls_at, calls_below = calls_at - calls_baseline, calls_below - calls_baseline
    if calls_at > 0 and calls_below <= 0:
        return True, (f"with the emitted threshold {threshold}, {threshold}-byte messages took "
                      f"the CMA path ({calls_at} process_vm_readv/writev calls beyond the "
                      f"1-byte baseline's) and {threshold - 1}-byte ones the copy path (none), "
                      f"as measured")
    if calls_at <= 0:
        return False, (f"with the emitted threshold {threshold} in the environment, "
                       f"{threshold}-byte messages made no process_vm_readv/writev call: the "
                       f"library does not send messages of the threshold itself by CMA in this "
                       f"form (it may compare with '>' or ignore the variable)")
    return False, (f"with the emitted threshold {threshold}, {threshold - 1}-byte messages "
                   f"made {calls_below} process_vm_readv/writev calls: messages below the "
                   f"threshold took the CMA path")


#: Label of the phases of an environment-form check run inside the switch check's launch
#: (``env_phases``): 0, a threshold no MPI_T phase writes, so their markers stay apart.
ENV_LABEL = 0


def env_phases(threshold: int, label: Optional[int] = None) -> list[tuple[int, int]]:
    """The phases of an environment-form check of ``threshold`` (bytes): messages of the
    threshold, one byte below, and a 1-byte baseline (none below a threshold of 2, which has
    no 1-byte message under its T - 1), each labelled ``label`` (default: the threshold)."""
    t = int(threshold)
    lab = t if label is None else int(label)
    return [(lab, t), (lab, t - 1)] + ([(lab, 1)] if t > 2 else [])


def route_values(threshold: int, counts: dict[tuple[int, int], int],
                 phases: Sequence[tuple[int, int]], how: str = "") -> dict:
    """``cma-emitted-route`` values of ``threshold`` from the CMA calls ``counts`` of its
    ``env_phases`` ``phases`` (at, below, baseline); ``how``: where they were counted, when
    not in a launch of their own (value ``traced_in``).  Pure."""
    at, below = counts[phases[0]], counts[phases[1]]
    base = counts[phases[2]] if len(phases) > 2 else 0
    behaves, why = route_ok(threshold, at, below, base)
    return {"threshold_bytes": int(threshold), "behaves": behaves, "checked": True,
            "calls_at": at, "calls_below": below, "calls_baseline": base, "why": why,
            **({"traced_in": how} if how else {})}


def run_route_check(ctx: "MeasureContext", mpi: MpiFacts, threshold: int) -> Evidence:
    """The traced launch (module docstring) -> ``cma-emitted-route`` evidence.  Never raises
    for a missing or failing ``strace``: the evidence says why nothing was counted."""
    from advisor_mpich_cma.evidence import ON
    from advisor_mpich_cma.launch import config_env

    # the verdict first: a listing that shows the first values shows it
    values: dict = {"threshold_bytes": int(threshold), "checked": False, "calls_at": -1,
                    "calls_below": -1, "calls_baseline": -1}
    if threshold < 2:
        values["why"] = "no threshold to check"
        return evidence_of(values)
    phases = env_phases(threshold)
    ctx.progress(f"tracing the emitted threshold {threshold}: messages of {threshold} and "
                 f"{threshold - 1} bytes, and a 1-byte baseline", None)
    counts, _, why = traced_route(ctx, config_env(mpi.flavour, ON, int(threshold)), phases,
                                  write=False)
    if counts is None:
        values["why"] = (f"{why}: the route of the emitted threshold was not counted"
                         if why == "strace not found" else why)
        return evidence_of(values)
    return evidence_of(route_values(threshold, counts, phases))


def evidence_of(values: dict) -> Evidence:
    """The ``cma-emitted-route`` evidence with ``values`` (module docstring; ``traced_in``
    names the launch when it was not one of its own)."""
    return Evidence(id=EMITTED, description="the advised threshold in the form emit writes it "
                    "(environment), traced in one launch (its own, or the MPI_T switch "
                    "check's before any MPI_T write: value traced_in): "
                    "process_vm_readv/writev calls of messages at the threshold, one byte "
                    "below and of 1 byte", values=values)


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
