"""Human-readable quantities: pure text formatting, no I/O, no plotting library.

Used by ``advisor report`` (tick labels, captions, tables) and by ``advisor show`` (sizes in the
rows), so both read the same way.  The conventions are the field's:

* sizes (``bytes``) in binary IEC multiples - B, KiB, MiB, GiB, TiB (1 KiB = 1024 B), as message
  sizes, pages and alignments are powers of two (a 4 KiB base page, a 2 MiB huge page);
* durations (``s``) in ns, µs, ms, s;
* bandwidths (``bytes/s``) in decimal multiples - B/s, kB/s, MB/s, GB/s, TB/s (1 GB/s = 1e9 B/s),
  the convention of STREAM, OSU and clpeak;
* ``ratio`` as ``1.23x``; ``count`` as an integer when whole; any other unit as ``<value> <unit>``.

Every function takes a float (or int) in the project's base unit and returns a ``str``; NaN and
infinities come back as ``nan``/``inf``/``-inf`` with the unit, never raise.  ``digits`` is the
number of significant digits (default 3: the smallest A/A noise floor recorded in the shipped
profile is about 0.8 %, see ``advisor.fleet.thin``, so a fourth digit would show noise).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["BINARY_PREFIXES", "DECIMAL_PREFIXES", "TIME_PREFIXES", "format_number",
           "format_bytes", "format_seconds", "format_bandwidth", "format_ratio",
           "format_count", "format_value", "readable_bytes", "sizes_in_text", "AxisScale",
           "axis_scale"]

#: (factor, suffix) for sizes, largest first: IEC binary multiples.
BINARY_PREFIXES = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"),
                   (1, "B"))
#: (factor, suffix) for bandwidths, largest first: SI decimal multiples.
DECIMAL_PREFIXES = ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s"))
#: (factor, suffix) for durations, largest first.
TIME_PREFIXES = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))

DIGITS = 3


def format_number(value: float, digits: int = DIGITS) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros dropped (``1.5`` -> ``"1.5"``,
    ``0.000123`` -> ``"0.000123"``); whole numbers from ``10**digits`` to 1e6 in full
    (``1024`` -> ``"1024"``, never ``"1.02e+03"``); exponent notation beyond."""
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if 10 ** digits <= abs(value) < 1e6:
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def _scaled(value: float, prefixes, base: str, digits: int) -> str:
    """``value`` divided by the largest factor of ``prefixes`` not above it (the smallest
    factor for values below it), with that factor's suffix; ``base`` is the suffix of 0, NaN
    and infinities."""
    if not math.isfinite(value) or value == 0:
        return f"{format_number(value)} {base}"
    mag = abs(value)
    factor, suffix = next(((f, s) for f, s in prefixes if mag >= f), prefixes[-1])
    return f"{format_number(value / factor, digits)} {suffix}"


def format_bytes(n: float, digits: int = DIGITS) -> str:
    """A size in bytes in binary multiples: ``65536`` -> ``"64 KiB"``, ``1536`` -> ``"1.5 KiB"``,
    ``3`` -> ``"3 B"``, ``2 * 2**20`` -> ``"2 MiB"``."""
    return _scaled(float(n), BINARY_PREFIXES, "B", digits)


def format_bandwidth(bps: float, digits: int = DIGITS) -> str:
    """A bandwidth in bytes/s in decimal multiples: ``1.075e10`` -> ``"10.8 GB/s"``,
    ``8.5e8`` -> ``"850 MB/s"``."""
    return _scaled(float(bps), DECIMAL_PREFIXES, "B/s", digits)


def format_seconds(s: float, digits: int = DIGITS) -> str:
    """A duration in seconds: ``2.5e-6`` -> ``"2.5 µs"``, ``0.012`` -> ``"12 ms"``,
    ``3.0`` -> ``"3 s"``; below 1 ns it stays in ns (``"0.5 ns"``)."""
    return _scaled(float(s), TIME_PREFIXES, "s", digits)


def format_ratio(r: float, digits: int = DIGITS) -> str:
    """A dimensionless ratio (time or bandwidth of one setting over another): ``1.8`` ->
    ``"1.8x"``."""
    return f"{format_number(float(r), digits)}x"


def format_count(n: float, digits: int = DIGITS) -> str:
    """A count: whole numbers in full (``"12"``, ``"4096"``), others to ``digits`` digits."""
    v = float(n)
    if math.isfinite(v) and v == int(v):
        return str(int(v))
    return format_number(v, digits)


def format_value(value: float, unit: str, digits: int = DIGITS) -> str:
    """``value`` in ``unit`` (the units of ``advisor.models.Series.unit`` and of
    ``advisor.specs.figures``) as text: ``bytes``/``B``, ``s``, ``bytes/s``/``B/s``, ``ratio``,
    ``count``; any other unit is written after the number as given (``"3.2 pages"``), an empty
    unit gives the number alone."""
    u = unit.strip()
    if u in ("bytes", "byte", "B"):
        return format_bytes(value, digits)
    if u in ("s", "seconds"):
        return format_seconds(value, digits)
    if u in ("bytes/s", "B/s"):
        return format_bandwidth(value, digits)
    if u in ("ratio", "x"):
        return format_ratio(value, digits)
    if u == "count":
        return format_count(value, digits)
    num = format_number(float(value), digits)
    return f"{num} {u}" if u else num


_BYTES_IN_TEXT = re.compile(r"\b(\d+) ?(?:bytes|B)\b")


def readable_bytes(n: int) -> str:
    """``n`` bytes for a sentence: :func:`format_bytes` to 4 digits, unless that shows a whole
    number of units that ``n`` is not, which a sentence about thresholds or alignment turns on:
    then the remainder is written when it is below a thousandth of the unit, else the exact
    bytes.  ``1073741840`` -> ``"1 GiB + 16 B"`` (not ``"1 GiB"``, a large-page multiple),
    ``16383`` -> ``"16383 B"`` (not ``"16 KiB"``), ``268435456`` -> ``"256 MiB"``, ``100000`` ->
    ``"97.66 KiB"`` (visibly rounded)."""
    n = int(n)
    text = format_bytes(n, digits=4)
    num, _, unit = text.partition(" ")
    factor = next((f for f, u in BINARY_PREFIXES if u == unit), 1)
    if "." in num or "e" in num or int(num) * factor == n:
        return text
    q, r = divmod(n, factor)
    return f"{q} {unit} + {r} B" if 0 < r < factor / 1000 else f"{n} B"


def sizes_in_text(text: str) -> str:
    """Every ``"<integer> bytes"`` / ``"<integer> B"`` inside ``text`` rewritten with
    :func:`readable_bytes` (``"threshold 268435456 bytes"`` -> ``"threshold 256 MiB"``); the
    rest of the text unchanged.  Sizes below 1 KiB stay as ``"<n> B"``."""
    return _BYTES_IN_TEXT.sub(lambda m: readable_bytes(int(m.group(1))), text)


#: Prefix of each binary multiple written alone on a byte axis' ticks (the unit, ``B``, is in
#: the axis label): ``64 Ki``, ``16 Mi``.
BINARY_TICK_PREFIXES = ((1 << 40, "Ti"), (1 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki"),
                        (1, ""))


@dataclass(frozen=True)
class AxisScale:
    """The one unit an axis is read in: the unit its label names and every tick label's
    number is in.  A tick reads ``value / factor`` (``GB/s`` axis: ``12.5``), or, for a log
    byte axis whose ends fall in different binary multiples (``prefixed``: 64 KiB to 16 MiB
    would read 0.0625 .. 16 MiB), the number with a binary prefix of the label's ``B``
    (``64 Ki``, ``16 Mi``).

    :ivar unit: the unit written in the axis label (``"GB/s"``, ``"µs"``, ``"MiB"``, ``"B"``,
        ``"x"``), ``""`` for a count or a unit-less axis.
    :ivar factor: base units per label unit (``1e9`` for ``GB/s``, ``1e-6`` for ``µs``).
    :ivar prefixed: ticks carry a binary prefix (byte axes only).
    """

    unit: str
    factor: float = 1.0
    prefixed: bool = False

    def tick(self, value: float) -> str:
        """The tick label of ``value`` (in the project's base unit): a number in ``unit``."""
        if self.prefixed and value:
            factor, prefix = next(((f, p) for f, p in BINARY_TICK_PREFIXES if abs(value) >= f),
                                  BINARY_TICK_PREFIXES[-1])
            return f"{format_number(value / factor)} {prefix}".rstrip()
        return format_number(value / self.factor)

    def label(self, name: str) -> str:
        """The axis label: ``"bandwidth (GB/s)"``; ``name`` alone when there is no unit or the
        unit is the name."""
        return name if not self.unit or self.unit == name else f"{name} ({self.unit})"


def _prefix_for(mag: float, prefixes) -> tuple[float, str]:
    return next(((f, s) for f, s in prefixes if mag >= f), prefixes[-1])


def axis_scale(unit: str, lo: float, hi: float, scale: str = "linear") -> AxisScale:
    """The unit an axis showing ``lo .. hi`` (the project's base ``unit``) is read in.

    The multiple is chosen at the axis' typical magnitude: its largest absolute end on a
    linear axis (ticks up to a few hundred), the geometric middle of its ends on a log axis
    (a 1 µs - 1 ms latency axis reads 1 .. 1000 µs, a 500 MB/s - 20 GB/s one 0.5 .. 20 GB/s).
    Bandwidths take decimal multiples (MB/s, GB/s), sizes binary ones (KiB, MiB; a log axis
    from one multiple into another is ``prefixed``, see :class:`AxisScale`), durations
    ns/µs/ms/s, as ``format_value`` writes them; a ``ratio`` axis is read as ``x``, a
    ``count`` axis has no unit; any other unit is written as given with factor 1.  Never
    raises: a NaN or empty range gives the base unit.
    """
    u = unit.strip()
    ends = [abs(v) for v in (lo, hi) if math.isfinite(v) and v != 0]
    if not ends:
        mag = 0.0
    elif scale == "log" and len(ends) == 2:
        mag = math.sqrt(ends[0] * ends[1])
    else:
        mag = max(ends)
    if u in ("bytes", "byte", "B"):
        top = _prefix_for(max(ends) if ends else 0.0, BINARY_PREFIXES)
        if scale == "log" and len(ends) == 2 and _prefix_for(min(ends), BINARY_PREFIXES) != top:
            return AxisScale("B", 1.0, prefixed=True)
        return AxisScale(top[1], float(top[0]))
    for names, prefixes in ((("bytes/s", "B/s"), DECIMAL_PREFIXES),
                            (("s", "seconds"), TIME_PREFIXES)):
        if u in names:
            factor, suffix = _prefix_for(mag, prefixes)
            return AxisScale(suffix, float(factor))
    if u in ("ratio", "x"):
        return AxisScale("x")
    if u == "count":
        return AxisScale("")
    return AxisScale(u)
