"""glibc's own list of its tunables: ``ld.so --list-tunables`` (glibc >= 2.33).

The dynamic loader prints one line per tunable, ``NAME: VALUE (min: MIN, max: MAX)``, with the
value in effect for the environment it runs with (an inherited ``GLIBC_TUNABLES`` included);
numbers are hexadecimal or decimal, string tunables have no range (glibc manual, "Tunables";
``elf/dl-tunables.c``, ``__tunables_print``).  ``advisor lint`` reads it for the names and ranges
``GLIBC_TUNABLES`` accepts; plugins read it for the current value of a tunable they measure, and
for the value glibc actually took from a ``GLIBC_TUNABLES`` they set.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Union

#: Seconds allowed for ``ld.so --list-tunables`` (~0.03 s measured here; a wide margin for a
#: loaded node).
LIST_TUNABLES_TIMEOUT_S = 10.0

#: Loader paths tried when ``/proc/self/maps`` names none (x86-64 and aarch64, as Debian, RHEL
#: and SUSE install them).
LD_SO_CANDIDATES = (
    "/lib64/ld-linux-x86-64.so.2",
    "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "/lib/ld-linux-aarch64.so.1",
    "/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
)

_LINE = re.compile(r"^(glibc\.[A-Za-z0-9_.]+):\s*(\S*)(?:\s*\(min:\s*([^,]+),\s*max:\s*([^)]+)\))?")
_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
_OCT = re.compile(r"0[0-7]*")
_DEC = re.compile(r"[1-9][0-9]*")
_LOADER = re.compile(r"/ld-linux[^/]*\.so[^/]*$|/ld-[0-9.]+\.so$|/ld64\.so[^/]*$")


@dataclass(frozen=True)
class Tunable:
    """One line of ``ld.so --list-tunables``.

    Attributes:
        name: the tunable, e.g. ``glibc.cpu.x86_non_temporal_threshold``.
        value: the value in effect: an int for a number (bytes for size tunables), else the text.
        min: the smallest value glibc accepts, None for a string tunable.
        max: the largest value glibc accepts, None for a string tunable.
        text: the value as glibc printed it (``0x6300000``).
    """

    name: str
    value: Union[int, str]
    min: Optional[int] = None
    max: Optional[int] = None
    text: str = ""


def parse_number(text: Optional[str]) -> Optional[int]:
    """A tunable number as glibc reads it (``tunables_strtoul`` in ``elf/dl-tunables.c``, later
    ``_dl_strtoul`` in ``elf/dl-misc.c``: base 16 after ``0x``, base 8 after a leading ``0``,
    else base 10) -> int; None for None or anything else."""
    if text is None:
        return None
    t = text.strip()
    if _HEX.fullmatch(t):
        return int(t[2:], 16)
    if _OCT.fullmatch(t):
        return int(t, 8)
    if _DEC.fullmatch(t):
        return int(t, 10)
    return None


def parse_list_tunables(text: str) -> dict[str, Tunable]:
    """``ld.so --list-tunables`` output -> ``{name: Tunable}``; lines that are not a tunable
    are skipped (never raises)."""
    out: dict[str, Tunable] = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        name, raw, lo, hi = m.groups()
        num = parse_number(raw)
        out[name] = Tunable(name, num if num is not None else raw, parse_number(lo),
                            parse_number(hi), raw)
    return out


def find_ld_so() -> Optional[str]:
    """The dynamic loader this process runs under (``/proc/self/maps``), else the first of
    ``LD_SO_CANDIDATES`` that exists; None when neither is found."""
    try:
        for line in Path("/proc/self/maps").read_text().splitlines():
            fields = line.split()
            if len(fields) >= 6 and _LOADER.search(fields[-1]):
                return fields[-1]
    except OSError:
        pass
    return next((c for c in LD_SO_CANDIDATES if os.path.exists(c)), None)


def list_tunables_text(env: Optional[Mapping[str, str]] = None, *,
                       timeout_s: float = LIST_TUNABLES_TIMEOUT_S) -> Optional[str]:
    """stdout of ``ld.so --list-tunables`` run with ``env`` (None: this process's environment),
    or None when there is no loader, it fails, times out or prints nothing (glibc < 2.33)."""
    ld = find_ld_so()
    if ld is None:
        return None
    try:
        done = subprocess.run([ld, "--list-tunables"], capture_output=True, text=True,
                              timeout=timeout_s, env=None if env is None else dict(env),
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def list_tunables(env: Optional[Mapping[str, str]] = None, *,
                  timeout_s: float = LIST_TUNABLES_TIMEOUT_S) -> dict[str, Tunable]:
    """The tunables in effect for a process started with ``env`` (see ``list_tunables_text``);
    {} when the loader cannot list them."""
    text = list_tunables_text(env, timeout_s=timeout_s)
    return parse_list_tunables(text) if text else {}
