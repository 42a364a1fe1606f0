"""Node directories made from the recorded profile (profiles/x86_64-icelake-2core-vm.toml,
thinned as ``advisor probe --thin`` does), with per-node changes where a test needs them."""

from __future__ import annotations

import pytest
from fleet_support import scaled, write_node
from support import SHIPPED_PROFILE


@pytest.fixture(scope="session")
def thin_shipped():
    from advisor.fleet.thin import thin_profile
    from advisor.profile import load_profile

    return thin_profile(load_profile(SHIPPED_PROFILE))[0]


@pytest.fixture
def fleet_dir(tmp_path, thin_shipped):
    """node1..node5 of one class, each with its own small measurement difference (0.1 %-0.5 %),
    node3 measuring CMA bandwidth at half the rate of the others."""
    for i in range(1, 6):
        prof = scaled(thin_shipped, "mpich-cma", 1 + i / 1000)
        prof = scaled(prof, "host-buffer", 1 - i / 1000)
        if i == 3:
            prof = scaled(prof, "mpich-cma", 0.5)
        write_node(tmp_path, f"node{i}", prof)
    return tmp_path
