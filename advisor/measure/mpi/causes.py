"""Why CMA fails: Yama rules, errno -> cause mapping, log classification, seccomp profiles.

Pure functions only (no I/O), so every rule is tested on recorded data and the field cases.
Shared by the MPI plugins whose library uses CMA (MPICH, Open MPI's smsc cma): a blocked
``process_vm_readv`` has the same causes whichever library calls it.  What one library's init
does about them (MPICH >= 5.0 turning CMA off) stays with that library's plugin.

Sources:

* Yama ``ptrace_scope`` semantics: Linux ``Documentation/admin-guide/LSM/Yama.rst`` (0 classic
  same-uid rules; 1 only descendants, or a process that called ``PR_SET_PTRACER``; 2 only with
  ``CAP_SYS_PTRACE``; 3 no attach at all, not even with the capability).
* ``process_vm_readv(2)`` needs ``PTRACE_MODE_ATTACH_REALCREDS`` on the target (man 2
  process_vm_readv); EFAULT is "memory outside the caller's accessible address space" (a GPU
  device pointer is one), ESRCH "no process with this pid", ENOSYS a kernel without
  ``CONFIG_CROSS_MEMORY_ATTACH``.
* MPICH >= 5.0 turns CMA off at init when Yama ``ptrace_scope`` is not 0 and does not test the
  call itself (pmodels/mpich#7653, #7659; background.md section 3).
* Docker's default seccomp profile allows ``process_vm_readv``/``process_vm_writev`` without
  ``CAP_SYS_PTRACE`` only on kernels >= 4.8 since moby/moby#42083; with ``CAP_SYS_PTRACE`` on any
  kernel.  A process in another user namespace cannot attach to a process of the parent
  namespace even with the same uid (user_namespaces(7): capabilities count only in the
  process's own namespace).
* ``CAP_SYS_PTRACE`` is capability number 19 (``linux/capability.h``).
"""

from __future__ import annotations

import errno as _errno
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

#: ``CAP_SYS_PTRACE`` bit in ``CapEff`` (linux/capability.h).
CAP_SYS_PTRACE_BIT = 19

#: The syscalls CMA needs (man 2 process_vm_readv).
CMA_SYSCALLS = ("process_vm_readv", "process_vm_writev")

#: Kernel from which Docker's default profile allows the CMA calls without CAP_SYS_PTRACE
#: (moby/moby#42083: the relaxed rule carries ``minKernel: 4.8``).
DOCKER_RELAXED_MIN_KERNEL = (4, 8)

DISABLE_REMEDY = ("disable CMA in the MPI library (for MPICH: MPIR_CVAR_CH4_CMA_ENABLE=0; "
                  "HPE Cray MPICH: MPICH_SMP_SINGLE_COPY_MODE=NONE)")
YAMA_REMEDY = ("sysctl kernel.yama.ptrace_scope=0 (admin; security trade-off: any process may then "
               "attach to, read and write every other process of the same user, so a compromised "
               "process can steal secrets such as ssh-agent keys from its siblings)")
CAP_REMEDY = "run the container with --cap-add SYS_PTRACE (or allow the calls in its seccomp profile)"
DEVICE_REMEDY = ("CMA handles host memory only; device buffers need MPICH_GPU_SUPPORT_ENABLED=1 "
                 "and a linked GPU transport layer")


@dataclass(frozen=True)
class Cause:
    """One reason CMA cannot work.

    ``code`` is stable: ``yama``, ``seccomp``, ``capability``, ``user-namespace``,
    ``device-pointer``, ``no-kernel-support``, ``no-such-process``, ``unknown``.
    """

    code: str
    message: str
    remedies: tuple[str, ...] = field(default_factory=tuple)


def kernel_allows_sibling_attach(ptrace_scope: Optional[int], cap_sys_ptrace: bool) -> bool:
    """Whether Yama lets one process read a *sibling* (not a descendant) of the same user.

    :param ptrace_scope: Yama value 0-3, or None when Yama is absent.
    :param cap_sys_ptrace: the reader holds ``CAP_SYS_PTRACE``.
    :return: True for absent/0; for 1 and 2 only with the capability; never for 3.
    """
    if ptrace_scope is None or ptrace_scope == 0:
        return True
    if ptrace_scope in (1, 2):
        return bool(cap_sys_ptrace)
    return False


def cap_sys_ptrace_from_capeff(cap_eff: Optional[str]) -> Optional[bool]:
    """``CapEff`` hex string (``/proc/PID/status``) -> holds CAP_SYS_PTRACE; None if unknown."""
    if not cap_eff:
        return None
    try:
        return bool(int(cap_eff, 16) >> CAP_SYS_PTRACE_BIT & 1)
    except ValueError:
        return None


def kernel_tuple(release: Optional[str]) -> Optional[tuple[int, int]]:
    """``'4.4.0-116-generic' -> (4, 4)``; None when unparsable."""
    if not release:
        return None
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None


def errno_code(value: Any) -> Optional[int]:
    """Accept ``1``, ``'EPERM'``, ``'ok'`` (-> 0) or None; unknown names -> None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.lower() in ("ok", "0", "success"):
        return 0
    if text.isdigit():
        return int(text)
    return getattr(_errno, text.upper(), None)


_LOG_PATTERNS = (
    (re.compile(r"process_vm_readv\S*\s+failed\s*\(errno\s*(\d+)\)", re.I), None),
    (re.compile(r"process_vm_(?:readv|writev)[^\n]*bad address", re.I), _errno.EFAULT),
    (re.compile(r"process_vm_(?:readv|writev)[^\n]*operation not permitted", re.I), _errno.EPERM),
    (re.compile(r"(?:CMA|process_vm_readv)[^\n]*errno\s*[=:]?\s*(\d+)", re.I), None),
)


def classify_log(text: str) -> Optional[int]:
    """The errno of a CMA failure in a library's error output, or None when there is none.

    Recognises MPICH's ``process_vm_readv failed (errno 1)``, Cray MPICH's
    ``process_vm_readv: Bad address`` and ``... Operation not permitted`` messages, and
    Open MPI's ``CMA ... errno = 1`` lines.
    """
    for pattern, fixed in _LOG_PATTERNS:
        m = pattern.search(text or "")
        if m:
            return fixed if fixed is not None else int(m.group(1))
    return None


def _get(d: Optional[Mapping], key: str) -> Any:
    return d.get(key) if d else None


def explain(err: Any, *, reader: Optional[Mapping] = None, target: Optional[Mapping] = None,
            ptrace_scope: Optional[int] = None, cap_sys_ptrace: Optional[bool] = None,
            seccomp_mode: Optional[int] = None, container: Optional[str] = None,
            kernel_release: Optional[str] = None) -> list[Cause]:
    """Map a failed ``process_vm_readv`` to its causes, most specific first.

    :param err: errno (int or name such as ``'EPERM'``; 0/``'ok'`` -> no cause).
    :param reader: the reading process's own state as recorded by the live probe
        (``seccomp``, ``cap_eff``, ``user_ns``); preferred over the machine facts.
    :param target: the read process's state (``user_ns``).
    :param ptrace_scope, cap_sys_ptrace, seccomp_mode, container, kernel_release: machine
        facts, used where the probe recorded nothing.
    :return: list of ``Cause``; empty when ``err`` is success; a single ``unknown`` cause when
        an EPERM fits no known rule.
    """
    code = errno_code(err)
    if code == 0:
        return []
    if code == _errno.EFAULT:
        return [Cause("device-pointer",
                      "process_vm_readv returned EFAULT (Bad address): the address is not host "
                      "memory of the peer, typically a GPU device pointer handed to the "
                      "single-copy path. " + DEVICE_REMEDY,
                      (DEVICE_REMEDY, "tune nothing about the CMA threshold: it is not the cause"))]
    if code == _errno.ENOSYS:
        return [Cause("no-kernel-support", "the kernel has no cross-memory attach "
                      "(CONFIG_CROSS_MEMORY_ATTACH is off): process_vm_readv returns ENOSYS",
                      (DISABLE_REMEDY,))]
    if code == _errno.ESRCH:
        return [Cause("no-such-process", "process_vm_readv returned ESRCH: the peer is not "
                      "visible (another PID namespace, or it exited)", (DISABLE_REMEDY,))]
    causes: list[Cause] = []
    r_cap = cap_sys_ptrace_from_capeff(_get(reader, "cap_eff"))
    cap = r_cap if r_cap is not None else cap_sys_ptrace
    scope = _get(reader, "ptrace_scope") if reader and "ptrace_scope" in reader else ptrace_scope
    if scope is None:
        scope = ptrace_scope
    sec = _get(reader, "seccomp")
    if sec is None:
        sec = seccomp_mode
    r_ns, t_ns = _get(reader, "user_ns"), _get(target, "user_ns")
    if r_ns and t_ns and r_ns != t_ns:
        causes.append(Cause(
            "user-namespace",
            f"the two processes are in different user namespaces ({r_ns} vs {t_ns}): a process "
            "cannot attach to one outside its own user namespace, even with the same uid",
            ("start all ranks of a node in one user namespace (one container/unshare per node, "
             "not per rank)", DISABLE_REMEDY)))
    if sec == 2:
        msg = "a seccomp filter is active (Seccomp: 2) and denies process_vm_readv"
        rem = ["allow process_vm_readv and process_vm_writev in the seccomp profile"]
        if container and container not in ("none", ""):
            kt = kernel_tuple(kernel_release)
            msg += (f" (container runtime: {container}; Docker's default profile allows the CMA "
                    "calls without CAP_SYS_PTRACE only on kernels >= 4.8 since moby#42083")
            if kt is not None and kt < DOCKER_RELAXED_MIN_KERNEL:
                msg += f", and this kernel is {kt[0]}.{kt[1]}"
            msg += ")"
            if cap is False:
                msg += "; CAP_SYS_PTRACE is not held"
            rem.insert(0, CAP_REMEDY)
        causes.append(Cause("seccomp", msg, tuple(rem) + (DISABLE_REMEDY,)))
    if scope is not None and not kernel_allows_sibling_attach(scope, bool(cap)):
        why = {1: "only descendants may attach, and MPI ranks are sibling processes, not "
                  "parent and child",
               2: "only processes holding CAP_SYS_PTRACE may attach",
               3: "no process may attach at all, not even with CAP_SYS_PTRACE"}[int(scope)]
        rem = [YAMA_REMEDY] if scope != 3 else [
            "ptrace_scope=3 cannot be lowered without a reboot"]
        if scope in (1, 2):
            rem.append("grant CAP_SYS_PTRACE to the ranks (e.g. --cap-add SYS_PTRACE)")
        causes.append(Cause("yama", f"Yama ptrace_scope={scope}: {why}",
                            tuple(rem) + (DISABLE_REMEDY,)))
    if cap is False and container and container not in ("none", "") and not any(
            c.code == "seccomp" for c in causes):
        causes.append(Cause("capability", f"the {container} container does not grant "
                            "CAP_SYS_PTRACE", (CAP_REMEDY, DISABLE_REMEDY)))
    if not causes:
        causes.append(Cause("unknown", "process_vm_readv was refused (%s) and neither Yama, "
                            "seccomp nor user namespaces explain it (an LSM such as AppArmor or "
                            "SELinux may)" % (_errno.errorcode.get(code, err) if code else err),
                            (DISABLE_REMEDY,)))
    return causes


def remedies_of(causes: Iterable[Cause]) -> list[str]:
    """All remedies of ``causes``, first occurrence order, without duplicates."""
    seen: list[str] = []
    for c in causes:
        for r in c.remedies:
            if r not in seen:
                seen.append(r)
    return seen


# --------------------------------------------------------------------------- seccomp profiles


def seccomp_profile_allows_cma(profile: Mapping, *, kernel_release: Optional[str] = None,
                               caps: Iterable[str] = (), arch: str = "SCMP_ARCH_X86_64"
                               ) -> Optional[bool]:
    """Whether a Docker/OCI-format seccomp profile lets ``process_vm_readv`` through.

    Only an explanation: the live probe decides (cma-seccomp-matrix).  An allow rule counts
    only when a name is exactly a CMA syscall (a misspelt name such as ``process_vm_read``
    allows nothing), its ``includes`` (caps, minKernel, arches) hold and its ``excludes`` don't.

    :param profile: parsed JSON with ``defaultAction`` and ``syscalls`` (list of rules with
        ``names``/``name``, ``action``, optional ``includes``/``excludes``).
    :param kernel_release: uname release, for ``minKernel``.
    :param caps: capabilities the container holds, e.g. ``["CAP_SYS_PTRACE"]``.
    :return: True/False; None when the profile has no ``defaultAction``.
    """
    default = profile.get("defaultAction")
    if default is None:
        return None
    held = {c.upper() if c.upper().startswith("CAP_") else "CAP_" + c.upper() for c in caps}
    kt = kernel_tuple(kernel_release)

    def applies(rule: Mapping) -> bool:
        inc = rule.get("includes") or {}
        exc = rule.get("excludes") or {}
        if inc.get("caps") and not set(inc["caps"]) <= held:
            return False
        if inc.get("minKernel"):
            need = kernel_tuple(inc["minKernel"])
            if kt is None or need is None or kt < need:
                return False
        if inc.get("arches") and arch not in inc["arches"]:
            return False
        if exc.get("caps") and set(exc["caps"]) & held:
            return False
        if exc.get("arches") and arch in exc["arches"]:
            return False
        return True

    verdict = default == "SCMP_ACT_ALLOW"
    for rule in profile.get("syscalls") or []:
        names = list(rule.get("names") or []) + ([rule["name"]] if rule.get("name") else [])
        if "process_vm_readv" not in names or not applies(rule):
            continue
        verdict = rule.get("action") == "SCMP_ACT_ALLOW"
    return verdict
