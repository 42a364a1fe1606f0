"""The ``glibc-tunables`` evidence of the host-buffer probe (written by ``check``) and the
``GLIBC_TUNABLES`` value a stage runs a child with.

Values come from ``ld.so --list-tunables`` (``advisor.libraries.glibc_tunables``); items of
``GLIBC_TUNABLES`` are ``name=value`` pairs separated by ``:`` (glibc manual, "Tunables").
"""

from __future__ import annotations

import os
from typing import Any, Optional

from advisor.libraries.glibc_tunables import list_tunables
from advisor.models import Evidence

from . import evidence


def tunables_evidence() -> Evidence:
    """``glibc-tunables`` evidence: the current value, min and max of the tunables this plugin
    may advise (bytes or plain numbers), and the inherited GLIBC_TUNABLES value."""
    t = list_tunables()
    values: dict[str, Any] = {}
    for name in ("glibc.cpu.x86_non_temporal_threshold", "glibc.cpu.x86_shared_cache_size",
                 "glibc.malloc.hugetlb"):
        tun = t.get(name)
        for k in ("value", "min", "max"):
            v = getattr(tun, k, None)
            if isinstance(v, int):
                values[f"{name}.{k}"] = v
    if os.environ.get("GLIBC_TUNABLES"):
        values["GLIBC_TUNABLES"] = os.environ["GLIBC_TUNABLES"]
    values["list_tunables_available"] = bool(t)
    return Evidence(id=evidence.EV_TUNABLES, description="glibc tunables in effect (ld.so --list-tunables)",
                    values=values)


def merged_tunables(existing: Optional[str], item: str, value: str) -> str:
    """``existing`` GLIBC_TUNABLES with ``item=value`` set (replacing an earlier ``item``)."""
    parts = [p for p in (existing or "").split(":") if p and p.split("=", 1)[0] != item]
    return ":".join(parts + [f"{item}={value}"])

