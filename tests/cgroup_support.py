"""A cgroup with a CPU quota, for the tests that make one "node" of the test Slurm slow
(tests/slurm: the fleet outlier, the drift ``advisor check`` reports)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest


def slow_cgroup(name: str, quota: tuple[int, int]) -> Path:
    """A cgroup named ``name`` with the CPU quota ``(quota_us, period_us)`` (v1 ``cpu``
    hierarchy or v2 with the cpu controller); skips where none can be made."""
    quota_us, period = quota
    v1 = Path("/sys/fs/cgroup/cpu")
    try:
        if (v1 / "cpu.cfs_quota_us").exists():
            g = v1 / name
            g.mkdir(exist_ok=True)
            (g / "cpu.cfs_period_us").write_text(str(period))
            (g / "cpu.cfs_quota_us").write_text(str(quota_us))
            return g
        v2 = Path("/sys/fs/cgroup")
        if "cpu" in (v2 / "cgroup.controllers").read_text().split():
            (v2 / "cgroup.subtree_control").write_text("+cpu")
            g = v2 / name
            g.mkdir(exist_ok=True)
            (g / "cpu.max").write_text(f"{quota_us} {period}")
            return g
    except OSError as exc:
        pytest.skip(f"no cgroup with a CPU quota can be made here: {exc}")
    pytest.skip("no cgroup cpu controller here (v1 cpu hierarchy or v2 cpu controller)")


def remove_cgroup(g: Path) -> None:
    """Remove ``g`` once its last processes have left (at most 10 s)."""
    deadline = time.monotonic() + 10
    while g.exists() and time.monotonic() < deadline:
        try:
            g.rmdir()
        except OSError:  # the slow node's last processes are still leaving
            time.sleep(0.2)
