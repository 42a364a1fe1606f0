"""CPU facts: architecture, vendor, model, archspec micro-architecture, cores, cache sizes.

Inputs: ``/proc/cpuinfo``, ``/proc/sys/kernel/arch`` (Linux >= 6.1; ``platform.machine()`` on the
live machine), ``/sys/devices/system/cpu/online``, ``.../cpu<N>/topology/{physical_package_id,
core_cpus_list}`` and ``.../cpu0/cache/index*/{level,type,size}`` (kernel ABI documents
``Documentation/ABI/stable/sysfs-devices-system-cpu`` and ``.../testing/sysfs-devices-system-cpu``).
The micro-architecture name comes from archspec (``archspec.cpu.host()``), only on the live machine.
Whether the machine is a VM (glibc's copy thresholds come from the cache sizes cpuid reports,
which hypervisors often hide or invent) comes from the sources systemd-detect-virt reads:
the cpuinfo ``hypervisor`` flag (x86), ``/sys/hypervisor/type`` (Xen), DMI
``/sys/class/dmi/id/{sys_vendor,product_name}`` and, on aarch64,
``/proc/device-tree/hypervisor/compatible``.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Callable, Optional

from advisor.facts.util import (Notes, is_live, parse_cpulist, read_optional, read_text,
                                 size_with_unit)
from advisor.models import CpuFacts

SYS_CPU = "sys/devices/system/cpu"


def parse_cpuinfo(text: str) -> dict:
    """Fields of ``/proc/cpuinfo`` that do not vary between processors.

    Returns a dict with keys ``vendor``, ``model_name``, ``processors`` (number of ``processor``
    entries) and ``cores`` (distinct ``(physical id, core id)`` pairs, x86 only), each None when the
    text does not carry it.  aarch64 has no vendor name, only ``CPU implementer`` (a hex code),
    which is mapped to a name with archspec's ``arm_vendors`` table.  ``hypervisor``: the x86
    ``hypervisor`` flag is listed (True/False), None when the text has no ``flags`` line.  Raises ``ValueError`` when
    the text has no ``processor`` entry at all (garbage or truncated input).
    """
    blocks = [b for b in text.split("\n\n") if b.strip()]
    entries = []
    for block in blocks:
        d = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                d[key.strip()] = value.strip()
        entries.append(d)
    procs = [e for e in entries if "processor" in e]
    if not procs:
        raise ValueError("no 'processor' entry in cpuinfo")
    first = procs[0]
    vendor = first.get("vendor_id")
    if vendor is None and "CPU implementer" in first:
        vendor = _arm_vendor(first["CPU implementer"])
    model_name = first.get("model name") or first.get("Model name") or first.get("cpu")
    pairs = {(e.get("physical id"), e.get("core id")) for e in procs
             if "physical id" in e and "core id" in e}
    flags = first.get("flags")
    return {
        "vendor": vendor,
        "model_name": model_name,
        "processors": len(procs),
        "cores": len(pairs) or None,
        "hypervisor": ("hypervisor" in flags.split()) if flags is not None else None,
    }


def _arm_vendor(code: str) -> str:
    """Vendor name of an aarch64 ``CPU implementer`` code, from archspec's table (code if unknown)."""
    try:
        from archspec.cpu.schema import TARGETS_JSON

        return TARGETS_JSON["conversions"]["arm_vendors"].get(code, code)
    except Exception:
        return code


def physical_cores(root: Path, cpus: list[int]) -> int:
    """Number of distinct physical cores among ``cpus``: distinct (package id, core_cpus_list)
    pairs from sysfs topology.  Raises ``OSError`` when a topology file is missing."""
    seen = set()
    for n in cpus:
        topo = f"{SYS_CPU}/cpu{n}/topology"
        pkg = read_text(root, f"{topo}/physical_package_id").strip()
        siblings = read_optional(root, f"{topo}/core_cpus_list")
        if siblings is None:  # kernels before 5.3 name it thread_siblings_list
            siblings = read_text(root, f"{topo}/thread_siblings_list")
        seen.add((pkg, siblings.strip()))
    return len(seen)


def cache_sizes(root: Path) -> dict[str, int]:
    """Bytes of one L2 and one L3 cache instance as seen by cpu0: ``{"l2": ..., "l3": ...}``
    (a key is absent when that level does not exist).  Instruction caches are skipped."""
    out: dict[str, int] = {}
    base = Path(root) / SYS_CPU / "cpu0" / "cache"
    for index in sorted(base.glob("index*")):
        level = (index / "level").read_text().strip()
        ctype = (index / "type").read_text().strip()
        if ctype == "Instruction" or level not in ("2", "3"):
            continue
        out[f"l{level}"] = size_with_unit((index / "size").read_text())
    return out


#: DMI vendor / product substrings -> hypervisor name (the table systemd-detect-virt uses,
#: systemd src/basic/virt.c ``detect_vm_dmi_vendor``), matched case-insensitively.  "Amazon EC2"
#: is left out: EC2 bare-metal instances carry it too (the cpuinfo flag catches EC2 VMs).
DMI_VENDORS = (("kvm", "kvm"), ("qemu", "qemu"), ("vmware", "vmware"), ("innotek", "oracle"),
               ("virtualbox", "oracle"), ("xen", "xen"), ("bochs", "bochs"),
               ("parallels", "parallels"), ("bhyve", "bhyve"),
               ("google compute engine", "google"), ("openstack", "kvm"),
               ("microsoft corporation virtual machine", "microsoft"))


def detect_virtualization(root: Path, hypervisor_flag: Optional[bool]) -> Optional[str]:
    """The hypervisor under ``root``'s machine, "none", or None when nothing can tell.

    Order: ``/sys/hypervisor/type`` (Xen), DMI vendor and product, aarch64 device tree; then
    the cpuinfo flag alone gives "vm" (a VM of unknown kind) and its absence "none" (x86 only:
    the flag is how a hypervisor announces itself, Intel SDM CPUID.1:ECX bit 31).  Raises
    ``OSError`` only for unreadable (not missing) files; the caller is lenient.
    """
    text = read_optional(root, "sys/hypervisor/type")
    if text and text.strip():
        return text.strip().lower()
    dmi = " ".join((read_optional(root, f"sys/class/dmi/id/{f}") or "").strip()
                   for f in ("sys_vendor", "product_name")).lower()
    for key, name in DMI_VENDORS:
        if key in dmi:
            return name
    dt = read_optional(root, "proc/device-tree/hypervisor/compatible")
    if dt and dt.strip("\x00 \n"):
        return dt.strip("\x00 \n").split(",")[0].lower() or "vm"
    if hypervisor_flag is True:
        return "vm"
    if hypervisor_flag is False:
        return "none"
    return None


def _live_microarch() -> Optional[str]:
    import archspec.cpu

    return str(archspec.cpu.host().name)


def detect_cpu(root: Path = Path("/"), notes: Optional[Notes] = None, *,
               microarch: Optional[Callable[[], Optional[str]]] = None) -> CpuFacts:
    """CPU facts of the machine under ``root``; unknown fields are None, failures go to ``notes``.

    ``microarch`` returns the archspec micro-architecture name; by default archspec is asked on the
    live machine only (it reads cpuid and the live ``/proc/cpuinfo``, not ``root``).  Never raises.
    """
    notes = notes if notes is not None else Notes()
    live = is_live(root)

    def arch() -> Optional[str]:
        text = read_optional(root, "proc/sys/kernel/arch")
        if text is not None:
            return text.strip() or None
        return platform.machine() or None if live else None

    info = notes.attempt("cpu: /proc/cpuinfo", lambda: parse_cpuinfo(read_text(root, "proc/cpuinfo")),
                         {})
    online = notes.attempt(
        "cpu: online cpus", lambda: parse_cpulist(read_text(root, f"{SYS_CPU}/online")), None)
    logical = len(online) if online else info.get("processors")
    physical = None
    if online:
        physical = notes.attempt("cpu: topology", lambda: physical_cores(root, online))
    if physical is None:
        physical = info.get("cores")
    caches = notes.attempt("cpu: cache sizes", lambda: cache_sizes(root), {})
    if microarch is None and live:
        microarch = _live_microarch
    march = notes.attempt("cpu: archspec", microarch) if microarch else None
    hv_flag = info.get("hypervisor")
    virt = notes.attempt("cpu: virtualization", lambda: detect_virtualization(root, hv_flag))
    return CpuFacts(
        arch=notes.attempt("cpu: arch", arch),
        vendor=info.get("vendor"),
        model_name=info.get("model_name"),
        microarch=march,
        cores_physical=physical,
        cores_logical=logical,
        cache_l2_bytes=caches.get("l2"),
        cache_l3_bytes=caches.get("l3"),
        hypervisor_flag=hv_flag,
        virtualization=virt,
    )
