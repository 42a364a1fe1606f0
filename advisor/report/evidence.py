"""Pure rows for the human views of a profile (``advisor show``): no I/O, no printing.

Quantities are human-readable (``advisor.specs.units``): sizes in KiB/MiB, durations in
µs/ms, bandwidths in MB/s / GB/s.

An artefact point (``Point.artefact`` set: zero page, address aliasing, first touch in the
timed region, above the copy ceiling) is never a bandwidth: its figure is left out of every
range shown here, and the row says how many points of the series are artefacts and why.  The
labels are re-derived from the recorded conditions (``advisor.measure.relabel``), so a profile
written before a rule existed is shown by today's rules.
"""

from __future__ import annotations

from advisor.measure.artefacts import artefact_kind
from advisor.models import Point, Profile, Scalar
from advisor.specs.figures import point_median
from advisor.specs.units import format_value

EVIDENCE_HEADERS = ("probe", "evidence", "series", "points", "median range", "unit", "artefacts")


def artefact_summary(points: list[Point]) -> str:
    """``""`` when no point is an artefact, else ``"<n> artefact(s): <point> (<kind>); ..."``
    naming each artefact point by its label (or x) and the kind of artefact."""
    bad = [p for p in points if p.artefact]
    if not bad:
        return ""
    names = []
    for p in bad:
        where = p.label if p.label is not None else (f"x={p.x:g}" if p.x is not None else "?")
        names.append(f"{where} ({artefact_kind(p.artefact or '')})")
    return f"{len(bad)} artefact(s): " + "; ".join(names)


def evidence_rows(profile: Profile) -> list[list[str]]:
    """One row per series (and one per series-less evidence) in ``EVIDENCE_HEADERS`` order.

    ``median range`` spans only the physical points (artefacts excluded); a series whose every
    point is an artefact shows ``"none (artefacts only)"``.  The profile is read through
    ``advisor.measure.relabel_profile``: a point its record shows to be an artefact is labelled
    and left out, whenever the profile was written.
    """
    from advisor.measure.artefacts import relabel_profile

    profile = relabel_profile(profile)
    rows: list[list[str]] = []
    for r in profile.results:
        for ev in r.evidence:
            for s in ev.series:
                meds = [m for m in (point_median(p) for p in s.points) if m is not None]
                arte = artefact_summary(s.points)
                rng = (f"{format_value(min(meds), s.unit)} .. {format_value(max(meds), s.unit)}"
                       if meds else "none (artefacts only)" if arte else "")
                xs = [p.x for p in s.points if p.x is not None]
                where = ""
                if xs and s.x_unit:
                    lo, hi = format_value(min(xs), s.x_unit), format_value(max(xs), s.x_unit)
                    where = f" at {lo}" if lo == hi else f" at {lo} .. {hi}"
                rows.append([r.probe, ev.id, s.name, f"{len(s.points)}{where}", rng, s.unit,
                             arte])
            if not ev.series:
                rows.append([r.probe, ev.id, f"{len(ev.values)} value(s)",
                             values_summary(ev.values), "", "", ""])
    return rows


#: Unit of a value from the end of its key (the project's convention: the unit in the name).
KEY_UNITS = (("_bytes_per_s", "bytes/s"), ("bytes_per_s", "bytes/s"), ("_bytes", "bytes"),
             ("_s", "s"))
#: Values named in a series-less evidence row at most (the profile holds them all).
SUMMARY_VALUES = 3


def value_text(key: str, value: Scalar) -> str:
    """``value`` human-readable when its key names the unit (``..._bytes``, ``..._s``,
    ``..._bytes_per_s``; ``advisor.specs.units``), else as stored."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        base = key.rsplit(".", 1)[0] if key.endswith((".value", ".lower", ".upper")) else key
        for suffix, unit in KEY_UNITS:
            if base.endswith(suffix):
                return format_value(float(value), unit)
    return str(value)


def values_summary(values: dict) -> str:
    """The first ``SUMMARY_VALUES`` values as ``key=value`` (human-readable, ``value_text``),
    with ``(+n more)`` when there are more."""
    items = list(values.items())
    text = ", ".join(f"{k}={value_text(k, v)}" for k, v in items[:SUMMARY_VALUES])
    more = len(items) - SUMMARY_VALUES
    return text + (f" (+{more} more)" if more > 0 else "")
