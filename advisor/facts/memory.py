"""Memory facts: total memory, base and huge page sizes, THP mode, NUMA nodes.

Inputs: ``/proc/meminfo`` (``MemTotal``, ``Hugepagesize``), the base page size (``os.sysconf``
live; ``KernelPageSize`` of ``/proc/self/smaps`` in a recorded tree), ``/sys/kernel/mm/hugepages/
hugepages-<N>kB`` (one directory per huge page size, kernel doc ``admin-guide/mm/hugetlbpage``),
``/sys/kernel/mm/transparent_hugepage/{enabled,defrag}`` (the bracketed word is the mode, kernel
doc ``admin-guide/mm/transhuge``) and ``/sys/devices/system/node/node<N>/cpulist``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

from advisor.facts.util import (Notes, is_live, parse_bracketed, parse_cpulist, read_optional,
                                 read_text, size_with_unit)
from advisor.models import MemoryFacts

THP = "sys/kernel/mm/transparent_hugepage"
_HUGEPAGE_DIR = re.compile(r"^hugepages-(\d+)kB$")


def parse_meminfo(text: str) -> dict[str, int]:
    """``/proc/meminfo`` as ``{name: bytes}`` for lines with a ``kB`` unit (counts such as
    ``HugePages_Total`` are kept as plain integers).  Raises ``ValueError`` when no line parses."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        value = value.strip()
        if not sep or not value:
            continue
        try:
            out[key.strip()] = size_with_unit(value)
        except ValueError:
            continue
    if not out:
        raise ValueError("no 'Name: value' line in meminfo")
    return out


def parse_smaps_page_size(text: str) -> int:
    """Base page size in bytes from the first ``KernelPageSize:`` line of ``/proc/<pid>/smaps``.
    Raises ``ValueError`` when absent."""
    for line in text.splitlines():
        if line.startswith("KernelPageSize:"):
            return size_with_unit(line.split(":", 1)[1])
    raise ValueError("no KernelPageSize line in smaps")


def huge_page_sizes(root: Path) -> list[int]:
    """Huge page sizes in bytes, ascending, from the ``hugepages-<N>kB`` directory names; an empty
    list when the kernel has no hugetlbfs support (the directory is absent)."""
    base = Path(root) / "sys/kernel/mm/hugepages"
    if not base.is_dir():
        return []
    sizes = []
    for entry in base.iterdir():
        m = _HUGEPAGE_DIR.match(entry.name)
        if m:
            sizes.append(int(m.group(1)) * 1024)
    return sorted(sizes)


def hugetlb_pages(root: Path) -> dict[str, int]:
    """Reserved hugetlbfs pages per huge page size: ``{size_bytes: nr_hugepages}`` (as strings
    for TOML keys); sizes whose ``nr_hugepages`` cannot be read are left out."""
    base = Path(root) / "sys/kernel/mm/hugepages"
    out: dict[str, int] = {}
    if not base.is_dir():
        return out
    for entry in base.iterdir():
        m = _HUGEPAGE_DIR.match(entry.name)
        nr = read_optional(root, f"sys/kernel/mm/hugepages/{entry.name}/nr_hugepages")
        if m and nr is not None and nr.strip().isdigit():
            out[str(int(m.group(1)) * 1024)] = int(nr.strip())
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def numa_nodes(root: Path) -> dict[str, str]:
    """NUMA node id -> cpulist text (``"0-7"``) for every ``node<N>`` under sysfs; each cpulist is
    validated.  Empty when the directory is absent (kernel without NUMA)."""
    base = Path(root) / "sys/devices/system/node"
    if not base.is_dir():
        return {}
    out: dict[str, str] = {}
    nodes = [p for p in base.iterdir() if re.fullmatch(r"node\d+", p.name)]
    for node in sorted(nodes, key=lambda p: int(p.name[4:])):
        text = (node / "cpulist").read_text().strip()
        parse_cpulist(text)  # raises ValueError on garbage
        out[node.name[4:]] = text
    return out


def detect_memory(root: Path = Path("/"), notes: Optional[Notes] = None) -> MemoryFacts:
    """Memory facts of the machine under ``root``; unknown fields are None, failures go to
    ``notes``.  Never raises."""
    notes = notes if notes is not None else Notes()
    meminfo = notes.attempt("memory: /proc/meminfo",
                            lambda: parse_meminfo(read_text(root, "proc/meminfo")), {})

    def page_size() -> Optional[int]:
        if is_live(root):
            return os.sysconf("SC_PAGE_SIZE")
        smaps = read_optional(root, "proc/self/smaps")
        return parse_smaps_page_size(smaps) if smaps is not None else None

    def thp(name: str) -> Optional[str]:
        text = read_optional(root, f"{THP}/{name}")
        return parse_bracketed(text) if text is not None else None  # absent: no THP support

    def pmd_size() -> Optional[int]:
        text = read_optional(root, f"{THP}/hpage_pmd_size")
        return int(text.strip()) if text is not None else None

    nodes = notes.attempt("memory: NUMA nodes", lambda: numa_nodes(root), None)
    return MemoryFacts(
        total_bytes=meminfo.get("MemTotal"),
        page_size_bytes=notes.attempt("memory: page size", page_size),
        huge_page_sizes_bytes=notes.attempt("memory: huge page sizes",
                                            lambda: huge_page_sizes(root), []),
        thp_enabled=notes.attempt("memory: THP enabled", lambda: thp("enabled")),
        thp_defrag=notes.attempt("memory: THP defrag", lambda: thp("defrag")),
        thp_pmd_size_bytes=notes.attempt("memory: THP page size", pmd_size),
        hugetlb_pages=notes.attempt("memory: hugetlb pages", lambda: hugetlb_pages(root), {}),
        numa_nodes=len(nodes) if nodes else None,
        numa_node_cpus=nodes or {},
    )
