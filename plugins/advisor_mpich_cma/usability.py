"""Can CMA work here?  Decided from the live probes' evidence (pure).

The sibling ``process_vm_readv`` test and the 2-rank MPI smoke run decide; the machine facts and
a parsed seccomp profile only explain a failure (``advisor_mpich_cma.causes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from advisor.models import Evidence, Facts

from advisor_mpich_cma.causes import DISABLE_REMEDY, Cause, classify_log, errno_code, explain
from advisor_mpich_cma.evidence import SIBLING, smokes as _smokes


@dataclass(frozen=True)
class Usability:
    usable: bool
    reason: str
    causes: tuple[Cause, ...] = ()
    evidence: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def usability(evidence: Iterable[Evidence], facts: Facts,
              profile_allows: Optional[bool] = None) -> Usability:
    """Can CMA work here?  Decided by the live probes only (sibling test, then the MPI smoke
    run); the machine facts and a parsed seccomp profile only explain a failure.

    :param profile_allows: what a parsed seccomp profile says (``seccomp_profile_allows_cma``),
        when one is known; if it disagrees with the live probe the probe wins and a note says so.
    :return: ``Usability``; ``usable`` False when any live probe failed; unknown (no probe)
        counts as usable=False with the reason "not tested".
    """
    evidence = list(evidence)
    sec = facts.security
    sib = Evidence.find(evidence, SIBLING)
    smokes = _smokes(evidence)
    if sib is None and not smokes:
        return Usability(False, "CMA not tested: no live process_vm_readv probe ran")
    causes: list[Cause] = []
    used: list[str] = []
    notes: list[str] = []
    probe_ok = True
    if sib is not None:
        v = sib.values
        used.append(SIBLING)
        result = v.get("result")
        code = errno_code(v.get("errno")) if v.get("errno") not in (None, -1) else errno_code(result)
        if code != 0:
            probe_ok = False
            reader = {"seccomp": v.get("reader_seccomp"), "cap_eff": v.get("reader_cap_eff"),
                      "user_ns": v.get("reader_user_ns")}
            target = {"user_ns": v.get("target_user_ns")}
            causes += explain(code if code is not None else result, reader=reader, target=target,
                              ptrace_scope=sec.ptrace_scope, cap_sys_ptrace=sec.cap_sys_ptrace,
                              seccomp_mode=sec.seccomp_mode, container=sec.container,
                              kernel_release=facts.kernel.release)
            if v.get("parent_reads_child") in ("ok", 0):
                notes.append("a parent reading its own child succeeded: only the sibling test "
                             "shows what MPI ranks meet")
    for smoke in smokes:
        if not probe_ok:
            break
        v = smoke.values
        if v.get("launch_failed"):
            notes.append(f"{smoke.id}: the MPI job did not run, which says nothing about CMA")
            continue
        used.append(smoke.id)
        if v.get("ok"):
            continue
        probe_ok = False
        code = errno_code(v.get("errno")) if v.get("errno") not in (None, -1) else \
            classify_log(str(v.get("error", "")))
        reader = {"seccomp": v.get("rank_seccomp"), "cap_eff": v.get("rank_cap_eff")}
        target = None
        if v.get("rank_user_ns_distinct"):
            reader["user_ns"], target = "rank0", {"user_ns": "rank1"}
        if code is None:
            causes.append(Cause("unknown", "the 2-rank MPI run with CMA forced on failed: "
                                + str(v.get("error", ""))[:300], (DISABLE_REMEDY,)))
        else:
            causes += explain(code, reader=reader, target=target,
                              ptrace_scope=sec.ptrace_scope, cap_sys_ptrace=sec.cap_sys_ptrace,
                              seccomp_mode=sec.seccomp_mode, container=sec.container,
                              kernel_release=facts.kernel.release)
    if not used:
        return Usability(False, "CMA not tested: " + "; ".join(notes), (), (), tuple(notes))
    if profile_allows is not None and profile_allows != probe_ok:
        notes.append("the seccomp profile says process_vm_readv is %s but the live probe %s: "
                     "trusting the live probe" % ("allowed" if profile_allows else "denied",
                                                  "succeeded" if probe_ok else "failed"))
    if probe_ok:
        return Usability(True, "sibling processes can read each other with process_vm_readv"
                         + (" and a 2-rank MPI run with CMA forced on completed"
                            if smokes else ""), (), tuple(used), tuple(notes))
    reason = "CMA blocked: " + "; ".join(c.message for c in causes)
    if notes:
        reason += " (" + "; ".join(notes) + ")"
    return Usability(False, reason, tuple(causes), tuple(used), tuple(notes))
