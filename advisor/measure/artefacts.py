"""Artefacts in recorded evidence: labels re-derived from what was recorded, artefact points
that carry no bandwidth, and the veto an artefact casts on the advice drawn from its evidence.

Everything here is pure (no I/O, no clock), so a profile recorded long ago is judged by the
same rules as a fresh measurement:

- ``artefact_point(point, label)``: the point as it is stored once it is known to be an
  artefact: its ``x`` and ``label`` kept, ``artefact`` set, and **no samples, no warm-up
  samples and no statistics** (the raw timing is dropped, never kept as a bandwidth; a
  plugin that needs a figure derived from it, e.g. host-buffer's zero-page inflation, records
  that ratio in ``Evidence.values`` before the point is stripped).
- ``relabel(evidence)``: the artefact labels that follow from the evidence's own record, for
  bandwidth series (unit ``bytes/s``): a source recorded as untouched (``buffer_fill`` or note
  ``src_fill``: the zero page), a recorded placement a power of two apart (note
  ``[<label>.]placement_near_power_of_two``: 4K aliasing), a curve that falls with size into
  an untouched destination (note ``dst_fill``: ``first_touch_artefact``), and a median above
  ``CLPEAK_FACTOR`` x the copy ceiling recorded in ``values`` (``CEILING_PEAK_KEY``, else one
  of ``CEILING_KEYS``: ``plausibility``).  Every artefact point, of any unit, is then stripped
  (``artefact_point``).  ``show``, ``report`` and ``fleet`` read profiles through it, so a
  profile written before these rules (bandwidth samples on an artefact point) is shown with
  the label, not the figure.
- ``flags(evidence)``, ``veto(advice, evidence)`` and ``withheld(evidence, id, what)``: what
  the artefacts of a record mean for the recommendations that cite it
  (``Recommendation.evidence``, an id or its family ``id.<suffix>``).  Severity, chosen per kind of artefact:

  * **withdrawn** (recommendation removed, finding ``ARTEFACT_WITHDRAWN`` names it and the
    settings it would have set): address aliasing (the placement touches every figure of the
    record, so the comparison the advice rests on measured the placement), first touch in the
    timed region (the curve's shape is page-fault cost, not the setting), or a series whose
    every point is an artefact (nothing physical is left to derive advice from);
  * **lowered to low confidence** (finding ``ARTEFACT_LOWERED``): some points of a series are
    artefacts (above the copy ceiling, zero page): the run produced figures that are not
    bandwidths, so the rest of the record is not trusted beyond "low".

``veto`` is idempotent: applying it twice gives the same advice.  A plugin whose ``recommend``
would find nothing to derive from a record stripped of its artefacts asks ``withheld`` first,
so the advice is said to be withdrawn rather than reported as "no effect".

``implausible_threshold`` bounds a size threshold a library reports about itself (below a page
or above memory: not a threshold this machine can have).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from advisor.measure.ceiling import CLPEAK_FACTOR, plausibility
from advisor.measure.placement import ALIAS_WINDOW_BYTES, ALIASING_LABEL, first_touch_artefact
from advisor.models import Advice, Evidence, Finding, Point, Profile, Series

#: The unit of bandwidth series (``Series.unit``).
BANDWIDTH_UNIT = "bytes/s"
#: ``Evidence.values`` keys under which plugins record this run's copy ceiling (median, bytes/s).
CEILING_KEYS = ("ceiling_bytes_per_s", "copy_ceiling_bytes_per_s")
#: ``Evidence.values`` key of the ceiling's peak (its ``Stats.max``, bytes/s), the figure
#: ``plausibility`` compares with at measurement time; older records hold only the median,
#: which is then used (a stricter limit: the median is at most the peak).
CEILING_PEAK_KEY = "ceiling_peak_bytes_per_s"
#: ``Evidence.values`` keys of a measured relative noise floor, first found wins (0 without).
NOISE_FLOOR_KEYS = ("noise_floor", "noise_floor.within_run")

#: Finding ids written by ``veto``.
ARTEFACT_WITHDRAWN = "advice-withdrawn-artefact"
ARTEFACT_LOWERED = "advice-lowered-artefact"
REMEDY = ("re-measure on a quiet node (advisor probe); buffers from the harness "
          "(advisor.measure.placed_pair: touched, random-filled, never a power of two apart)")

#: Kinds of artefact, matched in ``Point.artefact`` (the labels written by ``plausibility``,
#: ``placement`` and the plugins), in this order: "ceiling" comes first, the above-ceiling
#: label also lists zero pages among its causes.
ARTEFACT_KINDS = (("ceiling", "above the copy ceiling"), ("aliasing", "address aliasing"),
                  ("first touch", "first touch"), ("zero page", "zero page"),
                  ("zero-page", "zero page"), ("untouched", "zero page"))
#: Kinds whose artefact withdraws the advice drawn from the record (see the module docstring).
WITHDRAWING_KINDS = ("address aliasing", "first touch")

ZERO_PAGE_LABEL = ("artefact: zero page: the source was recorded as untouched (never written), "
                   "so its pages map the kernel's shared zero page; not a bandwidth")


def artefact_kind(label: str) -> str:
    """A short kind for an artefact label ("zero page", "address aliasing", "first touch",
    "above the copy ceiling", else "artefact"); never a figure from the label."""
    low = label.lower()
    return next((kind for key, kind in ARTEFACT_KINDS if key in low), "artefact")


def artefact_point(point: Point, label: Optional[str] = None) -> Point:
    """``point`` as an artefact: ``x`` and ``label`` kept, ``artefact`` = ``label`` (default:
    the point's own label), no samples, no warm-up samples, no statistics.

    Raises:
        ValueError: neither ``label`` nor ``point.artefact`` is set.
    """
    why = label or point.artefact
    if not why:
        raise ValueError("artefact_point needs an artefact label")
    if point.artefact == why and not point.samples and not point.warmup and point.stats is None:
        return point
    return Point(x=point.x, label=point.label, artefact=why)


def _placement_label(notes: dict, prefix: str) -> Optional[str]:
    if notes.get(f"{prefix}placement_near_power_of_two") is not True:
        return None
    d = notes.get(f"{prefix}placement_distance_bytes")
    apart = f"{int(d)} B apart, " if isinstance(d, (int, float)) else ""
    return (f"{ALIASING_LABEL}: source and destination were recorded {apart}within "
            f"{ALIAS_WINDOW_BYTES} B of a power of two (4K aliasing, Intel Optimization "
            "Reference Manual): the figure may measure the placement, not memory")


def _number(values: dict, keys: Sequence[str]) -> Optional[float]:
    for k in keys:
        v = values.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return None


def _relabel_series(ev: Evidence, s: Series, floor: float) -> Series:
    notes = ev.conditions.notes
    untouched = "untouched" in (ev.conditions.buffer_fill, notes.get("src_fill"))
    peak = _number(ev.values, (CEILING_PEAK_KEY, *CEILING_KEYS))
    labels: list[Optional[str]] = []
    for p in s.points:
        label = p.artefact
        if label is None and untouched:
            label = ZERO_PAGE_LABEL
        if label is None:
            own = f"{p.label}." if p.label and f"{p.label}.placement_near_power_of_two" in notes \
                else ""
            label = _placement_label(notes, own)
        m = p.median()
        if label is None and peak is not None and m is not None and m > 0:
            label = plausibility(m, peak, factor=CLPEAK_FACTOR)
        labels.append(label)
    if notes.get("dst_fill") == "untouched":
        pts = [(p.x, p.samples) for p, lab in zip(s.points, labels)
               if lab is None and p.x is not None and p.samples and min(p.samples) > 0]
        try:
            touch = first_touch_artefact(pts, dst_fill="untouched", noise_floor=floor)
        except ValueError:  # non-finite samples: nothing can be said about the curve
            touch = None
        if touch:
            labels = [lab or touch for lab in labels]
    return s.model_copy(update={"points": [artefact_point(p, lab) if lab else p
                                           for p, lab in zip(s.points, labels)]})


def relabel(ev: Evidence) -> Evidence:
    """``ev`` with the artefact labels its record implies (see the module docstring) and every
    artefact point stripped of samples and statistics.  Labels already present are kept;
    series of other units than ``BANDWIDTH_UNIT`` only have their labelled points stripped.
    Returns ``ev`` itself when nothing changes."""
    floor = _number(ev.values, NOISE_FLOOR_KEYS) or 0.0
    out = []
    for s in ev.series:
        if s.unit == BANDWIDTH_UNIT:
            out.append(_relabel_series(ev, s, floor))
        else:
            out.append(s.model_copy(update={"points": [
                artefact_point(p) if p.artefact else p for p in s.points]}))
    if out == list(ev.series):
        return ev
    return ev.model_copy(update={"series": out})


def relabel_all(evidence: Iterable[Evidence]) -> list[Evidence]:
    """``relabel`` of each record, in order."""
    return [relabel(e) for e in evidence]


def relabel_profile(profile: Profile) -> Profile:
    """``profile`` with every result's evidence (and every verification's) relabelled: how
    ``show``, ``report`` and ``fleet`` read a profile, whenever it was recorded."""
    results = [r.model_copy(update={"evidence": relabel_all(r.evidence)})
               for r in profile.results]
    ver = [v.model_copy(update={"evidence": relabel_all(v.evidence)})
           for v in profile.verifications]
    return profile.model_copy(update={"results": results, "verifications": ver})


@dataclass(frozen=True)
class Flag:
    """The artefacts of one series of one record.

    ``evidence``/``series``: where; ``kinds``: ``artefact_kind`` of each distinct label;
    ``points``/``total``: artefact points and all points of the series; ``withdraw``: True
    when the advice drawn from the record is withdrawn, False when it is lowered to low
    confidence (see the module docstring)."""

    evidence: str
    series: str
    kinds: tuple[str, ...]
    points: int
    total: int
    withdraw: bool

    def text(self) -> str:
        """One clause naming the series, how many points and which kinds of artefact."""
        return (f"{self.evidence} ({self.series}): {self.points} of {self.total} point(s) are "
                f"artefacts ({', '.join(self.kinds)}), not measurements")


def flags(evidence: Iterable[Evidence]) -> list[Flag]:
    """One ``Flag`` per series holding an artefact point, after ``relabel``."""
    out = []
    for ev in relabel_all(evidence):
        for s in ev.series:
            bad = [p for p in s.points if p.artefact]
            if not bad:
                continue
            kinds = tuple(dict.fromkeys(artefact_kind(p.artefact or "") for p in bad))
            withdraw = any(k in WITHDRAWING_KINDS for k in kinds) or len(bad) == len(s.points)
            out.append(Flag(ev.id, s.name, kinds, len(bad), len(s.points), withdraw))
    return out


def _cites(ids: Sequence[str], ev_id: str) -> bool:
    return any(ev_id == i or ev_id.startswith(i + ".") for i in ids)


def veto(advice: Advice, evidence: Iterable[Evidence]) -> Advice:
    """``advice`` with every recommendation whose evidence holds an artefact withdrawn or
    lowered to ``low`` confidence, each with a finding saying why (module docstring).

    Pure and idempotent; ``advice`` itself when no cited record holds an artefact."""
    fl = flags(evidence)
    if not fl or not advice.recommendations:
        return advice
    recs, found = [], list(advice.findings)
    seen = {(f.id, f.message.split(":", 1)[0]) for f in found}
    for rec in advice.recommendations:
        mine = [f for f in fl if _cites(rec.evidence, f.evidence)]
        if not mine:
            recs.append(rec)
            continue
        why = "; ".join(f.text() for f in mine)
        ev_ids = list(dict.fromkeys(f.evidence for f in mine))
        if any(f.withdraw for f in mine):
            sets = ", ".join(f"{s.name}={s.value}" for s in rec.settings) or "no settings"
            head = f"recommendation {rec.id} withdrawn"
            finding = Finding(
                id=ARTEFACT_WITHDRAWN, severity="warning", evidence=ev_ids, remedy=REMEDY,
                message=(f"{head}: '{rec.title}' rests on {why}; an artefact that touches the "
                         f"whole comparison leaves no advice (it would have set {sets})"))
        else:
            recs.append(rec.model_copy(update={"confidence": "low"}))
            head = f"recommendation {rec.id} at low confidence"
            finding = Finding(
                id=ARTEFACT_LOWERED, severity="warning", evidence=ev_ids, remedy=REMEDY,
                message=(f"{head}: '{rec.title}' rests on {why}; the run produced figures "
                         f"that are not bandwidths, so its other figures are not trusted "
                         f"beyond low confidence (it was {rec.confidence})"))
        if (finding.id, head) not in seen:
            seen.add((finding.id, head))
            found.append(finding)
    return advice.model_copy(update={"recommendations": recs, "findings": found})


def withheld(evidence: Iterable[Evidence], ev_id: str, what: str) -> Optional[Finding]:
    """For a plugin's pure ``recommend`` before it derives ``what`` (e.g. "the glibc
    non-temporal threshold advice") from the record ``ev_id`` (or its family): a finding
    ``ARTEFACT_WITHDRAWN`` when that record holds an artefact that withdraws advice (module
    docstring), so the advice is not derived at all and the reason is said; None otherwise."""
    mine = [f for f in flags(e for e in evidence if _cites([ev_id], e.id)) if f.withdraw]
    if not mine:
        return None
    return Finding(id=ARTEFACT_WITHDRAWN, severity="warning", remedy=REMEDY,
                   evidence=list(dict.fromkeys(f.evidence for f in mine)),
                   message=(f"no {what}: it would rest on "
                            + "; ".join(f.text() for f in mine)
                            + "; an artefact that touches the whole comparison leaves no advice"))


def implausible_threshold(value: object, *, page_bytes: Optional[int],
                          memory_bytes: Optional[int]) -> Optional[str]:
    """None when ``value`` (bytes, a size threshold a library reports about itself, e.g. a
    CVAR default from ``mpivars`` or a tunable from ``ld.so --list-tunables``) can be a
    threshold on this machine; else why not: not a positive integer, below one base page
    (``page_bytes``: no copy path switches inside a page's worth of bytes by design; the
    smallest defaults known are 8 KiB, MPICH's CMA threshold, and 0x4040, glibc's non-temporal
    minimum) or above the machine's memory (``memory_bytes``: no message can be that large).
    A bound whose machine figure is unknown (None) is not checked."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return f"{value!r} is not a positive number of bytes"
    if page_bytes and value < page_bytes:
        return f"{value} B is below one {page_bytes} B page"
    if memory_bytes and value > memory_bytes:
        return f"{value} B is above the machine's {memory_bytes} B of memory"
    return None
