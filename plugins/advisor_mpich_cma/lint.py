"""``advisor lint`` for mpich-cma: checks of an environment (and of a job's error log) against
the facts.

``lint`` is the probe's hook: the pure ``lint_env`` checks without the generic type/family checks
the lint engine already does from the knob records, plus, only when the environment turns CMA
on explicitly, the live sibling test (~0.3 s): an enable on a machine where CMA fails is an
error.
"""

from __future__ import annotations

import errno as _errno
from typing import Mapping, Optional

from advisor.knobs import version_in
from advisor.measure.mpi.causes import classify_log, explain, remedies_of
from advisor.measure.mpi.usability import blocked_finding, sibling_evidence
from advisor.models import Evidence, Facts, Finding

from advisor_mpich_cma import knobs
from advisor_mpich_cma.evidence import SIBLING


def lint(env: Mapping[str, str], facts: Facts) -> list[Finding]:
    """The probe's ``lint(env, facts)`` hook (see the module docstring)."""
    found = lint_env(env, facts, generic=False)
    assignment = explicit_cma_enable(env)
    if assignment:
        f = blocked_enable_finding(assignment, sibling_evidence(SIBLING), facts)
        if f is not None:
            found.append(f)
    return found

def diagnose_log(text: str, facts: Facts) -> list[Finding]:
    """Findings for a job's error output that mentions a CMA failure (EPERM vs EFAULT)."""
    code = classify_log(text)
    if code is None:
        return []
    sec = facts.security
    causes = explain(code, ptrace_scope=sec.ptrace_scope, cap_sys_ptrace=sec.cap_sys_ptrace,
                     seccomp_mode=sec.seccomp_mode, container=sec.container,
                     kernel_release=facts.kernel.release)
    fid = "cma-device-pointer" if code == _errno.EFAULT else "cma-blocked"
    return [Finding(id=fid, severity="error",
                    message=f"{_errno.errorcode.get(code, code)}: " + "; ".join(
                        c.message for c in causes),
                    remedy="; ".join(remedies_of(causes)))]


def _lookup(env: Mapping[str, str], name: str) -> tuple[Optional[str], Optional[str]]:
    k = knobs.knob(name)
    for n in [k.name, *k.aliases]:
        if n in env:
            return n, env[n]
    return None, None


def explicit_cma_enable(env: Mapping[str, str]) -> Optional[str]:
    """The assignment (``NAME=value``) by which ``env`` turns CMA on explicitly, or None:
    ``MPIR_CVAR_CH4_CMA_ENABLE=1`` (any prefix) or ``MPICH_SMP_SINGLE_COPY_MODE=CMA``."""
    name, val = _lookup(env, knobs.CMA_ENABLE)
    if name and (val or "").strip() == "1":
        return f"{name}=1"
    name, val = _lookup(env, knobs.CRAY_MODE)
    if name and (val or "").strip().upper() == "CMA":
        return f"{name}=CMA"
    return None


def blocked_enable_finding(assignment: str, sibling: Evidence, facts: Facts) -> Optional[Finding]:
    """An error when ``assignment`` turns CMA on and the live sibling test failed here
    (``advisor.measure.mpi.usability.blocked_finding``), else None."""
    return blocked_finding(sibling, facts, finding_id="cma-enable-blocked", severity="error",
                           message=f"{assignment} turns CMA on, but CMA fails on this machine: "
                                   "{reason}; MPI jobs will abort with 'process_vm_readv "
                                   "failed'")


def lint_env(env: Mapping[str, str], facts: Facts, *, generic: bool = True) -> list[Finding]:
    """Check an environment mapping's CMA settings against the facts (pure; for ``advisor lint``).

    Reports: an explicit CMA enable that MPICH's init check overrides (ptrace_scope != 0), a
    single-copy threshold with single copy turned off (inert), XPMEM inert under GPU support,
    XPMEM without its device, and with ``generic`` also the checks the
    lint engine does from knob records for every library (badly typed values: thresholds are
    plain integer bytes; the wrong settings family for the flavour; a name the version lacks).
    """
    out: list[Finding] = []
    impl = (facts.mpi.implementation or "").lower()
    flavour = facts.mpi.flavour
    version = facts.mpi.version
    scope = facts.security.ptrace_scope
    for k in knobs.KNOBS if generic else ():
        for n in [k.name, *k.aliases]:
            if n not in env:
                continue
            val = env[n].strip()
            if k.type in ("int", "bytes"):
                try:
                    iv = int(val)
                    if k.allowed is not None and iv not in k.allowed:
                        raise ValueError
                    if k.minimum is not None and iv < k.minimum:
                        raise ValueError
                except ValueError:
                    out.append(Finding(id="cma-bad-value", severity="error",
                                       message=f"{n}={val!r}: expected "
                                       + (f"one of {k.allowed}" if k.allowed else
                                          "a plain integer number of bytes")))
            elif k.type == "enum" and k.allowed and val.upper() not in k.allowed:
                out.append(Finding(id="cma-bad-value", severity="error",
                                   message=f"{n}={val!r}: expected one of {k.allowed}"))
            if impl == "mpich" and k.flavour and flavour and k.flavour != flavour:
                other = "HPE Cray MPICH" if flavour == knobs.CRAY else "upstream MPICH"
                out.append(Finding(id="cma-wrong-family", severity="warning",
                                   message=f"{n} is a {k.flavour} setting; {other} ignores it"))
            elif impl == "mpich" and k.versions and version and not k.valid_for(version):
                out.append(Finding(id="cma-not-in-version", severity="warning",
                                   message=f"{n} is not understood by MPICH {version} "
                                           f"(valid {k.versions})"))
    name, val = _lookup(env, knobs.CMA_ENABLE)
    if (name and val and val.strip() == "1" and flavour != knobs.CRAY and scope not in (None, 0)
            and (version is None or version_in(version, ">=5"))):
        out.append(Finding(
            id="cma-enable-overridden", severity="warning",
            message=(f"{name}=1 has no effect: MPICH's init check turns CMA off because Yama "
                     f"ptrace_scope={scope} (it only keeps CMA with 0 or no Yama, whatever the "
                     "capabilities)"),
            remedy="remove it, or lower ptrace_scope to 0 (admin; security trade-off)"))
    tname, tval = _lookup(env, knobs.CMA_THRESHOLD)
    if name and val is not None and val.strip() == "0" and tname:
        out.append(Finding(
            id="cma-threshold-inert", severity="warning",
            message=(f"{tname}={(tval or '').strip()} does nothing: {name}=0 turns CMA off, so "
                     "no message size uses the single-copy path the threshold selects"),
            remedy=f"remove {tname}, or drop {name}=0 if single copy should be used"))
    mname, mode = _lookup(env, knobs.CRAY_MODE)
    sname, size = _lookup(env, knobs.CRAY_SIZE)
    if mode and mode.strip().upper() == "NONE" and sname:
        out.append(Finding(
            id="cma-threshold-inert", severity="warning",
            message=(f"{sname}={(size or '').strip()} does nothing: {mname}=NONE turns single "
                     "copy off, so no message size uses it"),
            remedy=f"remove {sname}, or set {mname} to CMA or XPMEM"))
    _, gpu = _lookup(env, knobs.CRAY_GPU)
    if mode and mode.strip().upper() == "XPMEM":
        if gpu and gpu.strip() == "1":
            out.append(Finding(
                id="cma-xpmem-inert-gpu", severity="warning",
                message=("MPICH_SMP_SINGLE_COPY_MODE=XPMEM is inert when "
                         "MPICH_GPU_SUPPORT_ENABLED=1: the effective mode is CMA, so the CMA "
                         "usability checks apply"),
                remedy="set MPICH_SMP_SINGLE_COPY_MODE=CMA (or NONE if CMA is blocked)"))
        if facts.extra.get("mpich-cma", {}).get("xpmem_device") is False:
            out.append(Finding(
                id="cma-xpmem-no-device", severity="error",
                message="MPICH_SMP_SINGLE_COPY_MODE=XPMEM but this node has no xpmem device "
                        "(/dev/xpmem): XPMEM cannot work here; never recommend it",
                remedy="MPICH_SMP_SINGLE_COPY_MODE=CMA where CMA is usable, else NONE"))
    return out
