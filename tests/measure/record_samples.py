"""Records the real timing data used by test_stats.py (run by hand, not collected by pytest).

    .venv/bin/python tests/measure/record_samples.py > tests/data/measure/copy_samples.json

Each run is a fresh process (run_python) that times ``numpy.copyto`` between random-filled host
buffers with ``advisor.measure.sample``: ``small`` copies N bytes, ``double`` copies 2N bytes, so
``double`` is a real ~2x slower configuration.  Runs are interleaved (small, double, small, ...).
"""

import json
import sys

from advisor.measure import conditions, interleave, run_python

N = 256 * 1024
CODE = """
import json, sys, numpy as np
from advisor.measure import host_buffer, sample
n = int(sys.argv[1])
src, dst = host_buffer(n), host_buffer(n, seed=1)
r = sample(lambda: np.copyto(dst, src), min_samples=200, max_time_s=0.5, max_samples=400)
print(json.dumps({"samples": r.samples, "warmup": r.warmup, "batch": r.batch}))
"""


def main() -> None:
    sizes = {"small": N, "double": 2 * N}
    res = interleave(list(sizes), lambda c, i: run_python(["-c", CODE, str(sizes[c])],
                                                          timeout_s=60)["samples"], repeats=4,
                     max_extra_rounds=0)
    out = {"description": __doc__.strip().splitlines()[0], "unit": "s",
           "bytes": sizes, "runs": {c: res.runs[c] for c in sizes},
           "conditions": conditions().model_dump(mode="json")}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
