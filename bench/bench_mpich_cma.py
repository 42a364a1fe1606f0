"""Benchmark of the mpich-cma probe: wall time of check + measure, and its bandwidth at 1 MiB and
16 MiB (CMA on and off) beside the copy ceiling measured in the same run.

    .venv/bin/python bench/bench_mpich_cma.py [--quick] [--budget SECONDS] [--json]

Prints figures to stdout; nothing is asserted (speed targets live here, never in tests).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from advisor.models import Facts
from advisor.probe import MeasureContext
from advisor_mpich_cma import evidence
from advisor_mpich_cma import measure
from advisor_mpich_cma.plugin import CmaProbe

MiB = 1 << 20


def _bw(sweep, config: str, nbytes: int):
    vals = [x for s in sweep.series if s.name == f"{evidence.BW}:{config}" for p in s.points
            if p.x == nbytes for x in p.samples]
    return statistics.median(vals) if vals else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget", type=float, default=120.0, help="measure budget, seconds")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    probe, facts = CmaProbe(), Facts()
    t0 = time.monotonic()
    app = probe.check(facts)
    t_check = time.monotonic() - t0
    fig = {"check_s": round(t_check, 2), "usable": app.usable, "reason": app.reason}
    if app.usable:
        options = {} if not args.quick else {}
        sizes = None
        ctx = MeasureContext(facts=facts, deadline=time.monotonic() + args.budget,
                             quick=args.quick, options=options)
        if args.quick:  # make sure 1 MiB and 16 MiB are in the quick sweep too

            sizes = sorted(set(measure.QUICK_SIZES) | {MiB, 16 * MiB})
            ctx.options["sizes"] = ",".join(map(str, sizes))
        t1 = time.monotonic()
        ev = probe.measure(ctx)
        fig["measure_s"] = round(time.monotonic() - t1, 2)
        adv = probe.recommend(app.evidence + ev, facts)
        fig["wall_s"] = round(time.monotonic() - t0, 2)
        for sweep in (e for e in ev if e.id.startswith(evidence.SWEEP)):
            ceiling = sweep.values.get("copy_ceiling_bytes_per_s")
            row = {"copy_ceiling_GBps": round(float(ceiling) / 1e9, 2) if ceiling else None,
                   "rounds": sweep.values.get("rounds")}
            for n, name in ((MiB, "1MiB"), (16 * MiB, "16MiB")):
                for c in (evidence.ON, evidence.OFF):
                    bw = _bw(sweep, c, n)
                    row[f"bw_{name}_{c}_GBps"] = round(bw / 1e9, 2) if bw else None
            fig[sweep.id] = row
        fig["recommendations"] = [
            {"id": r.id, "confidence": r.confidence,
             "settings": {s.name: s.value for s in r.settings}} for r in adv.recommendations]
        fig["findings"] = [f.id for f in adv.findings]
    else:
        fig["wall_s"] = round(time.monotonic() - t0, 2)
    if args.json:
        sys.stdout.write(json.dumps(fig, indent=1) + "\n")
    else:
        for k, v in fig.items():
            sys.stdout.write(f"{k:>24}: {v}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
