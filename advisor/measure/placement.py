"""Where a copy's source and destination lie, and the artefacts that placement and first touch
make in a copy bandwidth.

**4K aliasing.**  A load whose address matches an earlier, still pending store in address bits
11:0 is blocked until the store retires, even when the full addresses differ (Intel 64 and IA-32
Architectures Optimization Reference Manual, section "4K aliasing"; the same partial-address
store-forwarding check exists on other out-of-order cores).  A memcpy whose destination lies a
multiple of 4 KiB from its source (two buffers a power of two apart: the kernel's ``mmap`` puts
consecutive mappings of ``2^k`` bytes exactly ``2^k`` bytes apart) then measures the aliasing,
not the memory.  The harness therefore never times a copy between a source and a destination
whose distance is within ``ALIAS_WINDOW_BYTES`` of a power of two, and places the destination at
a deliberate offset (``ALIAS_SKEW_BYTES`` modulo 4 KiB) instead.

**First touch.**  The first write to a page pays the page fault (and decides its NUMA node); a
copy into an untouched destination times the kernel, and the cost per byte grows with the copy
size, so bandwidth falls with size.  The destination's first touch must happen before the timed
region; ``placed_pair`` records the source's and the destination's fills apart
(``src_fill`` / ``dst_fill`` in ``Conditions.notes``).

Pure functions (no I/O, no clock): ``distance_facts``, ``near_power_of_two``,
``aliasing_artefact``, ``first_touch_artefact``.  ``placed_pair`` allocates (through
``host_buffer``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from advisor.measure.stats import compare

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

#: Address bits compared by the partial-address check behind 4K aliasing: bits 11:0, i.e. the
#: address modulo 4096 (Intel Optimization Reference Manual, "4K aliasing").
ALIAS_PERIOD_BYTES = 4096
#: A distance closer than this to a power of two counts as "a power of two apart": one aliasing
#: period on either side (the brief's and the manual's 4 KiB).
ALIAS_WINDOW_BYTES = ALIAS_PERIOD_BYTES
#: The deliberate offset of the destination modulo 4 KiB: half the period, the distance farthest
#: from aliasing in both directions; a multiple of 64 B so 64 B alignment is kept.
ALIAS_SKEW_BYTES = ALIAS_PERIOD_BYTES // 2

#: Artefact labels (the prefix of ``Point.artefact``), kept stable for consumers.
ALIASING_LABEL = "artefact: address aliasing"
FIRST_TOUCH_LABEL = "artefact: first touch in the timed region"


def near_power_of_two(distance: int, *, window: int = ALIAS_WINDOW_BYTES) -> bool:
    """True when ``|distance|`` bytes is within ``window`` bytes of a power of two (>= 1).

    Args:
        distance: signed byte distance between two addresses.
        window: bytes; strictly closer than this counts as near (``window`` >= 1).

    Raises:
        ValueError: ``window`` < 1.
    """
    if window < 1:
        raise ValueError(f"window must be >= 1 byte, got {window}")
    d = abs(int(distance))
    if d < window:
        return True  # within the window of 1, 2, 4, ... (and of 0: the same address)
    below = 1 << (d.bit_length() - 1)
    above = below << 1
    return d - below < window or above - d < window


@dataclass(frozen=True)
class Placement:
    """Where a destination lies relative to its source (bytes).

    Attributes:
        distance_bytes: ``dst address - src address`` (signed).
        distance_mod_4096: ``|distance| % 4096``: the low address bits the aliasing check sees.
        near_power_of_two: ``|distance|`` within ``ALIAS_WINDOW_BYTES`` of a power of two.
    """

    distance_bytes: int
    distance_mod_4096: int
    near_power_of_two: bool

    def notes(self) -> dict[str, Any]:
        """Fields for ``Conditions.notes`` (keys ``placement_*``)."""
        return {"placement_distance_bytes": self.distance_bytes,
                "placement_distance_mod_4096": self.distance_mod_4096,
                "placement_near_power_of_two": self.near_power_of_two}


def distance_facts(src_addr: int, dst_addr: int) -> Placement:
    """``Placement`` of a destination at ``dst_addr`` for a source at ``src_addr`` (bytes)."""
    d = int(dst_addr) - int(src_addr)
    return Placement(d, abs(d) % ALIAS_PERIOD_BYTES, near_power_of_two(d))


def placement_of(src: "np.ndarray", dst: "np.ndarray") -> Placement:
    """``Placement`` of two arrays' data pointers."""
    return distance_facts(src.__array_interface__["data"][0], dst.__array_interface__["data"][0])


def placed_pair(nbytes: int, *, src_fill: str = "random", dst_fill: str = "random",
                hugepages: Optional[bool] = None, seed: int = 0,
                skew_bytes: int = ALIAS_SKEW_BYTES, src_hugepages: Any = "same",
                ) -> tuple["np.ndarray", "np.ndarray", dict[str, Any]]:
    """A source and a destination of ``nbytes`` bytes each, never a power of two apart.

    Two ``host_buffer`` mappings are made; the destination is a view into its mapping at the
    first offset (a multiple of 64 B, at most a few pages) that puts it ``skew_bytes`` modulo
    4 KiB from the source and not within ``ALIAS_WINDOW_BYTES`` of a power of two.  Both fills
    happen here, before any timing: with ``dst_fill="random"`` (default) the destination's first
    touch is outside the timed region.

    Args:
        nbytes: bytes of each buffer (>= 1).
        src_fill, dst_fill: ``host_buffer`` fills ("random", "zeros", "untouched").
        hugepages: page policy of both mappings (see ``host_buffer``).
        src_hugepages: the source's own policy when it differs (True, False or None); the
            default "same" uses ``hugepages``.
        seed: fill seed (the destination uses ``seed + 1``).
        skew_bytes: wanted ``|distance| % 4096``, a multiple of 64 in (0, 4096).

    Returns:
        ``(src, dst, notes)``: two uint8 arrays of ``nbytes`` and the ``Conditions.notes`` fields
        ``src_fill``, ``dst_fill`` and ``placement_*`` (see ``Placement.notes``).

    Raises:
        ValueError: bad size, fill or skew; RuntimeError: no placement found (never seen: the
        search covers more offsets than there are powers of two near the distance) or a
        buffer not resident (see ``host_buffer``).
    """
    src, dst, notes, _ = _placed(nbytes, src_fill=src_fill, dst_fill=dst_fill,
                                 hugepages=hugepages, seed=seed, skew_bytes=skew_bytes,
                                 src_hugepages=src_hugepages, control=False)
    return src, dst, notes


def placed_pair_with_control(nbytes: int, *, src_fill: str = "random",
                             dst_fill: str = "random", hugepages: Optional[bool] = None,
                             seed: int = 0) -> tuple["np.ndarray", "np.ndarray", "np.ndarray",
                                                     dict[str, Any]]:
    """``placed_pair`` plus an aliasing control: ``(src, dst, aliased, notes)``.

    ``aliased`` is a second view into the destination's mapping (same fill, already touched: no
    extra allocation or fill) whose distance from ``src`` is a multiple of 4 KiB, the placement
    4K aliasing needs (equal address bits 11:0).  Timing the same copy into ``dst`` and into
    ``aliased`` and judging them with ``aliasing_artefact`` measures whether this machine
    aliases.  ``dst`` and ``aliased`` overlap: time them one after the other, never together.
    ``notes`` are ``placed_pair``'s (they describe ``dst``) plus ``control_distance_bytes`` and
    ``control_distance_mod_4096`` (0) for ``aliased``.  Arguments and errors: ``placed_pair``.
    """
    src, dst, notes, control = _placed(nbytes, src_fill=src_fill, dst_fill=dst_fill,
                                       hugepages=hugepages, seed=seed,
                                       skew_bytes=ALIAS_SKEW_BYTES, src_hugepages="same",
                                       control=True)
    return src, dst, control, notes


def _placed(nbytes: int, *, src_fill: str, dst_fill: str, hugepages: Optional[bool], seed: int,
            skew_bytes: int, src_hugepages: Any, control: bool):
    from advisor.measure.buffers import host_buffer

    if not 0 < skew_bytes < ALIAS_PERIOD_BYTES or skew_bytes % 64:
        raise ValueError(f"skew_bytes must be a multiple of 64 in (0, 4096), got {skew_bytes}")
    # slack: one period to reach the skew, plus room to step over the windows of the powers of
    # two near a small distance (4, 8, 16, 32 KiB windows overlap); 64 KiB always suffices
    slack = 16 * ALIAS_PERIOD_BYTES
    src = host_buffer(nbytes, fill=src_fill,  # type: ignore[arg-type]
                      hugepages=hugepages if src_hugepages == "same" else src_hugepages, seed=seed)
    whole = host_buffer(nbytes + slack, fill=dst_fill, hugepages=hugepages,  # type: ignore[arg-type]
                        seed=seed + 1)
    s_addr = src.__array_interface__["data"][0]
    w_addr = whole.__array_interface__["data"][0]
    found = None
    for off in range(0, slack + 1, 64):
        p = distance_facts(s_addr, w_addr + off)
        if p.distance_mod_4096 == skew_bytes and not p.near_power_of_two:
            found = (whole[off:off + nbytes], p)
            break
    if found is None:
        raise RuntimeError("placed_pair: no offset within the slack avoids a power-of-two distance")
    dst, p = found
    notes = {"src_fill": src_fill, "dst_fill": dst_fill, **p.notes()}
    if not control:
        return src, dst, notes, None
    # one period of offsets always holds a multiple of 4096 from the source (64 B steps)
    off = next(o for o in range(0, ALIAS_PERIOD_BYTES + 1, 64)
               if distance_facts(s_addr, w_addr + o).distance_mod_4096 == 0)
    c = distance_facts(s_addr, w_addr + off)
    notes.update(control_distance_bytes=c.distance_bytes, control_distance_mod_4096=0)
    return src, dst, notes, whole[off:off + nbytes]


def aliasing_artefact(a: Sequence[float], b: Sequence[float], *, noise_floor: float,
                      higher_is_better: bool = True, seed: int = 0) -> Optional[str]:
    """An artefact label when the same copy measured at two placements differs beyond noise.

    The copy (same size, same buffers' fills) is measured with the destination at two
    placements (e.g. a power of two from the source and at ``ALIAS_SKEW_BYTES``); memory
    bandwidth does not depend on the low address bits, so a difference beyond the measured
    noise floor is address aliasing, and neither figure is the memory's.

    Args:
        a, b: samples at the two placements (bytes/s, or seconds with ``higher_is_better``
            False); positive, finite.
        noise_floor: relative floor from A/A repeats (``noise_floor_from_aa``), >= 0.
        higher_is_better: orientation of the samples.
        seed: bootstrap seed.

    Returns:
        None when the placements agree within the floor, else a label starting with
        ``ALIASING_LABEL``.

    Raises:
        ValueError: see ``compare``.
    """
    c = compare(a, b, noise_floor=noise_floor, higher_is_better=higher_is_better, seed=seed)
    if c.verdict == "indistinguishable":
        return None
    return (f"{ALIASING_LABEL}: the same copy ran {c.ratio:.3g}x (95% CI {c.ci_low:.3g}-"
            f"{c.ci_high:.3g}) at another source/destination placement, beyond the "
            f"{c.noise_floor:.3g} noise floor (4K aliasing, Intel Optimization Reference Manual)")


def first_touch_artefact(points: Sequence[tuple[float, Sequence[float]]], *,
                         dst_fill: Optional[str], noise_floor: float,
                         seed: int = 0) -> Optional[str]:
    """An artefact label for a bandwidth curve that falls with size into an untouched destination.

    Args:
        points: ``(size in bytes, bandwidth samples in bytes/s)`` per size, any order; sizes
            without samples are ignored.
        dst_fill: the destination's fill recorded with the measurement (``dst_fill`` note).
        noise_floor: relative floor (``noise_floor_from_aa``), >= 0.
        seed: bootstrap seed.

    Returns:
        None when the destination was touched (any fill but "untouched"), when fewer than two
        sizes were measured, or when the largest size is not slower than the smallest beyond
        the floor with medians falling overall; else a label starting with
        ``FIRST_TOUCH_LABEL``.

    Raises:
        ValueError: non-positive or non-finite samples (see ``compare``).
    """
    import numpy as np

    if dst_fill != "untouched":
        return None
    pts = sorted((float(x), list(s)) for x, s in points if len(s))
    if len(pts) < 2:
        return None
    meds = [float(np.median(s)) for _, s in pts]
    falls = sum(m2 < m1 for m1, m2 in zip(meds, meds[1:]))
    c = compare(pts[0][1], pts[-1][1], noise_floor=noise_floor, higher_is_better=True, seed=seed)
    if c.verdict != "worse" or 2 * falls < len(meds) - 1:
        return None
    return (f"{FIRST_TOUCH_LABEL}: bandwidth falls from {meds[0] / 1e9:.3g} GB/s at "
            f"{int(pts[0][0])} B to {meds[-1] / 1e9:.3g} GB/s at {int(pts[-1][0])} B into an "
            f"untouched destination: the copy paid its page faults, not a bandwidth")
