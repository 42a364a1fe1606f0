"""Is the machine busy before a probe?  Other processes' CPU use over a window of this
process's own work, from the kernel's CPU accounting (``psutil``), so no time is spent waiting.

The probes assume the cores they measure on are theirs: the MPI probes run one rank per core
(two ranks), the host probes one thread, and on a 2-core machine any other process's CPU time
comes out of a measurement.  A new user's ``make probe`` on the 2-core VM, run while a test suite
held a core, took 52.8 s instead of 26-29 s and advised no glibc tunable at all (the A/B gains
fell within the noise floor), with nothing saying the machine was busy.

``LoadWindow()`` starts a window; ``other_cores()`` ends it: the cores' worth of CPU time every
process but this one and its waited-for children used, per second of the window.  Busy time is
what ``/proc/stat`` counts as neither idle nor I/O wait (user, nice, system, irq, softirq,
steal; guest time is already inside user and is not counted twice, proc(5)).  Steal (a
hypervisor running someone else on this vCPU) counts: a measurement loses that time too.

Steal is also reported on its own (``Busy.steal_share``): the share of the CPU time this
machine's processes wanted that the hypervisor gave to someone else.  It is the VM's own
noise, which no idle node removes: on the 2-core KVM/Firecracker VM a whole probe saw 5-8 %
(``vmstat``'s ``st`` beside ``us``+``sy`` of 30-90 %), with 6 % of the MPI probe's batches
12.7x slower than the rest, while an idle 20 s window saw 0.4 % of all CPU time.  The probe
records it over its whole run (``Provenance.steal_share``) and warns from ``NOISY_STEAL``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

#: Shortest window (seconds) worth judging: the kernel's CPU accounting ticks at USER_HZ (100 per
#: second on Linux, proc(5)), so a window of 0.1 s holds ten ticks per core.
MIN_WINDOW_S = 0.1
#: Cores' worth of other processes' CPU use from which the machine counts as busy: half a core.
#: An idle 2-core VM measured 0.00-0.06 here (its background, over fact detection or a sleep),
#: one process spinning 1.03; half a core is far from both and is already a large share of a
#: 2-rank MPI measurement.
BUSY_CORES = 0.5
#: Steal share from which the probe warns: the harness's relative precision
#: (``advisor.measure.stats.REL_PRECISION``, 5 %).  Time the hypervisor takes lands in the timed
#: intervals unevenly, as stalls; when it is as large as the precision the samplers stop at, it
#: is a noise source of the same size as everything they were sized against.
NOISY_STEAL = 0.05


def _busy_s(t: Any) -> float:
    """Busy CPU seconds of a ``psutil.cpu_times()`` sample (module docstring)."""
    total = sum(t)
    for field in ("idle", "iowait", "guest", "guest_nice"):
        total -= getattr(t, field, 0.0)
    return total


def _steal_s(t: Any) -> float:
    """Stolen CPU seconds of a ``psutil.cpu_times()`` sample (0 where the kernel has none)."""
    return float(getattr(t, "steal", 0.0) or 0.0)


def steal_share(busy_before: float, busy_after: float, steal_before: float,
                steal_after: float) -> Optional[float]:
    """Stolen seconds over busy seconds (steal included) of a window, 0..1; None when the
    machine was never busy in it.  Pure."""
    busy = busy_after - busy_before
    if busy <= 0:
        return None
    return min(1.0, max(0.0, (steal_after - steal_before) / busy))


def _own_s() -> float:
    """CPU seconds of this process and its waited-for children."""
    import psutil

    c = psutil.Process().cpu_times()
    return c.user + c.system + c.children_user + c.children_system


@dataclass(frozen=True)
class Busy:
    """Other processes' CPU use over a window: ``cores`` (cores' worth, >= 0), ``window_s``
    (seconds), ``cpus`` (logical CPUs) and ``busy`` (``cores >= BUSY_CORES``); ``steal_share``
    (``steal_share``, None when nothing ran) and ``noisy`` (``steal_share >= NOISY_STEAL``)."""

    cores: float
    window_s: float
    cpus: int
    steal_share: Optional[float] = None

    @property
    def noisy(self) -> bool:
        return self.steal_share is not None and self.steal_share >= NOISY_STEAL

    def steal_warning(self) -> str:
        """One line for a VM whose hypervisor took ``NOISY_STEAL`` or more (the CLI prints it)."""
        return (f"the hypervisor took {self.steal_share:.0%} of the CPU time this machine used "
                f"over the {self.window_s:.0f} s of the probe (steal): measurements here carry "
                f"its stalls, and advice can tie or come out unstable where a dedicated node "
                f"would decide. Compare with a probe on bare metal or a VM with dedicated cores.")

    @property
    def busy(self) -> bool:
        return self.cores >= BUSY_CORES

    def warning(self) -> str:
        """One line for a busy machine (the CLI prints it)."""
        return (f"this machine was busy before the probe: other processes used {self.cores:.1f} "
                f"of {self.cpus} cores over {self.window_s:.1f} s; the measurements share those "
                f"cores, and advice measured on a busy machine can differ (more falls within "
                f"noise). Probe an idle node, e.g. in an exclusive job (sbatch --exclusive)")


def other_cores(busy_before: float, busy_after: float, own_before: float, own_after: float,
                window_s: float) -> float:
    """Cores' worth of CPU the other processes used: (machine busy seconds - this process's
    seconds) / window seconds, never below 0.  Pure."""
    if window_s <= 0:
        return 0.0
    return max(0.0, ((busy_after - busy_before) - (own_after - own_before)) / window_s)


class LoadWindow:
    """A window of other processes' CPU use, started on construction (module docstring)."""

    def __init__(self) -> None:
        import psutil

        self._t0 = time.monotonic()
        t = psutil.cpu_times()
        self._busy0, self._steal0 = _busy_s(t), _steal_s(t)
        self._own0 = _own_s()

    def result(self) -> Optional[Busy]:
        """The window so far, or None when it is shorter than ``MIN_WINDOW_S`` (the caller may
        wait and ask again)."""
        import os

        import psutil

        dt = time.monotonic() - self._t0
        if dt < MIN_WINDOW_S:
            return None
        t = psutil.cpu_times()
        busy = _busy_s(t)
        cores = other_cores(self._busy0, busy, self._own0, _own_s(), dt)
        steal = steal_share(self._busy0, busy, self._steal0, _steal_s(t))
        return Busy(cores=round(cores, 3), window_s=round(dt, 3), cpus=os.cpu_count() or 1,
                    steal_share=round(steal, 4) if steal is not None else None)

    def wait_result(self) -> Busy:
        """``result``, sleeping first until the window is ``MIN_WINDOW_S`` long."""
        while True:
            got = self.result()
            if got is not None:
                return got
            time.sleep(max(0.0, MIN_WINDOW_S - (time.monotonic() - self._t0)) + 0.001)
