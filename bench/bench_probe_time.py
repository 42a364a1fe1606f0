"""Wall time of ``advisor probe`` per plugin, full and ``--quick`` (prints to stdout; not a test).

    .venv/bin/python bench/bench_probe_time.py                      # every probe, 3 repeats
    .venv/bin/python bench/bench_probe_time.py --repeats 5 --plugin host-buffer
    .venv/bin/python bench/bench_probe_time.py --tree /tmp/base --tree .   # before / after
    .venv/bin/python bench/bench_probe_time.py --only-all                  # the whole probe

Each run is ``python -m advisor probe --plugin P [--quick] -o <tmp>`` in a fresh process (Python
start, imports and fact detection included: what a user waits for), then the whole probe (no
``--plugin``).  With several ``--tree`` source trees the runs are interleaved tree by tree
(A B A B ...) so drift from other load on the machine falls on every tree alike.  Prints the
median and the range (min-max) of the repeats and the load average at the start.  The speed
targets of issue 13 item 8 (full <= 30 s, quick <= 10 s on a 2-core machine; host-buffer
<= 9 s / 3 s, memory-pool-host <= 3 s / 1.5 s) are shown beside the figures, never asserted:
speed targets live in benchmarks, not tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: issue 13 item 8: per-probe targets in seconds (full, quick) on the 2-core reference machine
TARGETS_S = {"host-buffer": (9.0, 3.0), "memory-pool-host": (3.0, 1.5),
             "(all)": (30.0, 10.0)}
PROBES = ("host-buffer", "memory-pool-host", "mpich-cma")


def one_run(tree: Path, plugin: str | None, quick: bool) -> tuple[float, int]:
    """Seconds of one ``advisor probe`` in a fresh process on source ``tree``, and its exit code."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(tree / "plugins"),
                                         env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "advisor", "probe", "-o", str(Path(tmp) / "p.toml")]
        if plugin:
            cmd += ["--plugin", plugin]
        if quick:
            cmd.append("--quick")
        t0 = time.monotonic()
        rc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tmp).returncode
        return time.monotonic() - t0, rc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--plugin", action="append", help="probe(s) to time (default: every one)")
    ap.add_argument("--tree", action="append", type=Path,
                    help="source tree(s) to compare (default: this checkout)")
    ap.add_argument("--no-all", action="store_true", help="skip the whole-probe runs")
    ap.add_argument("--only-all", action="store_true", help="only the whole-probe runs")
    ap.add_argument("--mode", choices=("both", "full", "quick"), default="both")
    a = ap.parse_args()
    trees = [t.resolve() for t in (a.tree or [Path(__file__).resolve().parents[1]])]
    plugins: list[str | None] = ([] if a.only_all else list(a.plugin or PROBES)) + (
        [] if a.no_all else [None])
    modes = {"both": (False, True), "full": (False,), "quick": (True,)}[a.mode]
    print(f"cores {os.cpu_count()}, load average at start {os.getloadavg()[0]:.2f}, "
          f"{a.repeats} repeats, trees {[str(t) for t in trees]}")
    for plugin in plugins:
        name = plugin or "(all)"
        for quick in modes:
            times: dict[Path, list[float]] = {t: [] for t in trees}
            rcs: dict[Path, set[int]] = {t: set() for t in trees}
            for _ in range(a.repeats):
                for t in trees:
                    s, rc = one_run(t, plugin, quick)
                    times[t].append(s)
                    rcs[t].add(rc)
            target = TARGETS_S.get(name, (None, None))[1 if quick else 0]
            for t in trees:
                v = times[t]
                print(f"{name:17s} {'quick' if quick else 'full ':5s} median {statistics.median(v):6.2f} s"
                      f"  range {min(v):6.2f}-{max(v):6.2f} s  exit {sorted(rcs[t])}"
                      + (f"  target {target:g} s" if target else "")
                      + (f"  [{t}]" if len(trees) > 1 else ""), flush=True)


if __name__ == "__main__":
    main()
