"""``advisor lint`` for host-buffer: no plugin-specific checks (the probe has no ``lint`` hook).

The lint engine already checks this plugin's settings from its knob records (``knobs.py``: the
glibc tunables' names, types, version ranges and the ``GLIBC_TUNABLES`` list syntax).  A check
that needs this plugin's evidence or facts (say, ``glibc.malloc.hugetlb=1`` under THP ``never``)
goes here as ``lint(env, facts) -> list[Finding]`` and is then wired into ``HostBufferProbe``.
"""

from __future__ import annotations

from typing import Mapping

from advisor.models import Facts, Finding


def lint(env: Mapping[str, str], facts: Facts) -> list[Finding]:
    """Plugin-specific findings for one environment: none yet (see the module docstring)."""
    return []
