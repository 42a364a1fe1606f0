"""Wall time of fact detection: ``advisor.facts.detect()`` (every detector, incl. the mpi4py
library-version subprocess and pyopencl) and ``detect_fingerprint_facts()`` (what ``advisor emit``
runs to warn about a profile from another machine; target well under 0.1 s).

Each figure is measured in a fresh Python process (first call, cold caches of archspec and the
import system) and then N times in one process (warm); prints median and max in seconds, plus the
import time of ``advisor.facts``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

N = 7

_COLD = """
import json, time
t0 = time.perf_counter()
from advisor import facts
t1 = time.perf_counter()
facts.{fn}()
t2 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1]))
"""


def cold(fn: str) -> tuple[list[float], list[float]]:
    imports, calls = [], []
    for _ in range(N):
        out = subprocess.run([sys.executable, "-c", _COLD.format(fn=fn)], capture_output=True,
                             text=True, check=True).stdout
        a, b = json.loads(out)
        imports.append(a)
        calls.append(b)
    return imports, calls


def warm(fn) -> list[float]:
    fn()
    out = []
    for _ in range(N):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def line(name: str, xs: list[float]) -> str:
    return f"{name:<44} median {statistics.median(xs):.4f} s   max {max(xs):.4f} s   (n={len(xs)})"


def main() -> None:
    from advisor import facts

    for fn in ("detect_fingerprint_facts", "detect"):
        imports, calls = cold(fn)
        print(line(f"{fn}() first call, fresh process", calls))
        print(line(f"{fn}() repeated, same process", warm(getattr(facts, fn))))
    print(line("import advisor.facts (fresh process)", imports))


if __name__ == "__main__":
    main()
