"""Benchmark of the memory-pool plugin: probe wall time (default and --quick) and the measured
host figures (first touch and mlock of large-page-aligned chunks, MADV_HUGEPAGE vs base pages).

Usage: ``.venv/bin/python bench/bench_memory_pool.py [--record]``.  ``--record`` also writes the
quick run's facts and evidence to ``tests/data/memory_pool/host-<machine>.json`` (recorded real
data for the unit tests).  Targets (the brief): default probe 10-30 s, ``--quick`` a few seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from advisor.facts import detect
from advisor.plugins import collect, make_plugin_manager
from advisor.runner import run_probe
from advisor_memory_pool import plugin
from advisor_memory_pool import evidence

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "memory_pool"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", action="store_true", help="write the quick run as test data")
    ap.add_argument("--budget", type=float, default=30.0, help="probe budget, seconds")
    args = ap.parse_args()
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("memory-pool", plugin)]))
    facts = detect(reg.fact_detectors)
    print(f"machine: {facts.cpu.model_name}, THP {facts.memory.thp_enabled}, "
          f"large page {evidence.host_large_page(facts)[0]} B")
    for quick in (True, False):
        for name in ("memory-pool-host", "memory-pool-device"):
            t0 = time.monotonic()
            res = run_probe(name, reg.probes[name], "memory-pool", facts,
                            deadline=time.monotonic() + args.budget, quick=quick)
            wall = time.monotonic() - t0
            print(f"{name} quick={quick}: {res.status} in {wall:.2f} s"
                  + (f" ({res.reason})" if res.reason else ""))
            for e in res.evidence:
                if e.id != evidence.HOST_FIRST_TOUCH:
                    continue
                for s in e.series:
                    pts = {p.label: p for p in s.points}
                    h, b = pts["huge"].stats, pts["nohuge"].stats
                    print(f"  {s.name} of {int(pts['huge'].x)} B: base pages median {b.median:.4g} s "
                          f"(p5 {b.p5:.3g}, p95 {b.p95:.3g}), MADV_HUGEPAGE median {h.median:.4g} s "
                          f"(p5 {h.p5:.3g}, p95 {h.p95:.3g}); ratio {e.values[s.name + '_ratio']:.3g}x "
                          f"CI {e.values[s.name + '_ratio_ci_low']:.3g}-"
                          f"{e.values[s.name + '_ratio_ci_high']:.3g} ({e.values[s.name + '_verdict']})")
                print(f"  huge pages obtained: {e.values.get('huge_anon_huge_fraction')}, "
                      f"repeats {e.values['repeats']}")
            if args.record and quick and name == "memory-pool-host" and res.status == "ok":
                OUT.mkdir(parents=True, exist_ok=True)
                path = OUT / f"host-{platform.machine()}-{facts.fingerprint()}.json"
                path.write_text(json.dumps({
                    "facts": facts.model_dump(mode="json", exclude_none=True),
                    "evidence": [e.model_dump(mode="json", exclude_none=True) for e in res.evidence],
                }, indent=1) + "\n")
                print(f"  recorded {path}")


if __name__ == "__main__":
    main()
