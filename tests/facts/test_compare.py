"""``advisor.facts.compare``: the other-machine differences as a short list, most decisive
first, sizes in binary units, MemTotal within the firmware-reservation tolerance left out
(issue 27)."""

from __future__ import annotations

from advisor.facts.compare import (MAX_LISTED, MEMORY_TOLERANCE, error_line, machine_mismatch,
                                    warning_lines)
from advisor.libraries import builtin_libraries
from advisor.profile import load_profile
from support import SHIPPED_PROFILE

LIBS = builtin_libraries()


def _vary(f, **parts):
    return f.model_copy(update={k: getattr(f, k).model_copy(update=v) for k, v in parts.items()})


def test_memtotal_within_the_tolerance_is_no_difference():
    p = load_profile(SHIPPED_PROFILE)
    total = p.facts.memory.total_bytes
    for less in (4096, 440 << 10, int(total * MEMORY_TOLERANCE)):  # 440 KiB: measured, see doc
        assert machine_mismatch(p, _vary(p.facts, memory={"total_bytes": total - less}),
                                LIBS) == []
    lines = machine_mismatch(p, _vary(p.facts, memory={"total_bytes": total // 2}), LIBS)
    assert lines[0].startswith("fingerprint: ")
    assert lines[1] == "memory.total_bytes: profile 23.54 GiB, this machine 11.77 GiB " \
                       "(11.77 GiB less)"


def test_differences_are_ordered_cpu_mpi_then_os_then_memory_and_capped():
    p = load_profile(SHIPPED_PROFILE)
    f = p.facts
    here = _vary(f, memory={"total_bytes": f.memory.total_bytes // 2, "thp_enabled": "never"},
                 kernel={"release": "9.9.9"},
                 cpu={"vendor": "AuthenticAMD", "model_name": "AMD EPYC",
                      "cache_l3_bytes": 1 << 25},
                 mpi={"version": "9.9"})
    lines = machine_mismatch(p, here, LIBS)
    names = [ln.split(":", 1)[0] for ln in lines[1:]]
    assert names == ["cpu.vendor", "cpu.model_name", "cpu.cache_l3_bytes", "MPI version",
                     "kernel.release", "memory.thp_enabled", "memory.total_bytes"]
    assert "cpu.cache_l3_bytes: profile 260 MiB, this machine 32 MiB" in lines
    shown = warning_lines(lines)
    assert shown[0].startswith("profile from another machine: fingerprint: ")
    assert all(ln.startswith("  ") for ln in shown[1:])
    # more than MAX_LISTED facts: the rest are named on one last line
    many = _vary(here, cpu={"arch": "aarch64", "microarch": "neoverse_v2", "cores_physical": 72,
                            "cores_logical": 72, "cache_l2_bytes": 1 << 20})
    lines = machine_mismatch(p, many, LIBS)
    assert len(lines) == 1 + MAX_LISTED and lines[-1].startswith("and ")
    assert "memory.total_bytes" in lines[-1]


def test_error_line_counts_every_fact_with_or_without_the_fingerprint_head():
    """``emit --strict``'s one line: the count and the first fact, also when the fingerprint
    agrees and only facts outside it (security) differ, so no head line comes first."""
    assert error_line(["seccomp mode: profile 0, this machine 2",
                       "container: profile none, this machine docker"]) == (
        "profile is for another machine (2 fact(s) differ, first seccomp mode: profile 0, "
        "this machine 2)")
    assert error_line(["fingerprint: the profile was made on a", "cpu.vendor: profile A, "
                       "this machine B", "and 3 more: x, y, z"]).startswith(
        "profile is for another machine (4 fact(s) differ, first cpu.vendor: profile A")
