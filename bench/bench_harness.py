"""Figures of the measurement harness on this machine (prints to stdout; not a test).

    .venv/bin/python bench/bench_harness.py [--quick]

- per-sample overhead of ``sample``: timer cost, and wall time of ``sample`` per steady-state
  sample beyond the calls themselves, for a no-op callable;
- host buffer fill rate (random pattern, first touch included) and PCG64's raw rate, the reason
  for the repeated-block fill in ``advisor.measure.buffers``;
- the copy ceiling (``copy_ceiling``) at 8 MiB and at the default size (2x the largest cache);
- the zero-page effect: copy bandwidth from an untouched vs a random-filled buffer.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from advisor.measure import (
    compare,
    conditions,
    copy_ceiling,
    host_buffer,
    sample,
    timer_overhead_ns,
)
from advisor.measure.ceiling import default_ceiling_bytes

MiB = 1024 * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller buffers, shorter runs")
    opt = ap.parse_args()
    cap = 0.2 if opt.quick else 1.0
    cond = conditions()
    print(f"machine: affinity={cond.affinity} loadavg_1m={cond.loadavg_1m:.2f} "
          f"thp={cond.thp_enabled} numpy={cond.library_versions.get('numpy')}")

    print(f"timer: perf_counter_ns pair costs {timer_overhead_ns()} ns (median of 101)")
    t0 = time.perf_counter()
    r = sample(lambda: None, min_samples=100, max_time_s=cap)
    wall = time.perf_counter() - t0
    n = len(r.samples) + len(r.warmup)
    per_sample = (wall - r.calls * r.stats().median) / max(n, 1)
    print(f"sample(no-op): batch={r.batch} samples={n} calls={r.calls} wall={wall:.3f} s; "
          f"per-call={r.stats().median * 1e9:.1f} ns; harness overhead per sample "
          f"(wall minus calls, incl. warm-up split) {per_sample * 1e6:.2f} us")

    size = 64 * MiB if not opt.quick else 16 * MiB
    t0 = time.perf_counter()
    host_buffer(size, fill="random")
    dt = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    t1 = time.perf_counter()
    rng.integers(1, 256, size=size // 8, dtype=np.uint8)
    dr = time.perf_counter() - t1
    print(f"host_buffer({size // MiB} MiB, random): {size / dt / 1e9:.2f} GB/s incl. first touch; "
          f"PCG64 uint8 alone {size / 8 / dr / 1e9:.2f} GB/s")

    for nbytes in (8 * MiB, None if not opt.quick else 32 * MiB):
        s = copy_ceiling(nbytes, max_time_s=cap)
        label = f"{(nbytes or default_ceiling_bytes()) // MiB} MiB"
        print(f"copy ceiling ({label}): median {s.median / 1e9:.2f} GB/s "
              f"[{s.ci_low / 1e9:.2f}, {s.ci_high / 1e9:.2f}] p5 {s.p5 / 1e9:.2f} "
              f"p95 {s.p95 / 1e9:.2f} max {s.max / 1e9:.2f} (n={s.n})")

    n = 32 * MiB
    dst = host_buffer(n, seed=1)
    touched, untouched = host_buffer(n, seed=2), host_buffer(n, fill="untouched")
    a = sample(lambda: np.copyto(dst, touched), min_samples=20, max_time_s=cap)
    b = sample(lambda: np.copyto(dst, untouched), min_samples=20, max_time_s=cap)
    pa, pb = a.to_point(per_call_bytes=n), b.to_point(per_call_bytes=n)
    c = compare(pa.samples, pb.samples, higher_is_better=True)
    print(f"zero page: copy from untouched {pb.stats.median / 1e9:.2f} GB/s vs random-filled "
          f"{pa.stats.median / 1e9:.2f} GB/s: ratio {c.ratio:.2f} "
          f"[{c.ci_low:.2f}, {c.ci_high:.2f}] -> untouched is {c.verdict}")


if __name__ == "__main__":
    main()
