"""How many raw samples a profile keeps per point, and the cut to that many (``thin_evidence``):
the runner applies it to every evidence it stores, the fleet pool to pooled evidence, and a
plugin's sequential stop rule to the evidence it decides on, so a decision taken while measuring
reads the samples ``recommend`` later reads from the stored profile."""

from __future__ import annotations

from advisor.models import Evidence

#: Raw samples kept per point in a profile.  Statistics are computed by the harness on every
#: sample before this cut (``Stats.n`` counts them all); the profile keeps every k-th sample in
#: time order, so trends and spread stay visible.  Sized so that a full probe's profile (the
#: mpich-cma sweep alone takes ~80,000 latency and bandwidth samples here) stays small enough for
#: ``advisor emit`` to parse within its 0.3 s start-up target (tomllib reads ~6 MB/s here).
MAX_SAMPLES_PER_POINT = 48


def thin_evidence(ev: Evidence, limit: int = MAX_SAMPLES_PER_POINT) -> Evidence:
    """``ev`` with at most ``limit`` samples per point (every k-th, first kept); warm-up samples,
    statistics and values are kept whole.  ``recommend`` sees the thinned evidence, so advice
    re-derived from a stored profile matches the advice given at probe time.  Returns ``ev``
    itself when no point has more than ``limit`` samples."""
    if all(len(pt.samples) <= limit for s in ev.series for pt in s.points):
        return ev
    series = []
    for s in ev.series:
        points = []
        for pt in s.points:
            if len(pt.samples) > limit:
                step = -(-len(pt.samples) // limit)  # ceil
                pt = pt.model_copy(update={"samples": pt.samples[::step]})
            points.append(pt)
        series.append(s.model_copy(update={"points": points}))
    return ev.model_copy(update={"series": series})
