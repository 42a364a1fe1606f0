"""advisor lint with the memory-pool plugin's checks of DLA-Future's Umpire pool settings."""

from __future__ import annotations

import pytest

from advisor import lint
from advisor.models import Facts, MemoryFacts
from support import BUILTIN_LIBRARIES

MADVISE = Facts(memory=MemoryFacts(thp_enabled="always [madvise] never",
                                   thp_pmd_size_bytes=2 << 20))
NEVER = Facts(memory=MemoryFacts(thp_enabled="always madvise [never]", thp_pmd_size_bytes=2 << 20))


def _lint(text: str, facts: Facts):
    from advisor.plugins import load

    reg = load(only_probes=["memory-pool"])
    assert {"memory-pool-host", "memory-pool-device"} <= set(reg.probes)
    entries = lint.parse_env_text(text, path="site.sh")
    return lint.lint_entries(entries, facts=facts, knobs=reg.knobs, probes=reg.probes,
                             libraries=BUILTIN_LIBRARIES)


def _ids(findings):
    return sorted(f.finding.id for f in findings)


@pytest.mark.parametrize("align", [3000, 24, 0])
def test_alignment_not_a_power_of_two_is_an_error(align):
    found = _lint(f"export DLAF_UMPIRE_HOST_MEMORY_POOL_ALIGNMENT_BYTES={align}\n", MADVISE)
    (f,) = [f for f in found if f.finding.id == "host-pool-alignment-not-power-of-two"]
    assert f.severity == "error" and f.line == 1 and "~(alignment - 1)" in f.finding.message


def test_block_plus_alignment_off_the_large_page_is_a_warning():
    text = ("export DLAF_UMPIRE_DEVICE_MEMORY_POOL_NEXT_BLOCK_BYTES=1073741824\n"
            "export DLAF_UMPIRE_DEVICE_MEMORY_POOL_ALIGNMENT_BYTES=16\n")
    (f,) = [f for f in _lint(text, MADVISE)
            if f.finding.id == "device-pool-block-not-large-page-multiple"]
    assert f.severity == "warning" and "1073741840" in f.finding.message and f.line == 1
    # the plugin's own advice (block = k x large page - alignment) lints clean
    good = ("export DLAF_UMPIRE_DEVICE_MEMORY_POOL_NEXT_BLOCK_BYTES=1071644672\n"
            "export DLAF_UMPIRE_DEVICE_MEMORY_POOL_ALIGNMENT_BYTES=2097152\n")
    assert not [f for f in _lint(good, MADVISE) if f.finding.id.startswith("device-pool")]


def test_host_blocks_not_checked_when_thp_is_never():
    text = "export DLAF_UMPIRE_HOST_MEMORY_POOL_NEXT_BLOCK_BYTES=1073741824\n"
    assert "host-pool-block-not-large-page-multiple" in _ids(_lint(text, MADVISE))
    assert "host-pool-block-not-large-page-multiple" not in _ids(_lint(text, NEVER))
