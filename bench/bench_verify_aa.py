"""Benchmark of ``advisor verify``'s error rates (design: "verify controls its false-alarm rate:
A/A runs must pass 19 times in 20"), on the real mpich-cma measurement.

Each run is one mpich-cma verify measurement (``advisor_mpich_cma.verify.measure_paired``, or
``measure_launches`` with ``--mode launches``: the code ``verify`` runs) of an A/A: the advised
threshold equals the baseline, the library default, at the sizes a 16 KiB advice is measured at
(the issue's case: 8 KiB, 11 KiB and 32 KiB, latency and bandwidth: 6 tests).  ``verify``
itself skips such advice ("equals the default: nothing to measure"), so the bench calls the
measurement directly.  Its verdict (``advisor_mpich_cma.verdict.decide``) must be
``no-effect``: anything else is a false alarm (target: at most 1 in 20).  The same measurement
is then judged again with a known loss planted in the advised side (``verdict.with_loss``:
latencies x1.1, bandwidths /1.1, a 10 % regression on top of real A/A noise): its verdict must
be ``regression`` (target: detection rate >= 0.8).

    .venv-test/bin/python bench/bench_verify_aa.py [--runs 20] [--quick] [--loss 0.10]
        [--mode paired|launches] [--save DIR] [--json]

Prints figures to stdout; nothing is asserted (targets live here, never in tests).  Needs
``mpiexec`` (the mpich wheel) and a usable CMA path.  ~25-50 s per run (5 launches of ~5 s
plus MPI starts; ``--quick``: 3 launches of 2 sizes, ~10-15 s) on the 2-core VM, depending on
the load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from advisor.facts.mpi import mpi_facts
from advisor.models import Facts
from advisor.probe import MeasureContext
from advisor_mpich_cma import knobs
from advisor_mpich_cma import verify
from advisor_mpich_cma.plugin import CmaProbe
from advisor_mpich_cma.verdict import decide, with_loss

#: The issue's advice: threshold 16 KiB against the 5.0 default (8 KiB): its sizes.
ADVISED_BYTES = 16384


def _floors(v) -> list[float]:
    ev = v.evidence[0].values
    return [float(x) for k, x in ev.items() if "_floor_" in k]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20, help="A/A verify measurements")
    ap.add_argument("--quick", action="store_true", help="verify --quick's launches and batches")
    ap.add_argument("--loss", type=float, default=0.10, help="planted loss (0.10 = 10 %%)")
    ap.add_argument("--mode", choices=("paired", "launches"), default="paired")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per run at most")
    ap.add_argument("--save", metavar="DIR", help="also write each run's evidence (JSON) here")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    probe, facts = CmaProbe(), Facts()
    app = probe.check(facts)
    if not app.usable:
        sys.stdout.write(f"{'usable':>24}: False ({app.reason})\n")
        return 0
    mpi = mpi_facts(facts)
    default = int(knobs.knob(knobs.CMA_THRESHOLD).default_for(mpi.version) or 8192)
    sizes = verify.sizes_between((True, ADVISED_BYTES), (True, default), quick=args.quick)
    repeats = verify.QUICK_REPEATS if args.quick else verify.REPEATS
    aa, planted, walls, floors = [], [], [], []
    t_all = time.monotonic()
    for i in range(args.runs):
        ctx = MeasureContext(facts=facts, deadline=time.monotonic() + args.budget,
                             quick=args.quick, applicability=app, seed=i)
        t0 = time.monotonic()
        if args.mode == "paired":
            env = verify.paired_env({}, mpi.flavour, default)
            ev, why = verify.measure_paired(ctx, sizes, (default, default), env, repeats)
            if ev is None:
                sys.stdout.write(f"{'paired':>24}: unavailable ({why})\n")
                return 0
        else:
            same = verify.config_env(mpi.flavour, verify.ON, default)
            ev = verify.measure_launches(ctx, sizes, dict(same), dict(same), repeats)
        walls.append(time.monotonic() - t0)
        if args.save:
            from pathlib import Path

            Path(args.save).mkdir(parents=True, exist_ok=True)
            (Path(args.save) / f"run{i:03d}.json").write_text(ev.model_dump_json())
        v0, v1 = decide(ev, "aa"), decide(with_loss(ev, args.loss), "aa-planted")
        aa.append(v0.verdict)
        planted.append(v1.verdict)
        floors += _floors(v0)
        sys.stderr.write(f"run {i + 1}/{args.runs}: A/A {v0.verdict} (x{v0.ratio:.3f} "
                         f"[{v0.ci_low:.3f}, {v0.ci_high:.3f}] floor {v0.noise_floor:.3f}); "
                         f"planted {v1.verdict} (x{v1.ratio:.3f} [{v1.ci_low:.3f}, "
                         f"{v1.ci_high:.3f}])\n")
    n = len(aa)
    false_alarms = sum(v != "no-effect" for v in aa)
    detected = sum(v == "regression" for v in planted)
    fig = {"mode": args.mode, "quick": args.quick, "runs": n, "launches_per_run": repeats,
           "sizes_bytes": ",".join(map(str, sizes)), "tests_per_run": 2 * len(sizes),
           "false_alarms": false_alarms,
           "false_alarm_rate": round(false_alarms / n, 3) if n else None,
           "false_alarm_target": "<= 0.05",
           "aa_verdicts": ",".join(f"{k}={aa.count(k)}" for k in sorted(set(aa))),
           "planted_loss": args.loss, "detected": detected,
           "detection_rate": round(detected / n, 3) if n else None,
           "detection_target": ">= 0.8",
           "planted_verdicts": ",".join(f"{k}={planted.count(k)}" for k in sorted(set(planted))),
           "aa_floor_median": round(statistics.median(floors), 4) if floors else None,
           "aa_floor_max": round(max(floors), 4) if floors else None,
           "run_s_median": round(statistics.median(walls), 1) if walls else None,
           "wall_s": round(time.monotonic() - t_all, 1)}
    if args.json:
        sys.stdout.write(json.dumps(fig, indent=1) + "\n")
    else:
        for k, v in fig.items():
            sys.stdout.write(f"{k:>24}: {v}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
