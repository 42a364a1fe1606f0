"""host-buffer's part of ``advisor verify``: ``HostBufferProbe.verify(recommendation, ctx)``.

Each verifiable recommendation is re-measured with the stage that produced it, advised vs
baseline, in fresh processes where the setting is read at process start (glibc reads
``GLIBC_TUNABLES`` once, in the dynamic loader):

* ``glibc-malloc-hugetlb``: the worker's ``malloc_touch`` task (glibc malloc + first touch + free
  of ``DEFAULT_NBYTES``), seconds, lower is better;
* ``glibc-non-temporal-threshold``: the worker's memcpy ``sweep`` at the sizes where the two
  thresholds differ (from the lower to the upper one) and one size above both, bytes/s;
* ``host-pool-hugepages`` (settings applied in code, not env): the ``first-touch`` stage
  (MADV_NOHUGEPAGE vs MADV_HUGEPAGE first use) in this process.

Baseline: ``GLIBC_TUNABLES`` without the advised items (the library default), or with
``ctx.against == "env"`` the current value.  With ``ctx.joint`` (``advisor verify``'s joint
verification) the advised side is the whole emitted environment (every plugin's ``GLIBC_TUNABLES``
items merged, MPICH's CVARs too) and the baseline has all of it removed; the measurement is the
same.  ``host-pool-hugepages`` has only config settings and is measured in this process, where no
environment can be applied: ``advisor verify`` does not ask for it jointly.

Runs alternate A B A B through ``advisor.measure.interleave``.  Each size is one test
(``advisor.measure.family.launch_contrast``): the launch is the unit, each round's ratio of the
two launches' medians a pair, so the CI resamples launches and holds the machine's state
changes between them (memcpy bandwidth on the project's VM switches between a fast and a slow
state from launch to launch: background.md section 4); the floor is the A/A spread of each
configuration's launch medians.  The tests of a recommendation form one family, each CI at the
Bonferroni level (``family.family_verdict``): ``regression`` when a size is worse beyond its
floor, ``confirmed`` when one is better and none worse, else ``no-effect``; ratio > 1 means the
advice is better.
"""

from __future__ import annotations

import json
import os
from typing import Optional

from advisor.libraries.glibc_tunables import list_tunables
from advisor.models import Evidence, Recommendation, Verification
from advisor.baseline import Baseline
from advisor.probe import MeasureContext

from .measure_common import DEFAULT_NBYTES, MEMORY_FRACTION, QUICK_NBYTES, WORKER
from .measure_sweep import sweep_run
from .measure_touch import first_touch

ADVISED, BASELINE = "advised", "baseline"
#: Launches per configuration (>= 2 for an A/A noise floor).
REPEATS, QUICK_REPEATS = 3, 2


def _items(value: str) -> dict[str, str]:
    return dict(p.split("=", 1) for p in value.split(":") if "=" in p)


def _envs(rec: Recommendation, ctx: MeasureContext) -> tuple[dict, dict, dict[str, str]]:
    """(advised overlay, baseline overlay, advised tunable items)."""
    items: dict[str, str] = {}
    for s in rec.settings:
        if s.kind == "env" and s.name == "GLIBC_TUNABLES":
            items.update(_items(str(s.value)))
    if ctx.joint is not None:  # the whole emitted environment, as advisor verify built it
        return dict(ctx.joint.advised), dict(ctx.joint.baseline), items
    now = os.environ.get("GLIBC_TUNABLES")
    kept = {k: v for k, v in _items(now or "").items() if k not in items}
    if ctx.against is Baseline.ENV:
        base = {"GLIBC_TUNABLES": now}
    else:
        base = {"GLIBC_TUNABLES": ":".join(f"{k}={v}" for k, v in kept.items()) or None}
    adv_items = {**kept, **items} if ctx.against is not Baseline.ENV else {
        **_items(now or ""), **items}
    return {"GLIBC_TUNABLES": ":".join(f"{k}={v}" for k, v in adv_items.items())}, base, items


def _result(rec: Recommendation, tests: list, ev: Evidence) -> Verification:
    """The family verdict (``advisor.measure.family.family_verdict``) of ``tests``
    (``[(nbytes, Contrast, round ratios)]``), every test's figures in the evidence values
    (``<n>.ratio``, ``<n>.ratio_ci_low``, ``<n>.ratio_ci_high``, ``<n>.noise_floor``,
    ``<n>.verdict``, ``<n>.round_ratios``) with ``decided_by``."""
    from advisor.measure.family import family_level, family_verdict

    values = dict(ev.values)
    for n, t, own in tests:
        values.update({f"{n}.ratio": t.ratio, f"{n}.ratio_ci_low": t.ci_low,
                       f"{n}.ratio_ci_high": t.ci_high, f"{n}.noise_floor": t.noise_floor,
                       f"{n}.verdict": t.decision,
                       f"{n}.round_ratios": ",".join(f"{x:.4g}" for x in own)})
    level = family_level(max(1, len(tests)))
    verdict, t, reason = family_verdict([t for _, t, _ in tests], level)
    values.update({"family_tests": len(tests), "family_level": level})
    if t is None:
        return Verification(recommendation=rec.id, verdict="not-measurable", reason=reason,
                            evidence=[ev.model_copy(update={"values": values})])
    values["decided_by"] = t.label
    return Verification(recommendation=rec.id, verdict=verdict, ratio=t.ratio,
                        ci_low=t.ci_low, ci_high=t.ci_high, noise_floor=t.noise_floor,
                        reason=reason, evidence=[ev.model_copy(update={"values": values})])


def _malloc(rec, ctx, advised, base) -> Verification:
    from advisor.measure import interleave, run_python
    from advisor.measure.family import family_level, launch_contrast

    repeats = QUICK_REPEATS if ctx.quick else REPEATS
    req = json.dumps({"task": "malloc_touch", "nbytes": DEFAULT_NBYTES, "repeats": 5})
    envs = {ADVISED: advised, BASELINE: base}

    def run_one(cfg: str, rnd: int) -> list[float]:
        out = run_python(WORKER, [req], env=envs[cfg],
                         timeout_s=max(5.0, min(60.0, ctx.remaining_s())))
        return out["samples"][1:]  # the first round also pays the process's first mmaps

    res = interleave((BASELINE, ADVISED), run_one, repeats=repeats, deadline=ctx.deadline,
                     max_extra_rounds=0, progress=ctx.progress)
    test = launch_contrast(f"malloc + first touch of {DEFAULT_NBYTES} bytes",
                           res.runs[BASELINE], res.runs[ADVISED], higher_is_better=False,
                           level=family_level(1), seed=ctx.seed)
    ev = Evidence(id="host-buffer-verify", description="glibc malloc + first touch + free, "
                  "advised GLIBC_TUNABLES vs baseline, interleaved fresh processes",
                  values={"nbytes": DEFAULT_NBYTES, "rounds": res.rounds,
                          "advised_env": advised.get("GLIBC_TUNABLES") or "",
                          "baseline_env": base.get("GLIBC_TUNABLES") or ""})
    return _result(rec, [(DEFAULT_NBYTES, *test)], ev)


def _threshold_sizes(adv: Optional[int], base: Optional[int]) -> list[int]:
    known = sorted(x for x in (adv, base) if x)
    if not known:
        return []
    lo, hi = known[0], known[-1]
    sizes = {lo, 2 * hi}
    if hi > lo:
        sizes.add(int((lo * hi) ** 0.5) // 4096 * 4096 or lo)
    return sorted(s for s in sizes if s > 0)


def _nt(rec, ctx, advised, base, items) -> Verification:
    from advisor.measure import interleave
    from advisor.measure.family import family_level, launch_contrast

    item = next(k for k in items if k.endswith("x86_non_temporal_threshold"))
    adv = int(items[item], 0)
    tun = list_tunables().get("glibc.cpu.x86_non_temporal_threshold")
    cur = tun.value if tun is not None else None
    sizes = _threshold_sizes(adv, int(cur) if isinstance(cur, int) else None)
    total = ctx.facts.memory.total_bytes
    if total:  # two buffers of the largest size stay below the sweep's memory fraction
        sizes = [n for n in sizes if 2 * n <= total // MEMORY_FRACTION]
    envs = {ADVISED: advised, BASELINE: base}
    runs: dict[str, list] = {ADVISED: [], BASELINE: []}

    def run_one(cfg: str, rnd: int) -> list[float]:
        pts = sweep_run(sizes, envs[cfg], True, ctx.seed + rnd,
                        max(5.0, min(120.0, ctx.remaining_s())))
        runs[cfg].append(pts)
        return list(pts[0].samples)

    res = interleave((BASELINE, ADVISED), run_one, repeats=QUICK_REPEATS if ctx.quick else REPEATS,
                     deadline=ctx.deadline, max_extra_rounds=0, progress=ctx.progress)
    tests = []
    level = family_level(max(1, len(sizes)))
    def at(run, n: int) -> list[float]:
        return next((list(p.samples) for p in run if int(p.x) == n), [])

    for n in sizes:  # one launch of each configuration per round: the rounds pair them
        pairs = [(at(rb, n), at(ra, n)) for rb, ra in zip(runs[BASELINE], runs[ADVISED])]
        pairs = [(b, a) for b, a in pairs if b and a]
        if pairs:
            tests.append((n, *launch_contrast(f"memcpy at {n} bytes", [b for b, _ in pairs],
                                              [a for _, a in pairs], higher_is_better=True,
                                              level=level, seed=ctx.seed)))
    ev = Evidence(id="host-buffer-verify", description="memcpy bandwidth at the sizes where the "
                  "advised and current non-temporal thresholds differ, interleaved fresh processes",
                  values={"rounds": res.rounds, "advised_bytes": adv,
                          "current_bytes": int(cur) if isinstance(cur, int) else -1})
    return _result(rec, tests, ev)


def halves_floor(samples: list[float]) -> Optional[float]:
    """A/A noise floor of one configuration measured in one process: ``noise_floor_from_aa``
    of the first and second half of its time-ordered samples; None for fewer than 4."""
    from advisor.measure import noise_floor_from_aa

    if len(samples) < 4:
        return None
    h = len(samples) // 2
    return noise_floor_from_aa([samples[:h], samples[h:]])


def _first_touch(rec, ctx) -> Verification:
    """Huge vs base pages for a fresh buffer's first touch, in this process (the advice is a
    pool's madvise, which no environment variable sets); the floor is the larger of the two
    configurations' halves floors."""
    ev = first_touch(ctx, QUICK_NBYTES if ctx.quick else DEFAULT_NBYTES)
    v = ev.values
    lo, hi, r = v["huge_speedup.ci_low"], v["huge_speedup.ci_high"], v["huge_speedup"]
    pts = {p.label: p for p in ev.series[0].points}
    floors = [f for f in (halves_floor(list(pts[k].samples)) for k in ("base", "huge") if k in pts)
              if f is not None]
    floor = max(floors) if floors else None
    f = floor or 0.0
    verdict = ("confirmed" if lo > 1 + f else "regression" if hi < 1 / (1 + f) else "no-effect")
    return Verification(recommendation=rec.id, verdict=verdict, ratio=r, ci_low=lo, ci_high=hi,
                        noise_floor=floor, evidence=[ev],
                        reason=None if floor is not None else
                        "too few samples for an A/A noise floor: judged on the CI alone")


def verify(rec: Recommendation, ctx: MeasureContext) -> Verification:
    """Re-measure ``rec``; ``not-measurable`` for a recommendation this plugin cannot repeat."""
    if rec.id == "host-pool-hugepages":
        if ctx.joint is not None:
            return Verification(recommendation=rec.id, verdict="not-measurable", reason=(
                "measured in the advisor's own process, where an environment cannot be applied"))
        return _first_touch(rec, ctx)
    advised, base, items = _envs(rec, ctx)
    if "glibc.malloc.hugetlb" in items:
        return _malloc(rec, ctx, advised, base)
    if any(k.endswith("x86_non_temporal_threshold") for k in items):
        return _nt(rec, ctx, advised, base, items)
    return Verification(recommendation=rec.id, verdict="not-measurable")
