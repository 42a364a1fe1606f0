"""CUDA devices: from ``nvidia-smi --query-gpu`` when it is installed, else from the NVIDIA kernel
driver's ``/proc/driver/nvidia/{version,gpus/*/information}`` (name and driver version only).

The same source is used by the full and the fingerprint detection, so both fingerprint alike.
CuPy is not imported (it would initialise CUDA); its version is in ``Facts.python_packages``.
``runtime_version`` therefore stays None.
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
from pathlib import Path
from typing import Optional

from advisor.facts.util import Notes, is_live, read_optional
from advisor.models import CudaDevice

#: Fields asked from nvidia-smi (``nvidia-smi --help-query-gpu``); memory in MiB with ``nounits``.
QUERY_FIELDS = ("index", "name", "memory.total", "compute_cap", "driver_version")
NVIDIA_SMI_ARGS = ("--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv,noheader,nounits")
#: Seconds allowed for nvidia-smi (it can take seconds when persistence mode is off).
NVIDIA_SMI_TIMEOUT_S = 15.0
_MIB = 1 << 20
_NA = {"", "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]"}
_DRIVER = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)")


def _value(text: str) -> Optional[str]:
    text = text.strip()
    return None if text in _NA else text


def parse_nvidia_smi_csv(text: str) -> list[CudaDevice]:
    """Devices from ``nvidia-smi --query-gpu=index,name,memory.total,compute_cap,driver_version
    --format=csv,noheader,nounits`` output (memory in MiB -> bytes).  Raises ``ValueError`` on a
    row with the wrong number of fields or a non-integer index."""
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), skipinitialspace=True))
    except csv.Error as exc:
        raise ValueError(f"nvidia-smi output is not CSV: {exc}") from exc
    devices = []
    for row in rows:
        if not row or not "".join(row).strip():
            continue
        if len(row) != len(QUERY_FIELDS):
            raise ValueError(f"nvidia-smi row has {len(row)} fields, expected {len(QUERY_FIELDS)}")
        index, name, mem, cc, driver = (_value(v) for v in row)
        devices.append(CudaDevice(
            index=int(index), name=name or "unknown",
            total_memory_bytes=int(float(mem) * _MIB) if mem else None,
            compute_capability=cc, driver_version=driver))
    return devices


def parse_driver_version(text: str) -> str:
    """Driver version from ``/proc/driver/nvidia/version`` (proprietary and open kernel module
    banners).  Raises ``ValueError`` when absent."""
    m = _DRIVER.search(text)
    if not m:
        raise ValueError("no driver version in /proc/driver/nvidia/version")
    return m.group(1)


def parse_gpu_information(text: str) -> dict[str, str]:
    """``/proc/driver/nvidia/gpus/<bus>/information`` as ``{key: value}``."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def devices_from_proc(root: Path) -> list[CudaDevice]:
    """Devices listed by the NVIDIA kernel driver under ``root/proc/driver/nvidia``: index is the
    ``Device Minor``, name the ``Model``.  ``[]`` when the driver is not loaded."""
    base = Path(root) / "proc/driver/nvidia/gpus"
    if not base.is_dir():
        return []
    version = read_optional(root, "proc/driver/nvidia/version")
    driver = parse_driver_version(version) if version else None
    devices = []
    for i, info_path in enumerate(sorted(base.glob("*/information"))):
        info = parse_gpu_information(info_path.read_text())
        minor = info.get("Device Minor")
        devices.append(CudaDevice(index=int(minor) if minor and minor.isdigit() else i,
                                  name=info.get("Model") or "unknown", driver_version=driver))
    return sorted(devices, key=lambda d: d.index)


def detect_cuda(root: Path = Path("/"), notes: Optional[Notes] = None, *,
                nvidia_smi: Optional[str] = None) -> list[CudaDevice]:
    """CUDA devices of the machine under ``root``; ``[]`` when there is no NVIDIA driver.
    ``nvidia_smi`` is the tool's path (found on PATH on the live machine).  Never raises."""
    notes = notes if notes is not None else Notes()
    if nvidia_smi is None and is_live(root):
        from advisor.facts.mpi import find_tool

        nvidia_smi = find_tool("nvidia-smi")
    if nvidia_smi:
        def smi() -> list[CudaDevice]:
            done = subprocess.run([nvidia_smi, *NVIDIA_SMI_ARGS], capture_output=True, text=True,
                                  timeout=NVIDIA_SMI_TIMEOUT_S, check=True,
                                  stdin=subprocess.DEVNULL)
            return parse_nvidia_smi_csv(done.stdout)

        devices = notes.attempt("cuda: nvidia-smi", smi)
        if devices is not None:
            return devices
    return notes.attempt("cuda: /proc/driver/nvidia", lambda: devices_from_proc(root), [])
