"""The first-touch rules of the host-buffer advice (pure): where and when a benchmark's pages
were first written.

- ``copy-placement-aliasing``: source and destination within 4 KiB of a power of two apart (4K
  aliasing, Intel Optimization Reference Manual), from the notes ``advisor.measure.placed_pair``
  writes;
- ``first-touch-in-timed-region``: an untouched destination whose bandwidth falls with size
  (``advisor.measure.first_touch_artefact``);
- ``first-touch-not-done``: run-to-run results that rise and settle (``classify_series``);
- ``numa-first-touch``: with two or more NUMA nodes, Linux places each page on the node of the
  thread that first writes it; the placement achieved (``numa-placement`` evidence) and whether
  threads were pinned.
"""

from __future__ import annotations

from advisor.measure import classify_series, first_touch_artefact
from advisor.measure.placement import FIRST_TOUCH_LABEL
from advisor.models import Evidence, Facts, Finding

from . import evidence
from .recommend_common import PREFAULT_REMEDY


def placement_and_touch(ev: list[Evidence], findings: list[Finding], nf: float) -> None:
    """Copy evidence measured at an aliasing placement, or into an untouched destination whose
    bandwidth falls with size (the notes written by ``advisor.measure.placed_pair``)."""
    for e in ev:
        notes = e.conditions.notes
        near = sorted(k for k, v in notes.items()
                      if k.endswith("placement_near_power_of_two") and v is True)
        if near:
            findings.append(Finding(
                id="copy-placement-aliasing", severity="warning",
                message=(f"{e.id}: source and destination were within 4 KiB of a power of two "
                         f"apart ({', '.join(near)}): loads and stores share their low 12 address "
                         "bits (4K aliasing, Intel Optimization Reference Manual), so these copy "
                         "figures may measure aliasing, not memory"),
                remedy="re-measure with advisor.measure.placed_pair (destination skewed by "
                       "2 KiB mod 4 KiB)",
                evidence=[e.id]))
        dst_fill = notes.get("dst_fill")
        if dst_fill != "untouched":
            continue
        for s in e.series:
            if s.unit != evidence.BPS:
                continue
            # labelled when the record was read (relabel), or judged here on the samples
            label = next((p.artefact for p in s.points
                          if p.artefact and p.artefact.startswith(FIRST_TOUCH_LABEL)), None)
            label = label or first_touch_artefact(
                [(p.x, p.samples) for p in s.points if p.x is not None and not p.artefact],
                dst_fill=str(dst_fill), noise_floor=nf)
            if label:
                findings.append(Finding(
                    id="first-touch-in-timed-region", severity="warning",
                    message=f"{e.id} ({s.name}): {label}",
                    remedy=PREFAULT_REMEDY + "; touch the destination too, before timing",
                    evidence=[e.id]))
                break



def first_use(ev: list[Evidence], findings: list[Finding], nf: float) -> None:
    """Append ``first-touch-not-done`` when the ``first-use`` series rises and settles."""
    e = Evidence.find(ev, evidence.EV_FIRST_USE)
    if e is None or not e.series:
        return
    s = e.series[0]
    values = [evidence.point_median(p) for p in sorted(s.points, key=lambda p: (p.x is None, p.x))]
    values = [v for v in values if v is not None]
    if len(values) < 3:
        return
    fu = classify_series(values, higher_is_better=(s.unit == evidence.BPS))
    if fu.kind == "rising":
        unit = s.unit
        ss = evidence.fmt_bw(fu.steady_median) if unit == evidence.BPS else f"{fu.steady_median:g} {unit}"
        findings.append(Finding(
            id="first-touch-not-done",
            severity="warning",
            message=(
                f"first touch not done: run-to-run results rise monotonically and settle after "
                f"{fu.warmup} runs (steady state {ss}); the first runs paid the page faults"
            ),
            remedy=PREFAULT_REMEDY + "; report warm-up runs apart from the steady state",
            evidence=[evidence.EV_FIRST_USE],
        ))



def numa(ev: list[Evidence], facts: Facts, findings: list[Finding]) -> None:
    """Append ``numa-first-touch`` on a machine with two or more NUMA nodes."""
    nodes = facts.memory.numa_nodes or len(facts.memory.numa_node_cpus) or None
    e = Evidence.find(ev, evidence.EV_NUMA)
    if not nodes or nodes < 2:
        return
    placement = ""
    pinned = None
    if e is not None:
        pages = {k: v for k, v in e.values.items() if k.startswith("pages.node")}
        if pages:
            placement = " Placement achieved: " + ", ".join(
                f"{k[len('pages.'):]}={v}" for k, v in sorted(pages.items())) + " pages."
        if "local_bps" in e.values and "remote_bps" in e.values:
            placement += (f" Local {evidence.fmt_bw(float(e.values['local_bps']))} vs remote "
                          f"{evidence.fmt_bw(float(e.values['remote_bps']))}.")
        pinned = e.values.get("pinned")
        init = e.values.get("init")
        if init is not None:
            placement += f" Initialised by: {init}."
    findings.append(Finding(
        id="numa-first-touch",
        severity="warning" if pinned is False else "info",
        message=(f"{nodes} NUMA nodes: Linux places each page on the node of the thread that "
                 "first writes it, so data initialised by one thread all lands on one node."
                 + placement
                 + (" Thread/process pinning is not set, so the placement is left to chance."
                    if pinned is False else "")),
        remedy=("initialise every buffer with the same pinned threads (or processes) that run the "
                "timed kernel, or bind memory explicitly (numactl --membind / mbind); set pinning "
                "(OMP_PROC_BIND/OMP_PLACES, taskset, the MPI launcher's binding) and record the "
                "per-node page placement from /proc/<pid>/numa_maps"),
        evidence=[evidence.EV_NUMA] if e is not None else [],
    ))
