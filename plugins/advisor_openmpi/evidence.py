"""Evidence ids of the openmpi probe, readers of its records (pure) and the fleet headline.

Records written by ``check`` / ``measure`` / ``verify``:

* ``ompi-library``: identity: ``ompi_version``, ``ucx_version``, ``components_<fw>``, the MPI
  library string of mpi4py (``implementation``, ``version``), the launcher and its family
  (``prrte`` for Open MPI 5), ``run_as_root`` (the launch env then carries
  ``OMPI_ALLOW_RUN_AS_ROOT=1`` and ``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1``).
* ``ompi-cma-siblings``: the sibling ``process_vm_readv`` test of ``advisor.measure.mpi.sibling``
  (``result``, ``errno``, the reader's / target's security state).
* ``ompi-selection``: a 2-rank run of the default selection at verbose level: which path
  carried the messages (``path``, ``pml``, ``btl_peer``, ``smsc``, ...; see
  ``advisor_openmpi.selection.Selection.values``), ``ok`` (content checked).
* ``ompi-selection.ucx``: the same with the ucx path and ``UCX_PROTO_INFO=y``:
  ``ucx_proto:<lo>..<hi>`` = "<protocol> via <transport>" (intra-node tagged sends).
* ``ompi-paths``: the candidate paths interleaved across launches: series
  ``latency:<path>`` (s, one way) and ``bandwidth:<path>`` (bytes/s), one point per size and
  launch (label ``run<i>``); values ``paths``, ``rounds``, ``skipped:<path>`` (why a path
  was not measured).
* ``ompi-limits``: eager / rendezvous limit variants of the chosen path (same layout, the
  configurations named ``<path>@<VAR>=<value>``).
* ``ompi-verify``: ``advisor verify``'s advised vs baseline runs (same layout).
"""

from __future__ import annotations

from typing import Iterable, Optional

from advisor.models import Evidence

from advisor_openmpi.paths import ORDER

LIBRARY = "ompi-library"
SIBLING = "ompi-cma-siblings"
SELECTION = "ompi-selection"
SELECTION_UCX = "ompi-selection.ucx"
PATHS = "ompi-paths"
LIMITS = "ompi-limits"
VERIFY = "ompi-verify"
LAT, BW = "latency", "bandwidth"


def cma_usable(evidence: Iterable[Evidence]) -> Optional[bool]:
    """The sibling test's verdict: True (the read worked and its bytes were verified), False
    (it failed: CMA cannot work between ranks here), None (not run, or it could not run)."""
    ev = Evidence.find(evidence, SIBLING)
    if ev is None or ev.values.get("result") in (None, "error"):
        return None
    return ev.values.get("result") == "ok" and bool(ev.values.get("verified"))


def configs_of(ev: Evidence) -> list[str]:
    """The configuration names of a ``ompi-paths`` / ``ompi-limits`` / ``ompi-verify`` record,
    in the order of its ``paths`` value (else of its latency series)."""
    named = [c for c in str(ev.values.get("paths", "")).split(",") if c]
    if named:
        return named
    return [s.name.split(":", 1)[1] for s in ev.series if s.name.startswith(LAT + ":")]


#: Human names of the fleet headline figures (``advisor.specs.headline``: a probe's
#: ``headline_titles``), keyed as :func:`headline` returns them: one per candidate path
#: (``advisor_openmpi.paths.ORDER``) and the default path's latency.
HEADLINE_TITLES = {
    **{f"{p.replace('-', '_')}_bandwidth_largest_bytes_per_s":
       f"Open MPI bandwidth at the largest message, {p} path" for p in ORDER},
    "default_latency_smallest_s": "Open MPI one-way latency at the smallest message, default path"}


def headline(evidence: Iterable[Evidence]) -> dict[str, float]:
    """Fleet headline figures: one-way latency at the smallest and bandwidth at the largest
    message size of the site's default path (``default_latency_smallest_s``,
    ``default_bandwidth_largest_bytes_per_s``), and the bandwidth of each other measured path at
    the largest size (``<path>_bandwidth_largest_bytes_per_s``, ``-`` -> ``_``), from
    ``ompi-paths``; empty without it."""
    from advisor.specs.headline import median_at_largest_x

    ev = Evidence.find(list(evidence), PATHS)
    if ev is None:
        return {}
    out: dict[str, Optional[float]] = {}
    for cfg in configs_of(ev):
        key = cfg.replace("-", "_")
        out[f"{key}_bandwidth_largest_bytes_per_s"] = median_at_largest_x(
            ev.series_named(f"{BW}:{cfg}"))
    lat = ev.series_named(f"{LAT}:default")
    if lat is not None:
        pts = [p for p in lat.points if p.x is not None and p.median() is not None]
        if pts:
            import statistics

            low = min(p.x for p in pts)
            out["default_latency_smallest_s"] = statistics.median(
                p.median() for p in pts if p.x == low)
    return {k: float(v) for k, v in out.items() if v is not None}
