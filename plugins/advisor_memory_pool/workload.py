"""The workload: allocation sizes and limits, parsed from ``--option KEY=VALUE`` strings.

Options (all optional; sizes accept pydantic ``ByteSize`` syntax: ``8MiB``, ``1GiB``, ``512``):

==================  ===========================================================================
``alloc-size``      comma-separated allocation sizes, each ``SIZE`` or ``SIZE*COUNT`` for COUNT
                    live allocations of that size, e.g. ``8MiB*400,64MiB``
``tile``            a tile shape ``ROWSxCOLS`` (e.g. ``1024x1024``); with ``element-size``
``element-size``    bytes per element of ``tile`` (default 8: double precision)
``tile-count``      tiles of ``tile`` live at once (default 1), e.g. 400 for a 20480^2 matrix
                    of 1024^2 tiles
``trace``           an allocation trace file (sizes, allocation and free times; the format is
                    in ``advisor_memory_pool.trace``): the live allocations at its peak are the
                    workload, and its peak live bytes are modelled per rounding unit
``ranks-per-gpu``   ranks sharing one GPU (divides device memory between their pools)
``pool-limit``      the pool's limit: a size, or a percentage of device memory (``90%``)
``peak-bytes``      the most bytes live at once (default: every allocation size live together)
``pool-alignment``  the alignment the program's Umpire pool uses now (default: DLA-Future's 16)
``pool-first-block`` / ``pool-next-block``  its block sizes now (default: DLA-Future's 1 GiB)
==================  ===========================================================================

Without ``alloc-size``, ``tile`` or ``trace`` the workload is DLA-Future's gen_to_std tile of
PR #1143 (1024 x 1024 doubles, 8 MiB).  Every live allocation counts: the sizes are a multiset
(``8MiB*400`` is 400 allocations, each rounded and backed on its own), not a list of distinct
sizes.  The parsed workload travels as an Evidence with id ``workload`` so that the pure
``recommend`` can read it (sizes written ``SIZE*COUNT``; a trace as its peaks per unit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from pydantic import ByteSize, TypeAdapter, ValidationError

from advisor.errors import BadInputError
from advisor.models import Evidence

from . import model
from . import trace as alloc_trace  # "trace" is also a Workload field

WORKLOAD_ID = "workload"
#: The ``--option`` keys of both memory-pool probes (``Probe.option_keys``): the table above.
OPTION_KEYS = {
    "alloc-size": "allocation sizes, SIZE or SIZE*COUNT, comma-separated (e.g. 8MiB*400)",
    "tile": "a tile shape ROWSxCOLS (with element-size)",
    "element-size": "bytes per element of tile (default 8)",
    "tile-count": "tiles of tile live at once (default 1)",
    "ranks-per-gpu": "ranks sharing one GPU (default 1)",
    "pool-limit": ("the pool's limit: a size, or a percentage of the memory of its side (device "
                   "memory for the device pool, host memory for the host pool)"),
    "pool-alignment": "the alignment the program's pool uses now (default DLA-Future's 16)",
    "pool-first-block": "the pool's first block size now (default DLA-Future's 1 GiB)",
    "pool-next-block": "the pool's next block size now (default DLA-Future's 1 GiB)",
    "peak-bytes": "the most bytes live at once",
    "trace": "an allocation trace file (advisor_memory_pool.trace)",
}

_BYTES = TypeAdapter(ByteSize)


@dataclass(frozen=True)
class Workload:
    """Allocation sizes (bytes, one entry per live allocation) and the limits that bound the
    pool.  ``trace``: the allocations of a trace (``--option trace``; empty otherwise);
    ``trace_peaks``: unit (bytes) -> (peak rounded live bytes, requested live bytes then), as
    recorded in the evidence; ``trace_allocations``: how many the trace held."""

    sizes: tuple[int, ...]
    source: str = "default"
    ranks_per_gpu: int = 1
    pool_limit_bytes: Optional[int] = None
    pool_limit_fraction: Optional[float] = None
    current: model.PoolConfig = model.DLAF_DEFAULT
    peak_bytes: Optional[int] = None
    trace: tuple[alloc_trace.Allocation, ...] = ()
    trace_peaks: tuple[tuple[int, int, int], ...] = ()
    trace_allocations: int = 0

    @property
    def demand_bytes(self) -> int:
        """Bytes live at once: ``peak_bytes`` when given, else the sum of the sizes."""
        return self.peak_bytes if self.peak_bytes is not None else model.workload_demand(self.sizes)

    def rounded_demand(self, config: model.PoolConfig) -> int:
        """Bytes live at once with every live allocation rounded as ``config`` rounds it: the
        trace's peak for that unit when recorded, else the sum over ``sizes`` of each one's
        footprint; with ``peak_bytes`` (which allocations are live is unknown) the peak
        rounded once, a lower bound."""
        unit = model.CUPY_ROUND_BYTES if config.library == "cupy" else config.alignment_bytes
        for u, rounded, _ in self.trace_peaks:
            if u == unit:
                return rounded
        if self.peak_bytes is not None:
            return config.footprint(self.peak_bytes)
        return sum(config.footprint(s) for s in self.sizes)

    def budget(self, device_total: Optional[int]) -> Optional[int]:
        """Bytes one rank's pool may hold (pool limit, fraction of ``device_total``, share of
        ``device_total`` per rank), or None when nothing bounds it."""
        limit = self.pool_limit_bytes
        if limit is None and self.pool_limit_fraction is not None and device_total is not None:
            limit = int(device_total * self.pool_limit_fraction)
        return model.memory_budget(device_total=device_total, ranks_per_gpu=self.ranks_per_gpu,
                                   pool_limit=limit)


def parse_bytes(key: str, text: str) -> int:
    """``ByteSize`` parse of option ``key``; raises ``BadInputError`` naming the key."""
    try:
        n = int(_BYTES.validate_python(text.strip()))
    except (ValidationError, ValueError) as exc:
        raise BadInputError(f"--option {key}={text!r}: not a size (e.g. 8MiB, 1GiB, 4096)") from exc
    if n <= 0:
        raise BadInputError(f"--option {key}={text!r}: must be more than 0 bytes")
    return n


def _int(key: str, text: str, minimum: int = 1) -> int:
    try:
        n = int(text.strip())
    except ValueError as exc:
        raise BadInputError(f"--option {key}={text!r}: not an integer") from exc
    if n < minimum:
        raise BadInputError(f"--option {key}={text!r}: must be >= {minimum}")
    return n


def parse_options(options: Mapping[str, str]) -> Workload:
    """Build the workload from CLI option strings (other keys are left alone: other probes' keys;
    the CLI refuses a key no probe declares, ``advisor.probe.option_readers``).

    :raises BadInputError: a malformed value; the message names the key.
    """
    sizes: list[int] = []
    source = "default"
    if options.get("alloc-size"):
        for item in options["alloc-size"].split(","):
            if item.strip():
                size, _, count = item.partition("*")
                n = _int("alloc-size", count) if count.strip() else 1
                sizes += [parse_bytes("alloc-size", size)] * n
        source = "alloc-size"
    if options.get("tile"):
        shape = options["tile"].lower().split("x")
        dims = [_int("tile", d) for d in shape]
        elem = _int("element-size", options.get("element-size", str(model.DEFAULT_ELEMENT_BYTES)))
        n = elem
        for d in dims:
            n *= d
        sizes += [n] * _int("tile-count", options.get("tile-count", "1"))
        source = "tile" if source == "default" else source + "+tile"
    allocations: tuple[alloc_trace.Allocation, ...] = ()
    if options.get("trace"):
        if sizes or options.get("peak-bytes"):
            raise BadInputError("--option trace: give the trace alone (its live allocations are "
                                "the workload), not with alloc-size, tile or peak-bytes")
        allocations = tuple(alloc_trace.read_trace(options["trace"]))
        sizes = list(alloc_trace.peak(allocations).live)
        source = f"trace:{options['trace']}"
    if not sizes:
        r, c = model.DEFAULT_TILE
        sizes = [r * c * model.DEFAULT_ELEMENT_BYTES]
    ranks = _int("ranks-per-gpu", options.get("ranks-per-gpu", "1"))
    limit_b: Optional[int] = None
    limit_f: Optional[float] = None
    if options.get("pool-limit"):
        from advisor.runtime import parse_limit

        limit_b, limit_f = parse_limit(options["pool-limit"], where="--option pool-limit")
    d = model.DLAF_DEFAULT
    current = model.PoolConfig(
        "umpire",
        parse_bytes("pool-alignment", options["pool-alignment"]) if options.get("pool-alignment") else d.alignment_bytes,
        parse_bytes("pool-first-block", options["pool-first-block"]) if options.get("pool-first-block") else d.first_block_bytes,
        parse_bytes("pool-next-block", options["pool-next-block"]) if options.get("pool-next-block") else d.next_block_bytes,
        "current" if any(options.get(k) for k in ("pool-alignment", "pool-first-block", "pool-next-block"))
        else d.label)
    peak = parse_bytes("peak-bytes", options["peak-bytes"]) if options.get("peak-bytes") else None
    if peak is not None and peak < max(sizes):
        raise BadInputError(f"--option peak-bytes={options['peak-bytes']!r}: below the largest "
                            f"allocation ({max(sizes)} B)")
    return Workload(tuple(sizes), source, ranks, limit_b, limit_f, current, peak,
                    trace=allocations)


#: Rounding units a trace is always modelled for (bytes): Umpire's default alignment (and
#: DLA-Future's, ``model.UMPIRE_ALIGNMENT_BYTES``) and CuPy's 512 B (``model.CUPY_ROUND_BYTES``);
#: ``to_evidence`` adds the user's alignment and the large pages it is given.
TRACE_UNITS = (model.UMPIRE_ALIGNMENT_BYTES, model.CUPY_ROUND_BYTES)


def to_evidence(w: Workload, *, units: Sequence[int] = ()) -> Evidence:
    """The workload as Evidence ``workload`` (sizes as ``SIZE[*COUNT]`` items, bytes).

    With a trace (``source`` ``trace:PATH``), its model rides along: ``trace.allocations``,
    ``trace.peak_requested_bytes`` (the most requested bytes live at once) and, per rounding
    unit U (``TRACE_UNITS``, the user's alignment and ``units``, e.g. the large page),
    ``trace.unit_<U>.peak_rounded_bytes`` / ``.requested_bytes`` (``trace.peak``)."""
    values: dict = {
        "alloc_sizes_bytes": alloc_trace.pack_sizes(w.sizes),
        "source": w.source,
        "ranks_per_gpu": w.ranks_per_gpu,
        "current_label": w.current.label,
        "current_alignment_bytes": w.current.alignment_bytes,
        "current_first_block_bytes": w.current.first_block_bytes,
        "current_next_block_bytes": w.current.next_block_bytes,
    }
    if w.pool_limit_bytes is not None:
        values["pool_limit_bytes"] = w.pool_limit_bytes
    if w.pool_limit_fraction is not None:
        values["pool_limit_fraction"] = w.pool_limit_fraction
    if w.peak_bytes is not None:
        values["peak_bytes"] = w.peak_bytes
    if w.trace:
        values["trace.allocations"] = len(w.trace)
        values["trace.peak_requested_bytes"] = model.workload_demand(w.sizes)
        want = {*TRACE_UNITS, w.current.alignment_bytes, *(int(u) for u in units)}
        for u, pk in alloc_trace.peaks(w.trace, want).items():
            values[f"trace.unit_{u}.peak_rounded_bytes"] = pk.rounded_bytes
            values[f"trace.unit_{u}.requested_bytes"] = pk.requested_bytes
    return Evidence(id=WORKLOAD_ID, description="allocation sizes and limits the advice is for",
                    values=values)


def from_evidence(evidence: Sequence[Evidence]) -> Workload:
    """The workload recorded in ``evidence`` (the last ``workload`` item), or the default one."""
    ev = next((e for e in reversed(list(evidence)) if e.id == WORKLOAD_ID), None)
    if ev is None:
        return parse_options({})
    v = ev.values
    sizes = alloc_trace.unpack_sizes(str(v.get("alloc_sizes_bytes", "")))
    d = model.DLAF_DEFAULT
    current = model.PoolConfig(
        "umpire", int(v.get("current_alignment_bytes", d.alignment_bytes)),
        int(v.get("current_first_block_bytes", d.first_block_bytes)),
        int(v.get("current_next_block_bytes", d.next_block_bytes)),
        str(v.get("current_label", d.label)))
    lb = v.get("pool_limit_bytes")
    lf = v.get("pool_limit_fraction")
    pk = v.get("peak_bytes")
    peaks = tuple(sorted(
        (int(k[len("trace.unit_"):-len(".peak_rounded_bytes")]), int(r),
         int(v.get(k.replace(".peak_rounded_bytes", ".requested_bytes"), 0)))
        for k, r in v.items() if k.startswith("trace.unit_") and k.endswith(".peak_rounded_bytes")))
    return Workload(sizes or parse_options({}).sizes, str(v.get("source", "recorded")),
                    int(v.get("ranks_per_gpu", 1)), int(lb) if lb is not None else None,
                    float(lf) if lf is not None else None, current,
                    int(pk) if pk is not None else None, trace_peaks=peaks,
                    trace_allocations=int(v.get("trace.allocations", 0)))
