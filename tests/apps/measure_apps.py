"""Print the figures tests/apps/README.md quotes: HPCC's run time and the run-to-run spread of
its summary metrics, and whether turning CMA off (``MPIR_CVAR_CH4_CMA_ENABLE=0``) slows the
halo exchange and HPCC's ping-pong, from interleaved launches (A, B, A, B, ...).

    PATH=.venv-test/bin:$PATH PYTHONPATH=tests python tests/apps/measure_apps.py [--runs 8]

Not a test: it takes a few minutes and its numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from apps.hpcc import METRICS, hpcc_binary, mpi_bin, run_hpcc

HALO = Path(__file__).with_name("halo.py")
CMA_OFF = {"MPIR_CVAR_CH4_CMA_ENABLE": "0"}


def median_ratio_ci(a, b, rounds=2000, seed=7):
    """Median(b)/median(a) with a 95 % bootstrap interval (resampling each side)."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(a, float), np.asarray(b, float)
    boot = [np.median(rng.choice(b, b.size)) / np.median(rng.choice(a, a.size))
            for _ in range(rounds)]
    return float(np.median(b) / np.median(a)), *np.percentile(boot, [2.5, 97.5])


def describe(name, xs, unit=""):
    med = statistics.median(xs)
    cv = statistics.stdev(xs) / statistics.mean(xs) if len(xs) > 1 else 0.0
    return (f"{name:40s} n={len(xs)} median={med:.4g}{unit} min={min(xs):.4g} "
            f"max={max(xs):.4g} (max-min)/median={(max(xs) - min(xs)) / med:.1%} cv={cv:.1%}")


def halo_once(env, nbytes, buffers):
    cmd = [str(mpi_bin() / "mpiexec"), "-n", "2", sys.executable, str(HALO),
           "--bytes", str(nbytes), "--buffers", buffers]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})
    m = re.search(r"time_s=([0-9.]+)", done.stdout)
    if done.returncode or not m:
        raise RuntimeError(done.stdout + done.stderr)
    return float(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=8)
    args = ap.parse_args()
    exe = hpcc_binary()
    print(f"load average at start: {os.getloadavg()}, cores: {os.cpu_count()}")
    work = Path(tempfile.mkdtemp(prefix="hpcc-measure-"))

    print("== HPCC n=1000 on 2 ranks: wall time and summary spread (default env)")
    walls, metrics = [], {k: [] for k in METRICS}
    off_metrics = {k: [] for k in METRICS}
    for i in range(args.runs):
        for env, sink in (({}, metrics), (CMA_OFF, off_metrics)):
            t = time.perf_counter()
            s = run_hpcc(exe, work / f"r{i}", env=env)
            if not env:
                walls.append(time.perf_counter() - t)
            for k in METRICS:
                sink[k].append(float(s[k]))
    print(describe("wall time of one run", walls, " s"))
    for k in METRICS:
        print(describe(k, metrics[k]))
    print("== HPCC, CMA off / default (interleaved)")
    for k in ("AvgPingPongBandwidth_GBytes", "MinPingPongBandwidth_GBytes",
              "NaturallyOrderedRingBandwidth_GBytes"):
        r, lo, hi = median_ratio_ci(metrics[k], off_metrics[k])
        print(f"{k:40s} default median={statistics.median(metrics[k]):.3f} "
              f"off median={statistics.median(off_metrics[k]):.3f} off/default={r:.3f} "
              f"[{lo:.3f}, {hi:.3f}]")

    print("== halo.py on 2 ranks, time_s, CMA off / default (interleaved)")
    for buffers in ("per-message", "reused"):
        for mib in (1, 2, 4):
            on, off = [], []
            for _ in range(args.runs):
                on.append(halo_once({}, mib << 20, buffers))
                off.append(halo_once(CMA_OFF, mib << 20, buffers))
            r, lo, hi = median_ratio_ci(on, off)
            print(f"{buffers:11s} {mib} MiB: default median={statistics.median(on):.4f} s "
                  f"[{min(on):.4f}-{max(on):.4f}]  off median={statistics.median(off):.4f} s "
                  f"[{min(off):.4f}-{max(off):.4f}]  off/default={r:.3f} [{lo:.3f}, {hi:.3f}]")
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
