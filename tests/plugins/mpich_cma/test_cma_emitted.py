"""Measure what you emit (issue 25 item 7, ``advisor_mpich_cma.emitted``): the per-phase strace
parser and rule on recorded output, the withdrawal in recommend, and the traced launches on
the real MPICH wheel."""

from __future__ import annotations

import shutil
import time

import pytest

from advisor.models import Evidence, Facts, MpiFacts
from advisor.probe import MeasureContext
from advisor_mpich_cma import emitted

#: ``strace -f -o LOG -e trace=process_vm_readv,process_vm_writev,access,faccessat,faccessat2``
#: of the worker's route mode with the environment form (``--env-form``):
#: MPIR_CVAR_CH4_CMA_ENABLE=1 and the threshold 16384, phases of 16384, 16383 and 1 byte (MPICH
#: 5.0.2 wheel, the 2-core VM; the iovec arguments shortened)
EMITTED_LOG = "\n".join([
    *['7001 process_vm_readv(7002, [...], 1, [...], 1, 0) = -1 EFAULT'] * 4,  # init's check
    '7001 faccessat2(AT_FDCWD, "/advisor-route-phase-16384:16384", F_OK, 0) = -1 ENOENT',
    '7002 faccessat2(AT_FDCWD, "/advisor-route-phase-16384:16384", F_OK, 0) = -1 ENOENT',
    *['7001 process_vm_readv(7002, [...], 1, [...], 1, 0) = 16384',
      '7002 process_vm_readv(7001, [...], 1, [...], 1, 0) = 16384'] * 4,
    '7001 faccessat2(AT_FDCWD, "/advisor-route-phase-16384:16383", F_OK, 0) = -1 ENOENT',
    '7001 faccessat2(AT_FDCWD, "/advisor-route-phase-16384:1", F_OK, 0) = -1 ENOENT',
    '7001 faccessat2(AT_FDCWD, "/advisor-route-phase-end", F_OK, 0) = -1 ENOENT',
])


def test_counts_are_read_per_phase_from_a_traced_launch():
    counts = emitted.phase_counts(EMITTED_LOG)
    assert counts == {(16384, 16384): 8, (16384, 16383): 0, (16384, 1): 0}
    assert emitted.route_ok(16384, *counts.values())[0] is True
    with pytest.raises(ValueError):
        emitted.phase_counts("strace: ptrace(PTRACE_TRACEME, ...): Operation not permitted")


def test_the_rule_subtracts_the_init_calls():
    ok, why = emitted.route_ok(16384, 14, 12, 12)
    assert ok and "2 process_vm_readv/writev calls beyond the 1-byte baseline's" in why
    ok, why = emitted.route_ok(16384, 12, 12, 12)
    assert not ok and "'>'" in why
    ok, why = emitted.route_ok(16384, 14, 14, 12)
    assert not ok and "below the threshold took the CMA path" in why


def test_a_form_that_routes_otherwise_withdraws_the_threshold_advice():
    bad = Evidence(id=emitted.EMITTED, values={"checked": True, "behaves": False, "why": "w",
                                               "threshold_bytes": 16384})
    (f,), behaves = emitted.emitted_findings([bad])
    assert behaves is False and f.id == "cma-emitted-form-differs" and "withdrawn" in f.message
    unchecked = Evidence(id=emitted.EMITTED, values={"checked": False, "why": "strace not found"})
    (f,), behaves = emitted.emitted_findings([unchecked])
    assert behaves is None and f.severity == "info" and "strace not found" in f.message
    assert emitted.emitted_findings([]) == ([], None)
    good = Evidence(id=emitted.EMITTED, values={"checked": True, "behaves": True, "why": "fine"})
    (f,), behaves = emitted.emitted_findings([good])
    assert behaves is True and f.id == "cma-emitted-form-checked" and f.severity == "info"


@pytest.fixture
def traced_ctx() -> MeasureContext:
    """A measure context for a traced launch of the test venv's MPICH: skips without strace,
    fails without ``mpiexec``."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (scripts/system-deps.sh installs it)")
    from support import tool

    tool("mpiexec")
    return MeasureContext(facts=Facts(), deadline=time.monotonic() + 120)


@pytest.mark.integration
def test_the_emitted_threshold_is_traced_on_the_real_mpich(traced_ctx):
    ev = emitted.run_route_check(traced_ctx, MpiFacts(implementation="mpich", flavour="upstream"),
                                 16384)
    v = ev.values
    if not v["checked"]:
        pytest.skip(f"strace cannot trace here: {v['why']}")
    assert v["calls_at"] > v["calls_baseline"] >= 0, v
    assert v["behaves"] is (v["calls_below"] <= v["calls_baseline"]), v


def test_the_switch_trace_is_split_by_phase_and_judged():
    """``emitted.phase_counts`` / ``trust.trace_verdict`` on a recorded ``strace -f`` log of the route
    mode (MPICH 4.3.2 wheel, 2-core VM, shortened): init's and the end's calls are not counted;
    a written 16384 that sends 16384-byte messages by the copy path is untrusted."""
    from advisor_mpich_cma import trust

    log = "\n".join([
        '101 process_vm_readv(102, [{iov_base=0x1, iov_len=8}], 1, [{iov_base=0x2, '
        'iov_len=8}], 1, 0) = 8',  # MPI init's CMA check: not a phase
        '101 faccessat2(AT_FDCWD, "/advisor-route-phase-1:16384", F_OK, 0) = -1 ENOENT',
        *['102 process_vm_readv(101, [...], 1, [...], 1, 0) = 16384'] * 8,
        '101 access("/advisor-route-phase-1073741824:16384", F_OK) = -1 ENOENT',
        '101 access("/advisor-route-phase-1024:1024", F_OK) = -1 ENOENT',
        *['101 process_vm_readv(102, [...], 1, [...], 1, 0 <unfinished ...>',
          '101 <... process_vm_readv resumed>) = 1024'] * 8,
        '101 access("/advisor-route-phase-1024:1023", F_OK) = -1 ENOENT',
        '101 access("/advisor-route-phase-16384:16384", F_OK) = -1 ENOENT',
        '101 access("/advisor-route-phase-16384:16383", F_OK) = -1 ENOENT',
        '101 access("/advisor-route-phase-end", F_OK) = -1 ENOENT',
        *['101 process_vm_readv(102, [...], 1, [...], 1, 0) = 4'] * 5,  # after the phases
    ])
    counts = emitted.phase_counts(log)
    assert counts == {(1, 16384): 8, (1 << 30, 16384): 0, (1024, 1024): 8, (1024, 1023): 0,
                      (16384, 16384): 0, (16384, 16383): 0}
    trusted, why = trust.trace_verdict(counts, 8)
    assert not trusted and "16384 written through MPI_T sent 16384-byte messages by the copy " \
        "path" in why and "1024-byte" not in why
    counts[(16384, 16384)] = 9
    assert trust.trace_verdict(counts, 8)[0] is True
    with pytest.raises(ValueError):
        emitted.phase_counts("101 process_vm_readv(102) = 8")


@pytest.mark.integration
def test_the_switch_is_traced_on_the_real_mpich(traced_ctx):
    """MPICH 5.0.2 (the test venv's wheel) routes every written threshold as it says."""
    from advisor_mpich_cma import trust

    ev = trust.run_trace_check(traced_ctx, MpiFacts(implementation="mpich", flavour="upstream"))
    if ev is None:
        pytest.skip("strace cannot trace MPI launches here")
    assert ev.values["method"] == "strace" and ev.values["trusted"] is True, ev.values
    (f,) = trust.check_findings([ev])
    assert f.id == "cma-mpit-checked" and "traced" in f.message


@pytest.mark.integration
def test_the_switch_check_launch_also_traces_the_default_in_the_emitted_form(traced_ctx):
    """The switch check's launch starts with the library default in the environment and, before
    any MPI_T write, traces it as ``run_route_check`` would in a launch of its own; advice that
    keeps that default takes its ``cma-emitted-route`` from there (one traced launch, not two),
    and the switch verdict is drawn from the MPI_T phases alone."""
    from advisor_mpich_cma import measure, trust

    mpi = MpiFacts(implementation="mpich", flavour="upstream")
    ev = trust.run_trace_check(traced_ctx, mpi, env_threshold=8192)
    if ev is None:
        pytest.skip("strace cannot trace MPI launches here")
    assert ev.values["trusted"] is True and ev.values["phases"].startswith("1:16384=")
    assert ev.values["env_form.checked"] is True and ev.values["env_form.behaves"] is True
    assert ev.values["env_form.calls_below"] == 0 < ev.values["env_form.calls_at"]
    (em,) = measure.emitted_evidence(traced_ctx, mpi, 8192, ev)
    assert em.id == emitted.EMITTED and em.values["traced_in"] == "the MPI_T switch check's launch"
    assert em.values["behaves"] is True and em.values["threshold_bytes"] == 8192
    assert emitted.emitted_findings([em])[1] is True
