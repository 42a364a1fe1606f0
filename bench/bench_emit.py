"""Wall time of rendering each emit format in-process, for a small and a large profile.

Prints, per format, the median and max seconds per render over N renders (after one warm-up
render), for a profile of 6 settings (what the built-in plugins write on one node) and one of
600 settings (a site profile merging many plugins).  No target is asserted here: the CLI
start-up target lives in bench_cli.py; rendering should stay far below it.

Run: ``.venv/bin/python bench/bench_emit.py``
"""

from __future__ import annotations

import statistics
import time

from advisor.emit import render
from advisor.models import (Facts, KernelFacts, MpiFacts, PluginResult, Profile, Provenance,
                            Recommendation, Setting)
from advisor.specs.selection import EmitOptions
from advisor.plugins import collect, make_plugin_manager

N = 200


def profile(n_settings: int) -> Profile:
    facts = Facts(hostname="bench", kernel=KernelFacts(glibc_version="2.36"),
                  mpi=MpiFacts(implementation="mpich", version="5.0.2"))
    settings = [
        Setting(library="mpich", name="MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", value=16384,
                type="bytes", default=8192, versions=">=4.3"),
        Setting(library="glibc", name="GLIBC_TUNABLES", value="glibc.malloc.hugetlb=1",
                type="list", separator=":", versions=">=2.35"),
    ]
    for i in range(n_settings - len(settings)):
        settings.append(Setting(library="bench", name=f"ADVISOR_BENCH_{i:04d}",
                                value=f"value {i} with 'quotes' and $(no) \\ subst"))
    rec = Recommendation(id="bench", title="bench", rationale="Benchmark setting.",
                         confidence="low", settings=settings)
    return Profile(provenance=Provenance(advisor_version="0.1.0", command="bench",
                                         created="2026-01-01T00:00:00Z"),
                   fingerprint=facts.fingerprint(), facts=facts,
                   results=[PluginResult(plugin="bench", probe="bench", status="ok",
                                         recommendations=[rec])])


def main() -> None:
    emitters = collect(make_plugin_manager(entry_points=False)).emitters
    opts = EmitOptions()
    print(f"{'format':<10} {'settings':>8} {'median s':>10} {'max s':>10} {'bytes':>8}"
          f"  ({N} renders each, in-process)")
    for n in (6, 600):
        prof = profile(n)
        for fmt in sorted(emitters):
            text = render(prof, fmt, emitters, opts)  # warm-up
            times = []
            for _ in range(N):
                t0 = time.perf_counter()
                render(prof, fmt, emitters, opts)
                times.append(time.perf_counter() - t0)
            print(f"{fmt:<10} {n:>8} {statistics.median(times):>10.6f} {max(times):>10.6f} "
                  f"{len(text.encode()):>8}")


if __name__ == "__main__":
    main()
