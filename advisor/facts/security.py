"""Security facts that decide whether one process may read another's memory (CMA, single copy):
Yama ``ptrace_scope``, seccomp mode, ``CAP_SYS_PTRACE``, container runtime, user/pid namespaces.

Sources: Yama ``/proc/sys/kernel/yama/ptrace_scope`` (kernel doc ``admin-guide/LSM/Yama``; absent
when Yama is not built in), the ``Seccomp:`` and ``CapEff:`` lines of ``/proc/self/status``
(``man 5 proc``; ``CAP_SYS_PTRACE`` is capability 19 in ``linux/capability.h``), container
markers ``/.dockerenv`` (Docker), ``/run/.containerenv`` (Podman), the ``APPTAINER_CONTAINER`` /
``SINGULARITY_CONTAINER`` variables (Apptainer docs, "environment and metadata"), the
``container`` variable (systemd container interface) and ``/proc/self/cgroup`` paths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional

from advisor.facts.util import Notes, is_live, read_link_or_text, read_optional, read_text
from advisor.models import SecurityFacts

#: Capability number of CAP_SYS_PTRACE (include/uapi/linux/capability.h).
CAP_SYS_PTRACE = 19

#: cgroup path fragments written by container runtimes, most specific first.
CGROUP_MARKERS = (
    ("kubepods", "kubernetes"),
    ("libpod", "podman"),
    ("docker", "docker"),
    ("containerd", "containerd"),
    ("lxc", "lxc"),
)


def parse_status(text: str) -> dict[str, str]:
    """``/proc/<pid>/status`` as ``{key: value}`` (values stripped).  Raises ``ValueError`` when
    there is no ``Name:`` line (the first line of every status file): not a status file."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    if "Name" not in out:
        raise ValueError("no 'Name:' line: not a /proc/<pid>/status file")
    return out


def parse_seccomp(status: Mapping[str, str]) -> Optional[int]:
    """Seccomp mode (0 off, 1 strict, 2 filter) from parsed status, None when the kernel does not
    report it (built without ``CONFIG_SECCOMP``).  Raises ``ValueError`` on a value outside 0..2."""
    if "Seccomp" not in status:
        return None
    mode = int(status["Seccomp"])
    if mode not in (0, 1, 2):
        raise ValueError(f"Seccomp mode {mode} outside 0..2")
    return mode


def has_capability(cap_hex: str, cap: int) -> bool:
    """Whether bit ``cap`` is set in a capability mask such as ``CapEff: 00000000a80425fb``.
    Raises ``ValueError`` when ``cap_hex`` is not hexadecimal."""
    return bool((int(cap_hex, 16) >> cap) & 1)


def parse_ptrace_scope(text: str) -> int:
    """Yama ``ptrace_scope`` value (0..3).  Raises ``ValueError`` otherwise."""
    value = int(text.strip())
    if not 0 <= value <= 3:
        raise ValueError(f"ptrace_scope {value} outside 0..3")
    return value


def detect_container(root: Path, environ: Mapping[str, str], cgroup: Optional[str]) -> str:
    """Container runtime name (``docker``, ``podman``, ``apptainer``, ``singularity``,
    ``kubernetes``, ``containerd``, ``lxc``, or the systemd ``container`` value), or ``"none"``."""
    if environ.get("APPTAINER_CONTAINER") or environ.get("APPTAINER_NAME"):
        return "apptainer"
    if environ.get("SINGULARITY_CONTAINER") or environ.get("SINGULARITY_NAME"):
        return "singularity"
    if (Path(root) / "run/.containerenv").exists():
        return "podman"
    if (Path(root) / ".dockerenv").exists():
        return "docker"
    if environ.get("container"):
        return environ["container"]
    for line in (cgroup or "").splitlines():
        path = line.split(":", 2)[-1]
        for marker, name in CGROUP_MARKERS:
            if marker in path:
                return name
    return "none"


def detect_security(root: Path = Path("/"), notes: Optional[Notes] = None, *,
                    environ: Optional[Mapping[str, str]] = None) -> SecurityFacts:
    """Security facts of the process/machine under ``root``.  ``environ`` defaults to
    ``os.environ`` on the live machine and to an empty mapping for a recorded tree.  Never raises;
    failures go to ``notes`` and leave the field None."""
    notes = notes if notes is not None else Notes()
    if environ is None:
        environ = os.environ if is_live(root) else {}
    status = notes.attempt("security: /proc/self/status",
                           lambda: parse_status(read_text(root, "proc/self/status")), {})

    def scope() -> Optional[int]:
        text = read_optional(root, "proc/sys/kernel/yama/ptrace_scope")
        return None if text is None else parse_ptrace_scope(text)  # None: Yama absent

    def cap() -> Optional[bool]:
        if "CapEff" not in status:
            raise ValueError("no CapEff line in /proc/self/status")
        return has_capability(status["CapEff"], CAP_SYS_PTRACE)

    def container() -> str:
        cgroup = read_optional(root, "proc/self/cgroup")
        return detect_container(root, environ, cgroup)

    return SecurityFacts(
        ptrace_scope=notes.attempt("security: Yama ptrace_scope", scope),
        seccomp_mode=notes.attempt("security: seccomp", lambda: parse_seccomp(status))
        if status else None,
        cap_sys_ptrace=notes.attempt("security: CAP_SYS_PTRACE", cap) if status else None,
        container=notes.attempt("security: container", container),
        user_namespace=notes.attempt("security: user namespace",
                                     lambda: read_link_or_text(root, "proc/self/ns/user")),
        pid_namespace=notes.attempt("security: pid namespace",
                                    lambda: read_link_or_text(root, "proc/self/ns/pid")),
    )
