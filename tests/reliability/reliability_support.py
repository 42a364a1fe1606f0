"""Helpers of the reliability tests (``from reliability_support import ...``): run the real ``advisor`` CLI in a subprocess with the
test-only fault plugins (tests/reliability/fault_plugins) switched on, and find processes it
left behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from importlib.metadata import entry_points
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FAULT_DIST = HERE / "fault_plugins"
FAULT_KINDS = ("ok", "early", "raise", "exit", "hang", "orphan", "killrank", "nompiexec", "opencl", "facts-raise", "facts-exit",
               "facts-hang")


def fault_plugins_installed() -> bool:
    names = {ep.name for ep in entry_points(group="advisor")}
    return all(f"fault-{k}" in names for k in FAULT_KINDS)


def need_fault_plugins() -> None:
    """Skip the calling test when the fault plugin distribution is not installed."""
    if not fault_plugins_installed():
        pytest.skip(f"test fault plugins not installed: pip install -e {FAULT_DIST} "
                    "(the Makefile's test venv does)")


def advisor_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "advisor", *args]


def run_advisor(args, *, faults=(), env=None, timeout=120, cwd=None, **kw):
    """Run ``python -m advisor ARGS`` with ``ADVISOR_TEST_FAULTS`` set to ``faults`` and a unique
    ``ADVISOR_FAULT_RUN`` marker in the environment (inherited by every child, MPI ranks
    included).  Returns ``(CompletedProcess, marker)``."""
    marker = uuid.uuid4().hex
    full = dict(os.environ)
    full.pop("ADVISOR_LAUNCHER", None)
    full.update({"ADVISOR_TEST_FAULTS": ",".join(faults), "ADVISOR_FAULT_RUN": marker,
                 "ADVISOR_DISABLE_PLUGINS": "example-broken"})
    # this checkout's fault plugins, not those of the tree the venv installed them from
    full["PYTHONPATH"] = os.pathsep.join(p for p in (str(FAULT_DIST), full.get("PYTHONPATH"))
                                         if p)
    full.update(env or {})
    proc = subprocess.run(advisor_cmd(*args), capture_output=True, text=True, timeout=timeout,
                          env=full, cwd=cwd, **kw)
    return proc, marker


def leftovers(marker: str, *, wait_s: float = 3.0) -> list[str]:
    """Live processes whose environment carries ``ADVISOR_FAULT_RUN=marker`` (checked until
    none is left or ``wait_s`` seconds pass: a killed job may take a moment to be reaped)."""
    import psutil

    needle = f"ADVISOR_FAULT_RUN={marker}".encode()
    end = time.monotonic() + wait_s
    while True:
        found = []
        for pid in psutil.pids():
            if pid == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    env = fh.read()
                if needle in env.split(b"\0"):
                    p = psutil.Process(pid)
                    if p.status() != psutil.STATUS_ZOMBIE:
                        found.append(f"{pid} {' '.join(p.cmdline())[:120]}")
            except (OSError, psutil.Error):
                continue
        if not found or time.monotonic() > end:
            return found
        time.sleep(0.2)


def kill_leftovers(marker: str) -> None:
    import psutil

    for line in leftovers(marker, wait_s=0):
        try:
            psutil.Process(int(line.split()[0])).kill()
        except psutil.Error:
            pass


#: A probe's progress line in a log (advisor.cli.progress.LogProgress): not an error line.
PROGRESS_LINE = re.compile(r"^advisor: \[\s*\d+\.\d s\] ")


def one_line_error(stderr: str) -> list[str]:
    """Error lines of ``stderr`` (warnings about other plugins and progress lines left out)."""
    return [l for l in stderr.splitlines() if l.strip() and "warning:" not in l
            and not PROGRESS_LINE.match(l)]
