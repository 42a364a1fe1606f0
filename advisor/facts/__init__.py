"""Machine facts: small, lenient detectors combined into ``advisor.models.Facts``.

Public API:

* ``detect(extra=None, *, opencl=True, root=Path("/")) -> Facts``: every detector.  A failing
  detector adds one line to ``Facts.warnings`` and leaves its fields None ("unknown"); ``detect``
  never raises.  ``extra`` maps plugin fact-detector names to callables returning
  ``dict[str, bool|int|float|str]`` (``advisor_register_facts``), stored in ``Facts.extra``.
* ``detect_fingerprint_facts() -> Facts``: only the detectors whose fields enter
  ``Facts.fingerprint()`` and are cheap (no pyopencl import, no mpi4py subprocess): for
  ``advisor emit``'s "this profile comes from another machine" warning.
* ``comparable_fingerprint(facts) -> str`` and ``same_machine(recorded, current=None) -> bool``:
  compare a profile's facts with this machine on the fields the fast detection can see
  (OpenCL platforms, which need pyopencl, are left out).
* ``advisor.facts.compare.machine_mismatch(profile, current) -> list[str]``: how the machine a
  profile was made on differs from this one, one line per difference (emit and verify).

Each detector module takes its inputs from a ``root`` path (a recorded tree in tests) or from
tool output given as text, so it is tested on recorded real data.
"""

from __future__ import annotations

import socket
from importlib import metadata
from pathlib import Path
from typing import Callable, Mapping, Optional

from advisor.facts.util import Notes
from advisor.facts.cpu import detect_cpu
from advisor.facts.cuda import detect_cuda
from advisor.facts.kernel import detect_kernel
from advisor.facts.memory import detect_memory
from advisor.facts.mpi import detect_mpi
from advisor.facts.opencl import detect_opencl
from advisor.facts.scheduler import detect_scheduler
from advisor.facts.security import detect_security
from advisor.libraries.mpich import NAME as MPICH
from advisor.libraries.mpich import UPSTREAM
from advisor.models_step import SchedulerFacts
from advisor.models import (CpuFacts, Facts, KernelFacts, MemoryFacts, MpiFacts,
                            SecurityFacts)

__all__ = [
    "detect", "detect_fingerprint_facts", "comparable_fingerprint", "same_machine",
    "fast_detection_sees_mpi", "python_packages", "run_extra",
]

#: Distributions whose versions are recorded in ``Facts.python_packages``; any distribution whose
#: name starts with ``cupy`` (cupy-cuda12x, ...) is added.
PACKAGES = ("mpi4py", MPICH, "pyopencl", "pocl-binary-distribution", "numpy", "archspec")


def python_packages(names: tuple[str, ...] = PACKAGES, *, prefixes: tuple[str, ...] = ("cupy",)
                    ) -> dict[str, str]:
    """``{distribution: version}`` of the installed ``names`` and of distributions whose
    normalised name starts with one of ``prefixes``; read from ``importlib.metadata`` (no import).
    Missing distributions are left out."""
    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    if prefixes:
        for dist in metadata.distributions():
            name = (dist.metadata["Name"] or "").lower().replace("_", "-")
            if name.startswith(prefixes) and name not in out:
                out[name] = dist.version
    return dict(sorted(out.items()))


#: A plugin fact detector that has not returned after this many seconds is abandoned with a
#: warning.  The hook contract asks for "well under a second" (advisor.hookspecs); 5 s leaves room
#: for a loaded node without letting one broken plugin stall every command.
FACT_DETECTOR_TIMEOUT_S = 5.0


def run_extra(extra: Mapping[str, Callable[[], dict]], notes: Notes) -> dict[str, dict]:
    """Run plugin fact detectors; keep only ``str`` keys with bool/int/float/str values.

    A detector that raises or returns a non-dict adds a warning and contributes nothing; a bad
    key or value is dropped with a warning naming it.
    """
    from advisor.steps import run_step

    out: dict[str, dict] = {}
    for name, fn in extra.items():
        # same executor and error texts as probe and verify steps; SystemExit included
        done = run_step(fn, step="detect", timeout_s=FACT_DETECTOR_TIMEOUT_S)
        if not done.ok:
            notes.warn(f"facts plugin {name!r}", done.error or done.kind)
            continue
        result = done.value
        if result is None:
            continue
        if not isinstance(result, dict):
            notes.warn(f"facts plugin {name!r}", f"returned {type(result).__name__}, not a dict")
            continue
        clean = {}
        for key, value in result.items():
            if isinstance(key, str) and isinstance(value, (bool, int, float, str)):
                clean[key] = value
            else:
                notes.warn(f"facts plugin {name!r}",
                           f"dropped {key!r}: value of type {type(value).__name__}")
        out[name] = clean
    return out


def _hostname() -> Optional[str]:
    return socket.gethostname() or None


def detect(extra: Optional[Mapping[str, Callable[[], dict]]] = None, *, opencl: bool = True,
           root: Path = Path("/")) -> Facts:
    """All facts of this machine (or of a recorded tree at ``root``; tools such as mpichversion,
    nvidia-smi and pyopencl are only asked on the live machine).  Never raises."""
    notes = Notes()
    live = root == Path("/")
    facts = Facts(
        hostname=notes.attempt("hostname", _hostname) if live else None,
        cpu=notes.attempt("cpu", lambda: detect_cpu(root, notes), CpuFacts()),
        memory=notes.attempt("memory", lambda: detect_memory(root, notes), MemoryFacts()),
        kernel=notes.attempt("kernel", lambda: detect_kernel(root, notes), KernelFacts()),
        security=notes.attempt("security", lambda: detect_security(root, notes), SecurityFacts()),
        mpi=notes.attempt("mpi", lambda: detect_mpi(notes), MpiFacts()) if live else MpiFacts(),
        opencl=notes.attempt("opencl", lambda: detect_opencl(notes), []) if opencl and live else [],
        cuda=notes.attempt("cuda", lambda: detect_cuda(root, notes), []),
        python_packages=notes.attempt("python packages", python_packages, {}) if live else {},
        scheduler=notes.attempt("scheduler", detect_scheduler) if live else SchedulerFacts(),
        extra=run_extra(extra or {}, notes),
    )
    return facts.model_copy(update={"warnings": list(notes.warnings)})


def detect_fingerprint_facts() -> Facts:
    """Facts of this machine for the fingerprint and the "profile from another machine" check:
    hostname, cpu, memory, kernel, security (cheap /proc reads: a container that blocks CMA is a
    different machine for CMA advice), cuda and MPI without the mpi4py subprocess; OpenCL and
    packages stay unknown.  Never raises."""
    notes = Notes()
    root = Path("/")
    facts = Facts(
        hostname=notes.attempt("hostname", _hostname),
        security=notes.attempt("security", lambda: detect_security(root, notes), SecurityFacts()),
        cpu=notes.attempt("cpu", lambda: detect_cpu(root, notes), CpuFacts()),
        memory=notes.attempt("memory", lambda: detect_memory(root, notes), MemoryFacts()),
        kernel=notes.attempt("kernel", lambda: detect_kernel(root, notes), KernelFacts()),
        mpi=notes.attempt("mpi", lambda: detect_mpi(notes, library_version=False), MpiFacts()),
        cuda=notes.attempt("cuda", lambda: detect_cuda(root, notes), []),
    )
    return facts.model_copy(update={"warnings": list(notes.warnings)})


def comparable_fingerprint(facts: Facts, *, mpi: bool = True) -> str:
    """``Facts.fingerprint()`` of ``facts`` without the OpenCL platforms, which the fast
    detection does not look at (16 hex digits).  ``mpi=False`` also leaves out the MPI fields
    except ``mpi4py_version``.  Equal for ``detect()`` and ``detect_fingerprint_facts()`` on one
    machine with upstream MPICH or no MPI."""
    update: dict = {"opencl": []}
    if not mpi:
        update["mpi"] = MpiFacts(mpi4py_version=facts.mpi.mpi4py_version)
    return facts.model_copy(update=update).fingerprint()


def fast_detection_sees_mpi(facts: Facts) -> bool:
    """Whether the fast detection reproduces the MPI facts of ``facts``: true for upstream MPICH
    (``mpichversion`` prints the library's own banner) and for no MPI; false for HPE Cray MPICH,
    Open MPI, Intel MPI, MVAPICH, whose identity needs ``MPI_Get_library_version``."""
    m = facts.mpi
    return m.implementation is None or (m.implementation == MPICH and m.flavour == UPSTREAM)


def same_machine(recorded: Facts, current: Optional[Facts] = None) -> bool:
    """Whether facts recorded in a profile describe this machine (``current`` defaults to
    ``detect_fingerprint_facts()``), compared by ``comparable_fingerprint``.  When the recorded
    MPI library is one the fast detection cannot identify (``fast_detection_sees_mpi``), MPI is
    left out on both sides, so a Cray MPICH upgrade alone is not reported."""
    current = current if current is not None else detect_fingerprint_facts()
    mpi = fast_detection_sees_mpi(recorded)
    return comparable_fingerprint(recorded, mpi=mpi) == comparable_fingerprint(current, mpi=mpi)
