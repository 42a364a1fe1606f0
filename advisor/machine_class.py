"""Machine classes: the facts that identical nodes of a partition share.

``Facts.fingerprint`` hashes every advice-relevant fact exactly, so two nodes built the same way
still differ by a few MiB of ``MemTotal``, by ``nr_hugepages`` or by a kernel patch release
(issue 15).  The *class* fingerprint keeps only what tells hardware and software apart:

* CPU: arch, vendor, model name, micro-architecture, physical and logical cores, L2/L3 sizes;
* memory: ``MemTotal`` rounded to the nearest :data:`MEMORY_GRANULE_BYTES`; base page size,
  huge page sizes, THP page size, THP mode (``enabled`` and ``defrag``), NUMA node count;
  left out: ``nr_hugepages`` (a runtime reservation) and the per-node cpulists;
* kernel: system, release cut to ``major.minor``; glibc version;
* MPI: implementation, flavour, version, device, mpi4py version (not the launcher path nor the
  version banner, which repeats the version);
* GPUs: per CUDA device its model name, memory, compute capability, driver and runtime version.

Public API: :func:`class_inputs`, :func:`class_id`, :func:`class_differences`, :func:`flatten`,
:data:`MEMORY_GRANULE_BYTES`.  Pure; ``Facts.class_fingerprint`` calls :func:`class_id`, so this
module sits below ``advisor.models`` and reads a ``Facts`` by its sections (:class:`ClassFacts`)
without importing it.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Protocol, Sequence

__all__ = ["MEMORY_GRANULE_BYTES", "ClassFacts", "class_inputs", "class_id", "class_differences",
           "flatten"]


class ClassFacts(Protocol):
    """The sections of an ``advisor.models.Facts`` the class fingerprint reads (each a pydantic
    model: ``cpu``, ``memory``, ``kernel``, ``mpi``, and the list ``cuda``)."""

    cpu: Any
    memory: Any
    kernel: Any
    mpi: Any
    cuda: Sequence[Any]

#: ``MemTotal`` is rounded to the nearest GiB.  MemTotal is physical memory less what firmware
#: and the kernel reserve (crashkernel, memmap, the kernel image), which differs between
#: identically built nodes by MiB to tens of MiB (issue 15 saw 1 MiB); two memory
#: configurations differ by at least one DIMM, and the smallest server DDR4/DDR5 RDIMM is 8 GiB.
#: Any granule between those keeps the two apart; 1 GiB is the one admins read (``free -g``).
MEMORY_GRANULE_BYTES = 1 << 30

_MAJOR_MINOR = re.compile(r"^(\d+)\.(\d+)")


def _kernel_series(release: "str | None") -> "str | None":
    """``'6.1.0-28-amd64'`` -> ``'6.1'``; an unparsable release is kept whole."""
    if release is None:
        return None
    m = _MAJOR_MINOR.match(release)
    return f"{m.group(1)}.{m.group(2)}" if m else release


def class_inputs(facts: ClassFacts) -> dict:
    """The facts the class fingerprint hashes, as JSON-ready data (see the module docstring).

    :return: ``{"cpu": {...}, "memory": {...}, "kernel": {...}, "mpi": {...}, "cuda": [...]}``;
        ``memory.total_gib`` is ``MemTotal`` in GiB rounded to the nearest integer.
    """
    mem = facts.memory
    total = mem.total_bytes
    return {
        "cpu": facts.cpu.model_dump(mode="json", exclude={"hypervisor_flag", "virtualization"}),
        "memory": {
            "total_gib": None if total is None else int(total / MEMORY_GRANULE_BYTES + 0.5),
            "page_size_bytes": mem.page_size_bytes,
            "huge_page_sizes_bytes": sorted(mem.huge_page_sizes_bytes),
            "thp_pmd_size_bytes": mem.thp_pmd_size_bytes,
            "thp_enabled": mem.thp_enabled,
            "thp_defrag": mem.thp_defrag,
            "numa_nodes": mem.numa_nodes,
        },
        "kernel": {"system": facts.kernel.system,
                   "series": _kernel_series(facts.kernel.release),
                   "glibc_version": facts.kernel.glibc_version},
        "mpi": facts.mpi.model_dump(mode="json", exclude={"mpiexec", "library_version"}),
        "cuda": sorted((d.model_dump(mode="json", exclude={"index"}) for d in facts.cuda),
                       key=lambda d: json.dumps(d, sort_keys=True)),
    }


def class_id(facts: ClassFacts) -> str:
    """A readable, file-name-safe class name: ``<microarch|arch>-<cores>c-<GiB>g-<8 hex>``.

    The hex part is the first 8 hex digits of the SHA-256 of :func:`class_inputs` (canonical
    JSON); the prefix only helps people read it.  Nodes with equal :func:`class_inputs` get the
    same id.  Example: ``icelake-2c-24g-5d41402a``.
    """
    inp = class_inputs(facts)
    blob = json.dumps(inp, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(blob.encode()).hexdigest()[:8]
    cpu = facts.cpu.microarch or facts.cpu.arch or "cpu"
    cores = facts.cpu.cores_logical
    gib = inp["memory"]["total_gib"]
    name = f"{cpu}-{'?' if cores is None else cores}c-{'?' if gib is None else gib}g-{digest}"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name.replace("?", "x"))


def flatten(x: Any, key: str = "", out: "dict | None" = None) -> dict:
    """Nested dicts as ``{"a.b": value}``; lists are values."""
    out = {} if out is None else out
    if isinstance(x, dict):
        for k, v in x.items():
            flatten(v, f"{key}.{k}" if key else str(k), out)
    else:
        out[key] = x
    return out


def class_differences(a: ClassFacts, b: ClassFacts) -> list[tuple[str, Any, Any]]:
    """The class facts that differ, as ``(dotted name, a's value, b's value)``, sorted by name;
    empty when ``a`` and ``b`` are of one class."""
    fa, fb = flatten(class_inputs(a)), flatten(class_inputs(b))
    return [(k, fa.get(k), fb.get(k)) for k in sorted(fa.keys() | fb.keys())
            if fa.get(k) != fb.get(k)]
