"""Helpers shared by the detectors: reading files under a root, lenient field evaluation.

Every detector reads its inputs relative to a ``root`` (``Path("/")`` on the live machine, a
recorded tree under ``tests/data/facts/<machine>/`` in tests), so the same code runs on both.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional, TypeVar

T = TypeVar("T")

LIVE_ROOT = Path("/")


class Notes:
    """Collects one-line warnings from detectors; ``Facts.warnings`` is built from it."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, what: str, exc: BaseException | str) -> None:
        """Record ``what`` failed; ``exc`` is an exception or a reason (kept to one line)."""
        if isinstance(exc, BaseException):
            text = f"{type(exc).__name__}: {exc}"
        else:
            text = str(exc)
        line = " ".join(f"{what}: {text}".split())
        if line not in self.warnings:
            self.warnings.append(line)

    def attempt(self, what: str, fn: Callable[[], T], default: T = None) -> T:
        """``fn()``, or ``default`` with a warning when it raises any ``Exception``."""
        try:
            return fn()
        except Exception as exc:  # lenient by contract: a detector never takes detect() down
            self.warn(what, exc)
            return default


def is_live(root: Path) -> bool:
    """True when ``root`` is the real file system root (live values may then be used)."""
    return Path(root) == LIVE_ROOT


def read_text(root: Path, rel: str) -> str:
    """Text of ``root/rel`` (``rel`` without leading slash).  Raises ``OSError`` when unreadable."""
    return (Path(root) / rel).read_text(encoding="utf-8", errors="replace")


def read_optional(root: Path, rel: str) -> Optional[str]:
    """Text of ``root/rel``, or None when the file does not exist (absence is a fact, not an
    error).  Other ``OSError`` (permission denied, I/O) propagate."""
    try:
        return read_text(root, rel)
    except FileNotFoundError:
        return None


def read_link_or_text(root: Path, rel: str) -> str:
    """Target of the symlink ``root/rel`` (``/proc/self/ns/*``); a recorded tree may store the
    target as the file's text instead.  Raises ``OSError`` when neither is readable."""
    path = Path(root) / rel
    if path.is_symlink():
        return os.readlink(path)
    return path.read_text(encoding="utf-8").strip()


def parse_cpulist(text: str) -> list[int]:
    """CPU ids of a sysfs cpulist such as ``"0-3,8,10-11"`` (Linux ``cpulist_parse`` format).

    Raises ``ValueError`` on anything else.  An empty string is an empty list.
    """
    cpus: list[int] = []
    text = text.strip()
    if not text:
        return cpus
    for part in text.split(","):
        lo, sep, hi = part.partition("-")
        if sep:
            a, b = int(lo), int(hi)
            if b < a:
                raise ValueError(f"bad cpulist range {part!r}")
            cpus.extend(range(a, b + 1))
        else:
            cpus.append(int(lo))
    return cpus


def parse_bracketed(text: str) -> str:
    """The selected word of a sysfs choice file: ``"always [madvise] never"`` -> ``"madvise"``.

    A file holding one bare word (a value already reduced to the mode) is that word.  Raises
    ``ValueError`` when there is neither one bracketed word nor one bare word.
    """
    words = text.split()
    picked = [w[1:-1] for w in words if len(w) > 2 and w.startswith("[") and w.endswith("]")]
    if not picked and len(words) == 1 and "[" not in words[0] and "]" not in words[0]:
        picked = words
    if len(picked) != 1:
        raise ValueError(f"no single [selected] word in {text.strip()!r}")
    return picked[0]


def size_with_unit(text: str) -> int:
    """Bytes of a kernel size string: ``"2048K"``, ``"48K"``, ``"1M"``, ``"24684092 kB"``.

    The kernel uses binary units (K = 1024 bytes, sysfs cache ``size`` and ``/proc/meminfo``).
    Raises ``ValueError`` on anything else.
    """
    s = text.strip().replace(" ", "")
    units = {"kb": 1 << 10, "k": 1 << 10, "mb": 1 << 20, "m": 1 << 20, "gb": 1 << 30, "g": 1 << 30,
             "b": 1, "": 1}
    i = len(s)
    while i > 0 and not s[i - 1].isdigit():
        i -= 1
    number, unit = s[:i], s[i:].lower()
    if not number.isdigit() or unit not in units:
        raise ValueError(f"not a size: {text!r}")
    return int(number) * units[unit]
