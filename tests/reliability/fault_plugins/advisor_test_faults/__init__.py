"""Test-only probes that fail on purpose, for the reliability tests of hpc-advisor.

Each entry point (``fault-<kind>``) registers its probe only when ``ADVISOR_TEST_FAULTS`` (a
comma-separated list of kinds, e.g. ``raise,hang``) names it, so installing this distribution in
a test environment changes nothing for normal runs.  Kinds:

* ``ok``: a fast, fault-free probe (one evidence value, one recommendation with one setting whose
  value is ``ADVISOR_TEST_FAULT_VALUE`` or ``"1"``);
* ``early``: the same, named to sort (and so run) before every other fault probe;
* ``raise``: ``measure`` raises ``RuntimeError``;
* ``exit``: ``measure`` calls ``sys.exit(0)`` (a plugin must not end the whole probe);
* ``hang``: ``measure`` starts a sleeping child process through the harness and waits on it far
  past its deadline (the runner must abandon it and the child must not outlive ``advisor``);
* ``busy``: ``measure`` keeps running in Python past its deadline, starting no process, so
  killing processes cannot stop it (probes after it must be flagged as measured beside it);
* ``orphan``: ``measure`` starts a daemon (``sh -c 'sleep &'``: the sleep is orphaned when the
  shell exits) and returns normally; it must not outlive ``advisor``;
* ``killrank``: a 2-rank MPI job through ``advisor.measure.run_mpi`` in which rank 1 SIGKILLs
  itself;
* ``nompiexec``: a 2-rank MPI job through the configured launcher (run the test with
  ``--launcher /nonexistent/mpiexec`` or a stripped ``PATH``);
* ``opencl``: lists OpenCL platforms and builds a kernel with pyopencl (run with
  ``OCL_ICD_VENDORS`` pointing at a missing directory to make the platform fail);
* ``facts-raise``, ``facts-exit``, ``facts-hang``: a fact detector (``advisor_register_facts``)
  that raises, calls ``sys.exit(0)``, or sleeps for an hour.

Every fault probe also has the pure methods ``lint``, ``headline`` and ``figures``, which give
nothing unless ``ADVISOR_TEST_FAULT_METHODS`` (comma-separated ``method:how`` items, ``how``
being ``raise``, ``exit`` or ``hang``; e.g. ``lint:raise,headline:hang``) makes one fail.
"""

from __future__ import annotations

import os
import sys

from advisor import hookimpl
from advisor.models import Advice, Evidence, Recommendation, Setting
from advisor.probe import Applicability

ENV = "ADVISOR_TEST_FAULTS"
#: ``method:how`` items: the pure methods that fail, and how.
METHODS_ENV = "ADVISOR_TEST_FAULT_METHODS"
#: How long the hang fault's child sleeps (seconds): far longer than any test's budget.
HANG_CHILD_S = 3600


def active(kind: str) -> bool:
    return kind in {k.strip() for k in os.environ.get(ENV, "").split(",")}


def method_fault(method: str) -> None:
    """Fail as ``ADVISOR_TEST_FAULT_METHODS`` says for ``method`` (nothing when not named)."""
    for item in os.environ.get(METHODS_ENV, "").split(","):
        name, _, how = item.strip().partition(":")
        if name != method:
            continue
        if how == "raise":
            raise RuntimeError(f"injected fault: {method} raised")
        if how == "exit":
            sys.exit(0)
        if how == "hang":
            import time

            time.sleep(HANG_CHILD_S)


def _launch():
    try:
        from advisor.measure import LaunchError, run_mpi, run_python
    except ImportError:  # harness package without its facade yet
        from advisor.measure.launch import LaunchError, run_mpi, run_python
    return LaunchError, run_mpi, run_python


class FaultProbe:
    kind = "ok"
    budget_weight = 1.0

    @property
    def name(self) -> str:
        return f"fault-{self.kind}"

    @property
    def description(self) -> str:
        return f"test fault: {self.kind}"

    def check(self, facts):
        return Applicability(usable=True)

    def measure(self, ctx):
        return [Evidence(id="ok", values={"remaining_s": round(ctx.remaining_s(), 3)})]

    def recommend(self, evidence, facts):
        value = os.environ.get("ADVISOR_TEST_FAULT_VALUE", "1")
        return Advice(recommendations=[Recommendation(
            id="fault-ok", title="test setting", rationale="test", confidence="low",
            settings=[Setting(library="advisor-test", name="ADVISOR_TEST_SETTING", value=value)])])

    def lint(self, env, facts):
        method_fault("lint")
        return []

    def headline(self, evidence):
        method_fault("headline")
        return {}

    def figures(self, evidence, facts):
        method_fault("figures")
        return []


class Early(FaultProbe):
    kind = "early"


class Raise(FaultProbe):
    kind = "raise"

    def measure(self, ctx):
        raise RuntimeError("injected fault: measure raised")


class Exit(FaultProbe):
    kind = "exit"

    def measure(self, ctx):
        sys.exit(0)


class Hang(FaultProbe):
    kind = "hang"

    def measure(self, ctx):
        _, _, run_python = _launch()
        run_python(["-c", f"import time; time.sleep({HANG_CHILD_S})"], timeout_s=HANG_CHILD_S)
        return []


class Busy(FaultProbe):
    kind = "busy"

    def measure(self, ctx):
        import time

        end = time.monotonic() + HANG_CHILD_S
        while time.monotonic() < end:  # ignores ctx.deadline on purpose
            time.sleep(0.01)
        return []


class Orphan(FaultProbe):
    kind = "orphan"

    def measure(self, ctx):
        import subprocess

        import time

        import psutil

        out = subprocess.run(["sh", "-c", f"sleep {HANG_CHILD_S} >/dev/null 2>&1 </dev/null & "
                              "echo $!"], check=True, timeout=30, capture_output=True, text=True)
        # The background child is a fork of sh until it execs sleep; on a loaded machine the
        # runner could otherwise find it still named "sh".  Return once it is the sleep.
        pid, until = int(out.stdout), time.monotonic() + 20
        while time.monotonic() < until:
            try:
                if psutil.Process(pid).name() == "sleep":
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.01)
        return super().measure(ctx)


class KillRank(FaultProbe):
    kind = "killrank"

    def measure(self, ctx):
        _, run_mpi, _ = _launch()
        run_mpi("advisor_test_faults.rank_worker", ["killrank"], launcher=ctx.launcher,
                timeout_s=max(1.0, min(60.0, ctx.remaining_s())))
        return []


class NoMpiexec(FaultProbe):
    kind = "nompiexec"

    def measure(self, ctx):
        _, run_mpi, _ = _launch()
        res = run_mpi("advisor_test_faults.rank_worker", ["ok"], launcher=ctx.launcher,
                      timeout_s=max(1.0, min(60.0, ctx.remaining_s())))
        return [Evidence(id="mpi", values={"ranks": int(res.get("ranks", 0))})]


class OpenCL(FaultProbe):
    kind = "opencl"

    def check(self, facts):
        import pyopencl as cl

        cl.get_platforms()  # raises when no platform can be loaded
        return Applicability(usable=True)

    def measure(self, ctx):
        import numpy as np
        import pyopencl as cl

        plat = cl.get_platforms()[0]
        cctx = cl.Context(plat.get_devices())
        queue = cl.CommandQueue(cctx)
        a = np.arange(16, dtype=np.float32)
        buf = cl.Buffer(cctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
        prg = cl.Program(cctx, "__kernel void k(__global float *a) { a[get_global_id(0)] *= 2; }")
        prg.build()
        prg.k(queue, a.shape, None, buf)
        cl.enqueue_copy(queue, a, buf)
        return [Evidence(id="opencl", values={"sum": float(a.sum())})]


class _Plugin:
    """One entry point: registers its probe only when its kind is active."""

    def __init__(self, probe: FaultProbe) -> None:
        self.probe = probe

    @hookimpl
    def advisor_register_probes(self, register):
        if active(self.probe.kind):
            register(self.probe)


OK = _Plugin(FaultProbe())
EARLY = _Plugin(Early())
RAISE = _Plugin(Raise())
EXIT = _Plugin(Exit())
HANG = _Plugin(Hang())
BUSY = _Plugin(Busy())
ORPHAN = _Plugin(Orphan())
KILLRANK = _Plugin(KillRank())
NOMPIEXEC = _Plugin(NoMpiexec())
OPENCL = _Plugin(OpenCL())


def _facts_raise() -> dict:
    raise RuntimeError("injected fault: fact detector raised")


def _facts_exit() -> dict:
    sys.exit(0)


def _facts_hang() -> dict:
    import time

    time.sleep(HANG_CHILD_S)
    return {}


class _FactsPlugin:
    """One entry point: registers a fact detector only when its kind is active."""

    def __init__(self, kind: str, fn) -> None:
        self.kind, self.fn = kind, fn

    @hookimpl
    def advisor_register_facts(self, register):
        if active(self.kind):
            register(f"fault-{self.kind}", self.fn)


FACTS_RAISE = _FactsPlugin("facts-raise", _facts_raise)
FACTS_EXIT = _FactsPlugin("facts-exit", _facts_exit)
FACTS_HANG = _FactsPlugin("facts-hang", _facts_hang)
