"""Can CMA work here?  Decided from the live probes' evidence, shared by the MPI plugins.

* ``sibling_evidence``: runs the sibling ``process_vm_readv`` test
  (``advisor.measure.mpi.sibling``) and records it under the calling plugin's evidence id;
* ``sibling_causes``: the causes (``advisor.measure.mpi.causes``) of a failed sibling test;
* ``usability`` (pure): the verdict from the sibling test and the 2-rank smoke runs with CMA
  forced on; the machine facts and a parsed seccomp profile only explain a failure;
* ``blocked_finding`` (pure): the finding of a setting that turns CMA on where the sibling test
  failed, in the calling plugin's words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from advisor.measure.mpi.causes import (DISABLE_REMEDY, Cause, classify_log, errno_code, explain,
                                        remedies_of)
from advisor.models import Evidence, Facts, Finding


@dataclass(frozen=True)
class Usability:
    """The verdict: ``usable``, one ``reason`` line, the ``causes`` of a failure, the ids of
    the evidence that decided and ``notes`` (what did not decide, and why)."""

    usable: bool
    reason: str
    causes: tuple[Cause, ...] = ()
    evidence: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def sibling_evidence(ev_id: str, **kw: Any) -> Evidence:
    """Run the live sibling test (``advisor.measure.mpi.sibling.sibling_probe``, ~0.3 s; ``kw``
    are its arguments) and record it as evidence ``ev_id``: values ``result`` ("ok", "EPERM",
    ..., "error"), ``errno`` (-1 unknown), ``verified``, ``parent_reads_child`` and the reader's
    and target's security state.  Never raises for a failed read."""
    from advisor.measure.mpi.sibling import sibling_probe  # imports only the stdlib

    r = sibling_probe(**kw)
    reader, target = r.get("reader") or {}, r.get("target") or {}
    values = {"kind": "siblings", "result": r.get("result"),
              "errno": r.get("errno") if r.get("errno") is not None else -1,
              "verified": bool(r.get("verified", False)),
              "parent_reads_child": r.get("parent_reads_child"),
              "reader_seccomp": reader.get("seccomp"), "reader_cap_eff": reader.get("cap_eff"),
              "reader_user_ns": reader.get("user_ns"), "target_user_ns": target.get("user_ns"),
              "reader_ppid": reader.get("ppid"), "target_ppid": target.get("ppid"),
              "error": r.get("error")}
    return Evidence(id=ev_id, description="two sibling processes: one reads the other's "
                    "buffer with process_vm_readv (what MPI ranks do)",
                    values={k: v for k, v in values.items() if v is not None})


def _machine(facts: Facts) -> dict:
    sec = facts.security
    return {"ptrace_scope": sec.ptrace_scope, "cap_sys_ptrace": sec.cap_sys_ptrace,
            "seccomp_mode": sec.seccomp_mode, "container": sec.container,
            "kernel_release": facts.kernel.release}


def sibling_code(values: Mapping[str, Any]) -> Optional[int]:
    """The errno of a sibling test's values (0: the read worked; None: unknown)."""
    if values.get("errno") not in (None, -1):
        return errno_code(values.get("errno"))
    return errno_code(values.get("result"))


def sibling_causes(values: Mapping[str, Any], facts: Facts) -> list[Cause]:
    """The causes of a sibling test's outcome (``sibling_evidence`` values): the processes'
    own recorded state first, the machine facts where it recorded nothing; [] when it
    worked."""
    code = sibling_code(values)
    reader = {"seccomp": values.get("reader_seccomp"), "cap_eff": values.get("reader_cap_eff"),
              "user_ns": values.get("reader_user_ns")}
    return explain(code if code is not None else values.get("result"), reader=reader,
                   target={"user_ns": values.get("target_user_ns")}, **_machine(facts))


def _smoke_causes(v: Mapping[str, Any], facts: Facts) -> list[Cause]:
    code = errno_code(v.get("errno")) if v.get("errno") not in (None, -1) else \
        classify_log(str(v.get("error", "")))
    reader = {"seccomp": v.get("rank_seccomp"), "cap_eff": v.get("rank_cap_eff")}
    target = None
    if v.get("rank_user_ns_distinct"):
        reader["user_ns"], target = "rank0", {"user_ns": "rank1"}
    if code is None:
        return [Cause("unknown", "the 2-rank MPI run with CMA forced on failed: "
                      + str(v.get("error", ""))[:300], (DISABLE_REMEDY,))]
    return explain(code, reader=reader, target=target, **_machine(facts))


def usability(sibling: Optional[Evidence], smokes: Sequence[Evidence], facts: Facts,
              profile_allows: Optional[bool] = None) -> Usability:
    """Can CMA work here?  Decided by the live probes only (the sibling test, then the 2-rank
    MPI smoke runs with CMA forced on); the machine facts and a parsed seccomp profile only
    explain a failure.

    :param sibling: the ``sibling_evidence`` record, or None when the test did not run.
    :param smokes: the smoke runs' evidence, in the order they count; values ``ok``,
        ``launch_failed`` (the job did not run: says nothing about CMA), ``errno`` (-1 unknown)
        or ``error`` (the launch's output, classified by ``causes.classify_log``), and the
        ranks' ``rank_seccomp``, ``rank_cap_eff``, ``rank_user_ns_distinct``
        (``rank.rank_security``).
    :param profile_allows: what a parsed seccomp profile says (``seccomp_profile_allows_cma``),
        when one is known; if it disagrees with the live probe the probe wins and a note says so.
    :return: ``Usability``; ``usable`` False when any live probe failed; unknown (no probe)
        counts as usable=False with the reason "not tested".
    """
    if sibling is None and not smokes:
        return Usability(False, "CMA not tested: no live process_vm_readv probe ran")
    causes: list[Cause] = []
    used: list[str] = []
    notes: list[str] = []
    probe_ok = True
    if sibling is not None:
        v = sibling.values
        used.append(sibling.id)
        if sibling_code(v) != 0:
            probe_ok = False
            causes += sibling_causes(v, facts)
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
        causes += _smoke_causes(v, facts)
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


def blocked_finding(sibling: Evidence, facts: Facts, *, finding_id: str, severity: str,
                    message: str, remedies: Sequence[str] = (),
                    keep_disable: bool = True) -> Optional[Finding]:
    """The finding of a setting that turns CMA on where the sibling test ``sibling`` failed;
    None where it worked.

    :param message: the plugin's words; ``{reason}`` in it is replaced by the verdict's reason.
    :param remedies: the plugin's own remedies, after those of the causes.
    :param keep_disable: keep the causes' generic "disable CMA" remedy (False drops it, for a
        library whose own remedy says how).
    :return: ``Finding`` (``evidence`` = [``sibling.id``], ``remedy`` the remedies joined by
        "; ", else ``DISABLE_REMEDY``), or None.
    """
    use = usability(sibling, (), facts)
    if use.usable:
        return None
    found = [r for r in remedies_of(use.causes) if keep_disable or r != DISABLE_REMEDY]
    return Finding(id=finding_id, severity=severity, evidence=[sibling.id],
                   message=message.replace("{reason}", use.reason),
                   remedy="; ".join([*found, *remedies]) or DISABLE_REMEDY)
