"""Figures of the host-buffer probe on this machine (prints to stdout; not a test).

    .venv/bin/python bench/bench_host_buffer.py            # default probe, then --quick
    .venv/bin/python bench/bench_host_buffer.py --quick    # only the quick probe
    .venv/bin/python bench/bench_host_buffer.py --record tests/data/host_buffer
        # also write the evidence as JSON (recorded real data for the unit tests)

Prints: wall time of check + measure (budget targets: 30-60 s default, 10-15 s quick on a
2-core machine), the zero-page inflation (memcpy, OpenCL) with CIs, first-touch cost per GiB,
the memcpy sweep (default vs tuned) and the advice derived from it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from advisor.facts import detect
from advisor.probe import MeasureContext
from advisor_host_buffer.plugin import HostBufferProbe

BUDGET_S = {"default": 60.0, "quick": 15.0}


def run(quick: bool, record: Path | None) -> None:
    facts = detect()
    probe = HostBufferProbe()
    t0 = time.monotonic()
    app = probe.check(facts)
    mode = "quick" if quick else "default"
    ctx = MeasureContext(facts=facts, deadline=time.monotonic() + BUDGET_S[mode], quick=quick,
                         applicability=app)
    evidence = list(app.evidence) + probe.measure(ctx)
    wall = time.monotonic() - t0
    advice = probe.recommend(evidence, facts)
    print(f"== host-buffer probe, {mode}: {wall:.1f} s (budget {BUDGET_S[mode]:.0f} s), "
          f"load average {os.getloadavg()[0]:.2f}")
    for ev in evidence:
        for k, v in sorted(ev.values.items()):
            if any(t in k for t in ("inflation", "speedup", "fault_s_per_gib", "nt_threshold",
                                    "cliff", ".value", "skipped")) or (
                    k.startswith("gain.") and k.count(".") == 1):
                bw = k.endswith(".value") and ev.values.get(k[:-6] + ".unit") == "bytes/s"
                shown = f"{v / 1e9:.2f} GB/s" if bw else v
                print(f"  {ev.id:22s} {k:45s} {shown}")
    for f in advice.findings:
        print(f"  finding {f.id} ({f.severity}): {f.message}")
    for r in advice.recommendations:
        print(f"  advice  {r.id}: {[f'{s.name}={s.value}' for s in r.settings]}")
    if record is not None:
        record.mkdir(parents=True, exist_ok=True)
        path = record / f"probe-{mode}.json"
        path.write_text(json.dumps({"facts": facts.model_dump(mode="json"),
                                    "evidence": [e.model_dump(mode="json") for e in evidence]},
                                   indent=1) + "\n")
        print(f"  recorded {path}", file=sys.stderr)


def record_sweep(folder: Path) -> None:
    """Only the memcpy sweep (default sizes), written as ``sweep-{cliff,no-cliff}-<host>.json``."""
    from advisor_host_buffer.measure_common import Budget
    from advisor_host_buffer.measure_sweep import memcpy_sweep
    from advisor_host_buffer.tunables import tunables_evidence

    facts = detect(opencl=False)
    tun = tunables_evidence()
    ctx = MeasureContext(facts=facts, deadline=time.monotonic() + 120, quick=False)
    t0 = time.monotonic()
    ev = memcpy_sweep(ctx, tun, Budget(ctx))
    print(f"== memcpy sweep: {time.monotonic() - t0:.1f} s, load {os.getloadavg()[0]:.2f}, "
          f"GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')!r}")
    for s in ev.series:
        print(f"  {s.name:8s} " + " ".join(
            f"{int(p.x) >> 20}M:{p.stats.median / 1e9:.1f}" for p in s.points))
    recs = [r.id for r in HostBufferProbe().recommend([tun, ev], facts).recommendations]
    print(f"  advice: {recs}")
    name = "sweep-cliff-kvm.json" if "cliff.start_bytes" in ev.values else "sweep-no-cliff-kvm.json"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps({
        "facts": facts.model_dump(mode="json"),
        "evidence": [tun.model_dump(mode="json"), ev.model_dump(mode="json")]}, indent=1) + "\n")
    print(f"  recorded {folder / name}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the quick probe")
    ap.add_argument("--record", type=Path, help="write evidence JSON into this folder")
    ap.add_argument("--record-sweep", type=Path, help="only record the memcpy sweep there")
    a = ap.parse_args()
    if a.record_sweep:
        record_sweep(a.record_sweep)
        return
    if not a.quick:
        run(False, a.record)
    run(True, a.record)


if __name__ == "__main__":
    main()
