"""detect() on the live machine with the real tools (mpichversion, mpi4py, PoCL through
pyopencl): a valid Facts, a stable fingerprint, and a fast detection that agrees with it."""

from __future__ import annotations

import subprocess
from pathlib import Path
import sys

import pytest

from advisor.facts import (comparable_fingerprint, detect, detect_fingerprint_facts,
                           same_machine)
from advisor.facts.mpi import parse_mpichversion
from advisor.models import Facts
from support import tool


@pytest.fixture(scope="module")
def live() -> Facts:
    return detect()


def test_live_detect_is_valid_and_complete(live):
    assert Facts.model_validate(live.model_dump()) == live
    assert live.cpu.cores_logical and live.cpu.cores_logical >= 1
    assert live.cpu.microarch  # archspec
    assert live.memory.total_bytes and live.memory.page_size_bytes
    assert live.kernel.release and live.kernel.system == "Linux"
    assert live.security.seccomp_mode in (0, 1, 2)
    assert live.security.cap_sys_ptrace in (True, False)
    assert live.security.user_namespace and live.security.user_namespace.startswith("user:[")
    core = ("cpu:", "memory:", "kernel:", "security:", "mpi:")
    assert not [w for w in live.warnings if w.startswith(core) and not _source_absent(w)], \
        live.warnings


def _source_absent(warning: str) -> bool:
    """A warning about a sysfs tree this kernel or sandbox does not have (gVisor and some
    containers hide CPU topology and cache directories): the lenient detector is right to warn."""
    cpu0 = Path("/sys/devices/system/cpu/cpu0")
    return ((warning.startswith("cpu: topology") and not (cpu0 / "topology").is_dir())
            or (warning.startswith("cpu: cache sizes") and not (cpu0 / "cache").is_dir()))


def test_live_fingerprint_stable_and_fast_detection_agrees(live):
    again = detect()
    assert again.fingerprint() == live.fingerprint()
    fast = detect_fingerprint_facts()
    assert not [w for w in fast.warnings if not w.startswith("cuda:")], fast.warnings
    assert fast.cpu == live.cpu and fast.memory == live.memory and fast.kernel == live.kernel
    assert fast.cuda == live.cuda
    assert comparable_fingerprint(fast) == comparable_fingerprint(live)
    assert same_machine(live, fast)
    other = live.model_copy(update={"kernel": live.kernel.model_copy(update={"release": "0.0"})})
    assert not same_machine(other, fast)


def test_live_mpi_matches_mpichversion(live):
    out = subprocess.run([tool("mpichversion")], capture_output=True, text=True, check=True).stdout
    mv = parse_mpichversion(out)
    assert live.mpi.implementation == "mpich"
    assert (live.mpi.version, live.mpi.device) == (mv["version"], mv["device"])
    assert live.mpi.flavour == "upstream"
    assert live.mpi.library_version == mv["first_line"]  # from mpi4py, MPI not initialised
    assert live.mpi.mpiexec and live.mpi.mpi4py_version


def test_live_opencl_pocl(live):
    pytest.importorskip("pyopencl", reason="pyopencl not installed (CI installs it)")
    names = {p.name for p in live.opencl}
    if "Portable Computing Language" not in names:
        pytest.skip(f"no PoCL platform here (platforms: {sorted(names)})")
    pocl = next(p for p in live.opencl if p.name == "Portable Computing Language")
    assert pocl.devices and pocl.devices[0].type == "CPU"
    assert pocl.devices[0].global_mem_bytes > 0


def test_detect_without_opencl_and_with_plugins():
    facts = detect({"site": lambda: {"xpmem_device": False}}, opencl=False)
    assert facts.opencl == [] and facts.extra == {"site": {"xpmem_device": False}}


def test_fingerprint_detection_does_not_import_pyopencl_or_init_mpi():
    code = ("import sys; from advisor.facts import detect_fingerprint_facts as d; f = d(); "
            "assert 'pyopencl' not in sys.modules and 'mpi4py.MPI' not in sys.modules, "
            "sorted(m for m in sys.modules if 'opencl' in m or 'mpi4py' in m); "
            "print(f.fingerprint())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip()) == 16


def test_same_machine_with_a_cray_profile(live):
    """A profile recorded with HPE Cray MPICH: the fast detection only sees mpichversion's
    upstream-looking base version, so MPI is left out of the comparison."""
    from advisor.facts.mpi import combine, parse_mpi_library_version
    from support import DATA

    gh = DATA / "facts" / "gh200-cray-64k" / "tools"
    mv = parse_mpichversion((gh / "mpichversion.txt").read_text())
    cray_full = live.model_copy(update={"mpi": combine(
        mv, parse_mpi_library_version((gh / "mpi_library_version.txt").read_text()))})
    cray_fast = live.model_copy(update={"mpi": combine(mv, None), "opencl": []})
    assert cray_full.fingerprint() != cray_fast.fingerprint()
    assert same_machine(cray_full, cray_fast)
