"""Stages 2 and 5 of the host-buffer probe: what first touch of fresh memory costs, with and
without huge pages.

2. ``first-touch`` (:func:`first_touch`): allocate + first touch + free of a buffer with
   MADV_NOHUGEPAGE vs MADV_HUGEPAGE, in this process (numpy slice writes into ``host_buffer``
   arrays); page-fault cost per GiB (first use minus a plain rewrite) and the speed-up.
5. ``malloc-hugetlb`` (:func:`malloc_hugetlb`): first touch of malloc'ed memory with and without
   ``glibc.malloc.hugetlb=1`` (THP madvise mode and glibc >= 2.35 only), in fresh processes
   (glibc reads ``GLIBC_TUNABLES`` once, at start-up) through
   :mod:`advisor_host_buffer.workers.memory`, since glibc ``malloc`` + ``memset`` go through ctypes.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from advisor.measure import (REL_PRECISION, compare, conditions, host_buffer, noise_floor_from_aa,
                             run_python, sample, summarize)
from advisor.models import Evidence, Point, Series
from advisor.probe import MeasureContext

from . import evidence
from .measure_common import (GiB, QUICK_NBYTES, WORKER, Budget, pmd_bytes,
                             thp_in_effect)
from .tunables import merged_tunables


def first_touch(ctx: MeasureContext, nbytes: int) -> Evidence:
    """Stage 2: first use (mmap + madvise + first write of every page + free) per page policy."""
    pmd = pmd_bytes(ctx.facts)
    quick = ctx.quick
    # the time caps of this probe's ``sampler`` (0.6 s full, 0.15 s quick; a 1 s cap here took
    # 0.95 s for the huge-page first use alone, x2.65 faster than base pages, CI 2.63-2.70)
    kw = dict(min_samples=4 if quick else 6, max_time_s=0.15 if quick else 0.6,
              deadline=ctx.deadline, rel_precision=REL_PRECISION)
    res = {}
    for label, huge in (("base", False), ("huge", True)):
        res[label] = sample(lambda: host_buffer(nbytes, fill="zeros", hugepages=huge, align=pmd), **kw)
    resident = host_buffer(nbytes, fill="zeros", align=pmd)
    rewrite = sample(lambda: resident.fill(0), **kw)
    gib = nbytes / GiB
    w = summarize(rewrite.samples).median
    values: dict[str, Any] = {"nbytes": nbytes, "huge_page_bytes": pmd, "rewrite_s": w}
    for label in ("base", "huge"):
        m = summarize(res[label].samples).median
        values[f"first_use_s.{label}"] = m
        values[f"fault_s_per_gib.{label}"] = max(m - w, 0.0) / gib
    c = compare(res["base"].samples, res["huge"].samples, higher_is_better=False, seed=ctx.seed)
    values["huge_speedup"] = c.ratio
    values["huge_speedup.ci_low"] = c.ci_low
    values["huge_speedup.ci_high"] = c.ci_high
    series = Series(name="first-use", unit="s", x_name="nbytes", x_unit="bytes", points=[
        res[label].to_point(x=float(nbytes), label=label, seed=ctx.seed) for label in ("base", "huge")
    ] + [rewrite.to_point(x=float(nbytes), label="rewrite", seed=ctx.seed)])
    return Evidence(
        id=evidence.EV_FIRST_TOUCH,
        description="first use of a fresh buffer (mmap, madvise, write every page, munmap) with "
                    "MADV_NOHUGEPAGE (base) vs MADV_HUGEPAGE (huge); rewrite = the same write "
                    "on resident pages; fault cost = first use - rewrite",
        series=[series],
        conditions=conditions(thp_enabled=thp_in_effect(ctx.facts), buffer_kind="pageable",
                              buffer_fill="zeros", align_bytes=pmd),
        values=values,
    )


#: A/B rounds of stage 5 in a full probe, each a hugetlb process and the default one before
#: it, the last default closing them (D H D H D): at least ``MIN_HUGETLB_ROUNDS``, so that the
#: verdict's stability over resampled rounds can be measured (issue 25 item 1), then one more
#: while it is below ``STABLE_SHARE``, up to ``MAX_HUGETLB_ROUNDS`` (a cost cap: a round is two
#: fresh processes, about 1 s on the 2-core VM).  With one round, one hugetlb process whose
#: first touch took 0.20 s once in five (0.012 s the other four) left the speed-up's CI at
#: 0.46-8.38 and no advice in one whole probe of ten there (bench_advice_stability.py --plugin
#: all).  ``--quick`` keeps one round (D H D) and resamples nothing.
MIN_HUGETLB_ROUNDS, MAX_HUGETLB_ROUNDS = 2, 4


def hugetlb_verdict(runs: dict[str, list[list[float]]], *, seed: int = 0):
    """The comparison of stage 5's processes so far and its stability (pure):
    ``(Comparison, noise floor, stability or None)``.

    ``runs``: ``default`` and ``hugetlb`` -> per process, its first-touch seconds (warm-up
    dropped), in the order run, the defaults one ahead of the hugetlb processes (D H D ...).
    The comparison pools every process's samples against the A/A floor of the default
    processes (``noise_floor_from_aa``; 0 with one); the stability is
    ``advisor.measure.resample_stability`` of ``Comparison.verdict_at`` over the rounds (round
    ``i``: the ``i``-th default and hugetlb processes' medians), None below 2 rounds.

    :raises ValueError: a configuration without processes (``compare``)."""
    import numpy as np

    from advisor.measure import resample_stability

    a = [s for r in runs["default"] for s in r]
    b = [s for r in runs["hugetlb"] for s in r]
    nf = noise_floor_from_aa(runs["default"]) if len(runs["default"]) >= 2 else 0.0
    c = compare(a, b, higher_is_better=False, noise_floor=nf, seed=seed)
    n = min(len(runs["default"]), len(runs["hugetlb"]))
    base = [float(np.median(r)) for r in runs["default"][:n]]
    huge = [float(np.median(r)) for r in runs["hugetlb"][:n]]
    stability = resample_stability(
        lambda idx: c.verdict_at(float(np.median([base[i] for i in idx]))
                                 / float(np.median([huge[i] for i in idx]))), n, seed=seed)
    return c, nf, stability


def malloc_hugetlb(ctx: MeasureContext, budget: Budget) -> Optional[Evidence]:
    """Stage 5: glibc malloc first touch, default vs glibc.malloc.hugetlb=1 (A B A, then more
    A/B rounds in a full probe: ``MIN_HUGETLB_ROUNDS``).

    The block is ``QUICK_NBYTES`` in both modes: four times glibc's largest dynamic mmap
    threshold (32 MiB, ``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit, mallopt(3)), so malloc takes
    the mmap path the tunable changes.  Fresh processes (default, hugetlb, default, ...: the
    defaults give the A/A floor) in both modes.  The effect is far beyond what a smaller
    sample resolves: with 256 MiB blocks and four processes the speed-up was x2.76 (95 % CI
    2.73-2.84) against an A/A floor of 0.022 on the 2-core VM, the stage taking 2.9 s of a
    13.6 s host-buffer probe."""
    from advisor.measure import STABLE_SHARE

    nbytes = QUICK_NBYTES
    repeats = 4 if ctx.quick else 6
    env_b = {"GLIBC_TUNABLES": merged_tunables(os.environ.get("GLIBC_TUNABLES"),
                                               "glibc.malloc.hugetlb", "1")}
    req = json.dumps({"task": "malloc_touch", "nbytes": nbytes, "repeats": repeats})
    runs: dict[str, list[list[float]]] = {"default": [], "hugetlb": []}

    def run(cfg: str) -> bool:
        """One fresh process of ``cfg``; False when the budget has no room for it."""
        if not budget.ok(f"malloc-hugetlb {cfg} run {len(runs[cfg]) + 1}", 3.0):
            return False
        out = run_python(WORKER, [req], env=env_b if cfg == "hugetlb" else None,
                         timeout_s=max(5.0, min(60.0, ctx.remaining_s())))
        # the first round of a fresh process also pays for the process's first mmaps: warm-up
        runs[cfg].append(out["samples"][1:])
        return True

    ran = run("default") and run("hugetlb") and run("default")
    if not runs["default"] or not runs["hugetlb"]:
        return None
    c, nf, stability = hugetlb_verdict(runs, seed=ctx.seed)
    stopped = "quick" if ctx.quick else "budget" if not ran else ""
    while not stopped:
        rounds = len(runs["hugetlb"])
        if rounds >= MIN_HUGETLB_ROUNDS and stability is not None and stability >= STABLE_SHARE:
            stopped = "stable"
        elif rounds >= MAX_HUGETLB_ROUNDS:
            stopped = "round cap"
        else:
            if not (run("hugetlb") and run("default")):
                stopped = "budget"  # a hugetlb process may have run alone: it counts
            c, nf, stability = hugetlb_verdict(runs, seed=ctx.seed)
    a = [s for r in runs["default"] for s in r]
    b = [s for r in runs["hugetlb"] for s in r]
    return Evidence(
        id=evidence.EV_MALLOC_HUGETLB,
        description="glibc malloc + memset(1) + free of one large block in fresh processes, "
                    "current GLIBC_TUNABLES vs glibc.malloc.hugetlb=1 added",
        series=[Series(name=cfg, unit="s", x_name="nbytes", x_unit="bytes",
                       points=[Point(x=float(nbytes), label=cfg, samples=s,
                                     stats=summarize(s, seed=ctx.seed))])
                for cfg, s in (("default", a), ("hugetlb", b))],
        conditions=conditions(thp_enabled=thp_in_effect(ctx.facts), env=env_b,
                              notes={"compared_against": "inherited environment"}),
        values={"nbytes": nbytes, "speedup": c.ratio, "speedup.ci_low": c.ci_low,
                "speedup.ci_high": c.ci_high, "noise_floor_aa": nf, "verdict": c.verdict,
                "rounds": len(runs["hugetlb"]), "stopped": stopped,
                **({"stability": stability} if stability is not None else {})},
    )

