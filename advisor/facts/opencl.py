"""OpenCL platforms and devices, through pyopencl when it is importable (full ``detect()`` only:
importing pyopencl and loading the ICD takes ~0.12 s here, measured by bench/bench_facts.py)."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from advisor.facts.util import Notes
from advisor.models import OpenCLDevice, OpenCLPlatform

#: cl_device_type bits (Khronos OpenCL 3.0 API spec, table "Device Types"), ascending.
_DEVICE_TYPE_BITS = ((1 << 0, "DEFAULT"), (1 << 1, "CPU"), (1 << 2, "GPU"), (1 << 3, "ACCELERATOR"),
                     (1 << 4, "CUSTOM"))


def device_type_name(bits: int) -> str:
    """``"CPU"``, ``"GPU"``, ... for a ``cl_device_type`` bit field; DEFAULT is left out when a
    concrete type is present (PoCL reports ``CPU | DEFAULT``); ``"|"``-joined when several remain."""
    names = [name for bit, name in _DEVICE_TYPE_BITS if bits & bit]
    concrete = [n for n in names if n != "DEFAULT"]
    return " | ".join(concrete or names) or f"0x{bits:x}"


def platforms_from_objects(platforms: Iterable[Any], notes: Notes) -> list[OpenCLPlatform]:
    """Convert pyopencl ``Platform`` objects (or objects with the same attributes: ``name``,
    ``vendor``, ``version``, ``get_devices()`` returning objects with ``name``, ``type``,
    ``global_mem_size`` in bytes) to models.  A platform whose devices cannot be listed keeps an
    empty device list and adds a warning."""
    out = []
    for p in platforms:
        devices = []
        for d in notes.attempt(f"opencl: devices of {p.name.strip()!r}", p.get_devices, []):
            devices.append(OpenCLDevice(name=d.name.strip(), type=device_type_name(int(d.type)),
                                        global_mem_bytes=int(d.global_mem_size)))
        out.append(OpenCLPlatform(name=p.name.strip(), vendor=p.vendor.strip(),
                                  version=p.version.strip(), devices=devices))
    return out


def detect_opencl(notes: Optional[Notes] = None) -> list[OpenCLPlatform]:
    """OpenCL platforms seen by pyopencl; ``[]`` when pyopencl is not installed (not a warning)
    or no ICD is found (``clGetPlatformIDs`` returns ``CL_PLATFORM_NOT_FOUND_KHR``: no warning
    either, "no OpenCL" is a fact).  Never raises."""
    notes = notes if notes is not None else Notes()
    try:
        import pyopencl as cl
    except ImportError:
        return []
    except Exception as exc:  # a broken install (missing libOpenCL.so) is worth a warning
        notes.warn("opencl: import pyopencl", exc)
        return []
    try:
        platforms = cl.get_platforms()
    except cl.LogicError as exc:
        if "PLATFORM_NOT_FOUND" in str(exc):
            return []
        notes.warn("opencl: get_platforms", exc)
        return []
    except Exception as exc:
        notes.warn("opencl: get_platforms", exc)
        return []
    return notes.attempt("opencl: platforms", lambda: platforms_from_objects(platforms, notes), [])
