"""Aggregate N per-node profiles with ``advisor.fleet.report.build_report``: seconds and peak memory.

Target (issue 15): 10,000 per-node profiles within 10 s and 2 GiB on 2 cores.

The node profiles are made from the recorded real one (profiles/x86_64-icelake-2core-vm.toml),
thinned as ``advisor probe --thin`` does (``advisor.fleet.thin``), and perturbed by the noise the
evidence itself records: per variant and probe, every sample is multiplied by one factor
drawn from a normal distribution whose standard deviation is that probe's median relative MAD of
its points' samples (median over points of MAD/median), so node-to-node spread equals the
within-run spread measured on the recording machine.  ``VARIANTS`` such variants are serialised
once and written as N files (hostname changed), so making the directory stays quick.

Usage: ``python bench/bench_fleet.py [--nodes N]``.  Prints seconds and peak resident memory
(the report process and its worker processes, ``getrusage``), and the node states.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins")]
VARIANTS = 16
SEED = 12345


def relative_mad(result) -> float:
    import numpy as np

    rel = []
    for e in result.evidence:
        for s in e.series:
            for p in s.points:
                if len(p.samples) >= 3:
                    a = np.asarray(p.samples, dtype=float)
                    med = float(np.median(a))
                    if med:
                        rel.append(float(np.median(np.abs(a - med))) / abs(med))
    return float(np.median(rel)) if rel else 0.0


def make_dir(directory: Path, n: int) -> dict[str, float]:
    import numpy as np

    from advisor.fleet.thin import thin_profile
    from advisor.profile import load_profile, profile_to_toml

    sys.path.insert(0, str(REPO / "tests"))
    from fleet_support import scaled

    full = load_profile(REPO / "profiles" / "x86_64-icelake-2core-vm.toml")
    noise = {r.probe: relative_mad(r) for r in full.results}  # from the full samples
    base, size = thin_profile(full)
    rng = np.random.default_rng(SEED)
    texts = []
    for _ in range(VARIANTS):
        prof = base
        for probe, sigma in noise.items():
            prof = scaled(prof, probe, float(1 + rng.normal(0, sigma)))
        texts.append(profile_to_toml(prof))
    marker = 'hostname = "vm"'
    for i in range(n):
        name = f"node{i + 1:05d}"
        text = texts[i % VARIANTS].replace(marker, f'hostname = "{name}"', 1)
        (directory / f"{name}.toml").write_text(text)
    return {"bytes_per_profile": size, **{f"noise.{k}": v for k, v in noise.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    args = ap.parse_args()
    from advisor.fleet.report import build_report
    from advisor.plugins import load

    probes = load().probes
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        d = Path(tmp)
        t0 = time.perf_counter()
        info = make_dir(d, args.nodes)
        made = time.perf_counter() - t0
        t0 = time.perf_counter()
        rep = build_report(d, probes=probes)
        secs = time.perf_counter() - t0
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB (Linux)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"profiles: {args.nodes}, {info['bytes_per_profile']} bytes each (thinned), "
          f"made in {made:.1f} s")
    print("noise (relative MAD of samples, per probe): " + ", ".join(
        f"{k[6:]} {v:.3%}" for k, v in info.items() if k.startswith("noise.")))
    print(f"build_report: {secs:.2f} s ({args.nodes / secs:.0f} profiles/s), peak RSS: report "
          f"process {own:.0f} MiB, largest worker {kids:.0f} MiB (target: 10 s, 2 GiB)")
    print(f"states: {rep.counts()}; classes: {len(rep.classes)}")


if __name__ == "__main__":
    main()
