"""An allocation trace: what a program allocated, when, and when it freed it; its peak demand
per rounding unit (the pool's fragmentation by rounding), all pure except ``read_trace``.

Format (``--option trace=PATH`` of both memory-pool probes), one allocation per record:

* **CSV** (any suffix but ``.json``): a header line naming the columns ``size_bytes``,
  ``alloc_time`` and ``free_time`` (any order, more columns ignored), then one line per
  allocation; ``free_time`` empty means never freed (live until the end); blank lines and
  lines starting with ``#`` are skipped::

      size_bytes,alloc_time,free_time
      8388608,0.0,1.5
      8388608,0.1,
* **JSON** (suffix ``.json``): a list of objects ``{"size_bytes": int, "alloc_time": number,
  "free_time": number or null}``, or an object whose ``allocations`` key holds that list.

Times are in seconds from any origin (only their order matters); at equal times frees come
before allocations (memory freed at t can serve a request at t).  ``size_bytes`` is a positive
integer; ``free_time`` is not before ``alloc_time``.

The model (``peak``): the live bytes over time, each allocation counted at its own size
(requested) or rounded up to a unit (a pool's alignment, CuPy's 512 B): the peak of the
rounded live bytes against the peak of the requested live bytes is what rounding costs this
program at its worst moment, every live allocation rounded, not each distinct size once.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from advisor.errors import BadInputError

from . import model

COLUMNS = ("size_bytes", "alloc_time", "free_time")
#: The largest trace read (bytes): the bound a profile has (``advisor.profile``
#: ``MAX_PROFILE_BYTES``, 16 MiB), since the trace is read whole into memory; about 400 000
#: CSV records of 40 bytes.
MAX_TRACE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Allocation:
    """One allocation: ``size_bytes`` (> 0), ``alloc_time`` and ``free_time`` (seconds, None:
    never freed)."""

    size_bytes: int
    alloc_time: float
    free_time: Optional[float] = None


@dataclass(frozen=True)
class Peak:
    """The worst moment of a trace for one rounding unit (bytes).

    ``rounded_bytes``: the most live bytes at once, each allocation rounded up to ``unit``;
    ``requested_bytes``: what those live allocations requested at that moment; ``live``: their
    sizes (bytes); ``time``: when (seconds, the trace's clock)."""

    unit: int
    rounded_bytes: int
    requested_bytes: int
    live: tuple[int, ...]
    time: float

    @property
    def waste_ratio(self) -> float:
        """Rounded over requested live bytes at the peak, minus 1 (0.0 = no rounding waste)."""
        return self.rounded_bytes / self.requested_bytes - 1 if self.requested_bytes else 0.0


def _number(text: Any, where: str, key: str, *, optional: bool = False) -> Optional[float]:
    if text is None or (isinstance(text, str) and not text.strip()):
        if optional:
            return None
        raise BadInputError(f"{where}: '{key}' is missing")
    if isinstance(text, bool):
        raise BadInputError(f"{where}: '{key}' is {text!r}, not a number")
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise BadInputError(f"{where}: '{key}' is {text!r}, not a number") from None
    if not math.isfinite(v):
        raise BadInputError(f"{where}: '{key}' is {text!r}, not a finite number")
    return v


def _allocation(rec: dict, where: str) -> Allocation:
    size = _number(rec.get("size_bytes"), where, "size_bytes")
    if size is None or size != int(size) or size <= 0:
        raise BadInputError(f"{where}: 'size_bytes' is {rec.get('size_bytes')!r}, not a "
                            "positive whole number of bytes")
    start = _number(rec.get("alloc_time"), where, "alloc_time")
    end = _number(rec.get("free_time"), where, "free_time", optional=True)
    if end is not None and start is not None and end < start:
        raise BadInputError(f"{where}: 'free_time' {end:g} is before 'alloc_time' {start:g}")
    return Allocation(int(size), float(start or 0.0), end)


def parse_trace(text: str, *, source: str = "<trace>", json_format: Optional[bool] = None
                ) -> list[Allocation]:
    """The allocations of a trace ``text`` (format: the module docstring), in file order.

    :param source: names the trace in messages (a path).
    :param json_format: True / False force the format; None: JSON when the first non-blank
        character is ``[`` or ``{``, else CSV.
    :raises BadInputError: malformed text, a missing column, a bad value, or no allocation;
        the message names ``source`` and the line (CSV) or record (JSON).
    """
    head = text.lstrip()[:1]
    if json_format is None:
        json_format = head in ("[", "{")
    out: list[Allocation] = []
    if json_format:
        from advisor.nesting import load_json

        data = load_json(text, source)
        if isinstance(data, dict):
            data = data.get("allocations")
        if not isinstance(data, list):
            raise BadInputError(f"{source}: a JSON trace is a list of allocations (or an object "
                                "whose 'allocations' key holds one)")
        for i, rec in enumerate(data):
            if not isinstance(rec, dict):
                raise BadInputError(f"{source}: record {i}: not an object")
            out.append(_allocation(rec, f"{source}: record {i}"))
    else:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1)
                 if line.strip() and not line.lstrip().startswith("#")]
        if not lines:
            raise BadInputError(f"{source}: no allocation in the trace")
        first, header = lines[0]
        cols = [c.strip() for c in next(csv.reader([header]))]
        missing = [c for c in COLUMNS[:2] if c not in cols]
        if missing:
            raise BadInputError(f"{source}: line {first}: the header must name the columns "
                                f"{', '.join(COLUMNS)} (missing {', '.join(missing)})")
        reader = csv.reader(io.StringIO("\n".join(line for _, line in lines[1:])))
        for (n, _), row in zip(lines[1:], reader):
            out.append(_allocation(dict(zip(cols, (c.strip() for c in row))), f"{source}: line {n}"))
    if not out:
        raise BadInputError(f"{source}: no allocation in the trace")
    return out


def read_trace(path: str | Path) -> list[Allocation]:
    """``parse_trace`` of the file at ``path`` (JSON when its suffix is ``.json``).

    :raises BadInputError: a missing, unreadable, too large (``MAX_TRACE_BYTES``) or malformed
        file, naming it."""
    from advisor.textfile import read_text_file

    p = Path(path).expanduser()
    text = read_text_file(p, kind="allocation trace", max_bytes=MAX_TRACE_BYTES,
                          allow_empty=False)
    return parse_trace(text, source=str(p),
                       json_format=True if p.suffix.lower() == ".json" else None)


def peak(allocations: Sequence[Allocation], unit: int = 1) -> Peak:
    """The most live bytes at once with every allocation rounded up to ``unit`` bytes (1: as
    requested), when, and what was live then (pure; O(n log n)).

    :raises ValueError: ``unit`` < 1 or no allocation.
    """
    if unit < 1:
        raise ValueError(f"unit must be >= 1 byte, got {unit}")
    if not allocations:
        raise ValueError("a trace needs at least one allocation")
    events = []  # (time, order: frees (0) before allocations (1), index)
    for i, a in enumerate(allocations):
        events.append((a.alloc_time, 1, i))
        if a.free_time is not None:
            events.append((a.free_time, 0, i))
    events.sort()
    now = best = 0
    at = 0  # index of the event after which the peak holds
    for k, (_, kind, i) in enumerate(events):
        r = model.round_up(allocations[i].size_bytes, unit)
        now += r if kind else -r
        if now > best:
            best, at = now, k
    live: set[int] = set()  # replayed up to the peak: one pass, not a copy per new maximum
    for _, kind, i in events[:at + 1]:
        (live.add if kind else live.discard)(i)
    sizes = tuple(allocations[i].size_bytes for i in sorted(live))
    return Peak(unit, best, sum(sizes), sizes, events[at][0])


def peaks(allocations: Sequence[Allocation], units: Iterable[int]) -> dict[int, Peak]:
    """``peak`` for each distinct unit (bytes), by unit."""
    return {u: peak(allocations, u) for u in sorted({int(u) for u in units})}


def pack_sizes(sizes: Iterable[int]) -> str:
    """Sizes (bytes) as ``"SIZE[*COUNT],..."`` in first-seen order (``8388608*1024``): every
    allocation kept, written once per distinct size."""
    counts: dict[int, int] = {}
    for s in sizes:
        counts[int(s)] = counts.get(int(s), 0) + 1
    return ",".join(f"{s}*{n}" if n > 1 else str(s) for s, n in counts.items())


def unpack_sizes(text: str) -> tuple[int, ...]:
    """The inverse of ``pack_sizes`` (plain ``"a,b,c"`` lists too).

    :raises ValueError: a malformed item."""
    out: list[int] = []
    for item in str(text).split(","):
        item = item.strip()
        if not item:
            continue
        size, _, count = item.partition("*")
        out += [int(size)] * (int(count) if count else 1)
    return tuple(out)
