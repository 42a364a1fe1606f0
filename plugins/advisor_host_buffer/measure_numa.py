"""Stage 6 of the host-buffer probe, ``numa-placement``: with more than one NUMA node, first
touch by one pinned thread on node 0, then copies from a thread on node 0 and on the last node.

Both copies run in one child (:mod:`advisor_host_buffer.workers.memory`, ``numa_placement``: the
same first-touched source, each copying thread pinned to its node); pages per node come from
``/proc/<pid>/numa_maps``.  Each copy is judged against this run's copy ceiling
(``checked_point``) and by where its destination landed (``relabel``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from advisor.measure import CEILING_PEAK_KEY, checked_point, relabel, run_python
from advisor.models import Evidence, Point, Series
from advisor.probe import MeasureContext

from . import evidence
from .measure_common import WORKER, ceiling_notes, random_buffer_conditions, run_ceiling


def numa(ctx: MeasureContext, nbytes: int) -> Optional[Evidence]:
    """Stage 6: with >= 2 NUMA nodes, first touch on node 0, copies from node 0 and the last."""
    cpus = ctx.facts.memory.numa_node_cpus
    if len(cpus) < 2:
        return None
    from advisor.facts.util import parse_cpulist

    nodes = sorted(cpus, key=int)
    init = sorted(parse_cpulist(cpus[nodes[0]]))[:1]
    values: dict[str, Any] = {"init": f"one thread on cpu {init[0]} (node {nodes[0]})"}
    pts = []
    # one child for both copies (see worker.numa_placement: the same first-touched source,
    # each copying thread pinned to its node): one Python start and one source fill fewer
    runs = [sorted(parse_cpulist(cpus[node]))[:1] for node in (nodes[0], nodes[-1])]
    req = json.dumps({"task": "numa_placement", "nbytes": nbytes, "init_cpus": init,
                      "run_cpus": runs[0], "more_run_cpus": runs[1:], "seed": ctx.seed})
    out = run_python(WORKER, [req], timeout_s=max(5.0, min(60.0, ctx.remaining_s())))
    for k, v in out["pages"].items():
        values[f"pages.{k}"] = v
    # every copy judged against this run's copy ceiling (stage 1's, shared) and by where its
    # destination landed (the worker's placement notes: relabel below)
    ceil = run_ceiling(ctx, nbytes, evidence.EV_NUMA)
    values.update({"ceiling_bytes_per_s": ceil.stats.median, CEILING_PEAK_KEY: ceil.stats.max})
    notes: dict[str, Any] = {}
    places = out.get("placements") or []
    for i, (node, raw) in enumerate(zip((nodes[0], nodes[-1]), out["points"])):
        label = f"run-node{node}"
        p = checked_point(Point.model_validate(raw).model_copy(update={"label": label}),
                          ceil.stats)
        pts.append(p)
        for k, v in (places[i] if i < len(places) else {}).items():
            if k.startswith("placement_"):
                notes[f"{label}.{k}"] = v
        if p.stats is not None:
            values["local_bps" if node == nodes[0] else "remote_bps"] = p.stats.median
    try:
        aff = os.sched_getaffinity(0)
        values["pinned"] = len(aff) < (os.cpu_count() or len(aff)) or bool(
            os.environ.get("OMP_PROC_BIND") or os.environ.get("OMP_PLACES"))
    except OSError:
        pass
    return relabel(Evidence(
        id=evidence.EV_NUMA, description="first touch by one pinned thread, copies from a thread on "
                                  "the same and on another NUMA node; pages per node from numa_maps",
        series=[Series(name="copy", unit=evidence.BPS, points=pts)],
        conditions=random_buffer_conditions(ctx, {**notes, **ceiling_notes(ceil)}),
        values=values,
    ))

