"""Kernel and C library facts: OS name, kernel release, glibc version.

Inputs: ``/proc/sys/kernel/{ostype,osrelease}`` (``platform`` on the live machine when absent) and,
on the live machine only, ``os.confstr("CS_GNU_LIBC_VERSION")`` (``"glibc 2.36"``; POSIX
``confstr``, glibc extension), falling back to ``platform.libc_ver()``.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Optional

from advisor.facts.util import Notes, is_live, read_optional
from advisor.models import KernelFacts


def parse_libc_version(text: str) -> str:
    """``"glibc 2.36"`` -> ``"2.36"``.  Raises ``ValueError`` for other C libraries or garbage."""
    name, _, version = text.strip().partition(" ")
    if name != "glibc" or not version or not version[0].isdigit():
        raise ValueError(f"not a glibc version string: {text!r}")
    return version


def live_glibc_version() -> Optional[str]:
    """glibc version of this process, or None when the C library is not glibc (musl)."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        text = None
    if text:
        return parse_libc_version(text)
    lib, version = platform.libc_ver()
    return version if lib == "glibc" and version else None


def detect_kernel(root: Path = Path("/"), notes: Optional[Notes] = None) -> KernelFacts:
    """Kernel facts of the machine under ``root``; never raises (failures go to ``notes``)."""
    notes = notes if notes is not None else Notes()
    live = is_live(root)

    def proc(name: str, fallback) -> Optional[str]:
        text = read_optional(root, f"proc/sys/kernel/{name}")
        if text is not None and text.strip():
            return text.strip()
        return (fallback() or None) if live else None

    return KernelFacts(
        system=notes.attempt("kernel: ostype", lambda: proc("ostype", platform.system)),
        release=notes.attempt("kernel: osrelease", lambda: proc("osrelease", platform.release)),
        glibc_version=notes.attempt("kernel: glibc", live_glibc_version) if live else None,
    )
