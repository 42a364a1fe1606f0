"""Conditions recorded with every series: what could change a measurement's result.

``conditions(**fields)`` fills in what the harness can read itself (load average, CPU
affinity, THP mode, library versions) and merges what the caller knows (env overlay, buffer
fields from ``buffer_conditions``, launcher).
"""

from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any, Iterable, Optional

from advisor.libraries.mpich import NAME as MPICH
from advisor.models import Conditions

#: Distributions whose versions are recorded when installed (read from package metadata, so
#: nothing is imported).
DEFAULT_LIBRARIES: tuple[str, ...] = ("hpc-advisor", "numpy", "mpi4py", MPICH, "pyopencl",
                                      "pocl-binary-distribution", "cupy-cuda12x", "cupy")

THP_ENABLED_PATH = "/sys/kernel/mm/transparent_hugepage/enabled"


def thp_mode(path: str = THP_ENABLED_PATH) -> Optional[str]:
    """The selected THP mode ("always", "madvise", "never") from sysfs, or None if unreadable.

    The sysfs file lists all modes with the active one in brackets: ``always [madvise] never``.
    """
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return None


def library_versions(names: Iterable[str] = DEFAULT_LIBRARIES) -> dict[str, str]:
    """Installed versions of ``names`` (missing ones left out) plus ``python``."""
    out = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def conditions(*, libraries: Iterable[str] = DEFAULT_LIBRARIES, buffer: Any = None,
               **fields: Any) -> Conditions:
    """A ``models.Conditions`` with load average, affinity, THP mode and versions filled in.

    Args:
        libraries: distributions whose versions to record.
        buffer: a ``host_buffer`` array: its ``buffer_conditions`` fields are added (given
            fields win; its notes are merged under the given ``notes``).
        **fields: any ``Conditions`` field (``env``, ``buffer_kind``, ``buffer_fill``,
            ``hugepages``, ``align_bytes``, ``launcher``, ``notes``, ...); given values win,
            ``library_versions`` and ``notes`` are merged with the detected ones.  ``env`` values
            of None (variables removed by the overlay) are recorded as "".

    Returns:
        ``Conditions``.

    Raises:
        pydantic.ValidationError: an unknown field or a wrong type.
    """
    data: dict[str, Any] = {}
    try:
        data["loadavg_1m"] = os.getloadavg()[0]
    except OSError:
        pass
    try:
        data["affinity"] = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    data["thp_enabled"] = thp_mode()
    versions = library_versions(libraries)
    versions.update(fields.pop("library_versions", None) or {})
    data["library_versions"] = versions
    if "env" in fields and fields["env"] is not None:
        fields["env"] = {str(k): ("" if v is None else str(v)) for k, v in fields["env"].items()}
    notes: dict[str, Any] = {}
    if buffer is not None:
        from advisor.measure.buffers import buffer_conditions

        bc = buffer_conditions(buffer)
        notes.update(bc.pop("notes", None) or {})
        for k, v in bc.items():
            fields.setdefault(k, v)
    notes.update(fields.pop("notes", None) or {})
    data.update({k: v for k, v in fields.items()})
    if notes:
        data["notes"] = notes
    return Conditions(**data)
