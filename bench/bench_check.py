"""Wall time of ``advisor check`` (issue 29 part 4: target <= 5 s on the 2-core VM).

Runs ``advisor check --profile CLASS`` N times (default: the recorded class profile
tests/data/fleet/class-x86_64_v4-2c-24g.toml, a fleet run of this VM; another machine's facts
differ from it, which changes the verdict but not the time) and prints the median, min and max
wall seconds, the median of the ``took_s`` the check reports itself (measurement and
comparison, without Python's start), the measured headline's median, and the load average,
which on a shared machine moves these figures most.  Also ``--facts-only``.

    python bench/bench_check.py [CLASS.toml] [N]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLASS = REPO / "tests" / "data" / "fleet" / "class-x86_64_v4-2c-24g.toml"
N = 10


def run(cls: Path, n: int, *extra: str) -> None:
    walls, took, values = [], [], []
    for _ in range(n):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "advisor", "check", "--profile", str(cls),
                            "--json", *extra], capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        if r.returncode not in (0, 1):
            sys.exit(f"advisor check failed ({r.returncode}): {r.stderr.strip()}")
        j = json.loads(r.stdout)
        took.append(j["took_s"])
        values += [f["value"] for f in j["figures"]]
    name = " ".join(["advisor check", *extra])
    print(f"{name}: median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max "
          f"{max(walls):.2f}) wall over {n} runs; took_s median {statistics.median(took):.2f} s"
          + (f"; headline median {statistics.median(values) / 1e9:.2f} GB/s" if values else ""))


def main() -> None:
    cls = Path(sys.argv[1]) if len(sys.argv) > 1 else CLASS
    n = int(sys.argv[2]) if len(sys.argv) > 2 else N
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    run(cls, n)
    run(cls, n, "--facts-only")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
