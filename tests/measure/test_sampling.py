"""The sampler and the interleaving of configurations across fresh processes (live)."""

import time

import numpy as np
import pytest

from advisor.measure import host_buffer, interleave, run_python, sample


def test_first_use_cost_reported_apart_from_steady_state():
    calls = []

    def fn():
        calls.append(1)
        time.sleep(0.3 if len(calls) == 1 else 0.001)

    r = sample(fn, min_samples=10, max_time_s=0.05)
    # The 300x first call is warm-up.  The rule may also take the next call or two when they
    # are slower than every later one (a core that slept 0.3 s wakes at a lower clock), so
    # the test asks for the rule's own property, not for exactly one warm-up value.
    assert r.warmup and r.warmup[0] == r.first_call_s >= 0.3
    assert min(r.warmup) > max(r.samples)
    assert len(r.samples) >= 10 and max(r.samples) < 0.3
    p = r.to_point(x=1.0, label="sleep")
    assert p.warmup == r.warmup and p.stats.n == len(r.samples)


def test_batches_calibrated_for_short_calls_and_time_cap():
    r = sample(lambda: None, min_samples=20, max_time_s=0.05)
    assert r.batch > 1  # a no-op is far below the timer's resolution + cost
    assert r.batch * r.stats().median * 1e9 >= 0  # seconds per call, not per batch
    assert r.calls >= r.batch * len(r.samples)
    assert r.elapsed_s < 2.0


def test_min_samples_wins_over_time_cap_but_not_over_deadline():
    r = sample(lambda: time.sleep(0.01), min_samples=5, max_time_s=0.0)
    assert len(r.samples) + len(r.warmup) >= 5 and not r.truncated
    t0 = time.monotonic()
    r = sample(lambda: time.sleep(0.01), min_samples=1000, deadline=time.monotonic() + 0.2)
    assert r.truncated and time.monotonic() - t0 < 1.0


def test_series_still_improving_at_max_samples_is_sampled_until_steady():
    # The recorded CI case in miniature: every call up to max_samples is slow and the later
    # ones fast, so at max_samples the warm-up rule leaves 2 steady samples.  The sampler
    # goes on (within the time cap) until min_samples of them are steady.
    calls = []

    def fn():
        calls.append(1)
        time.sleep(0.02 if len(calls) <= 18 else 0.001)

    r = sample(fn, min_samples=5, max_samples=20, max_time_s=5.0, batch=1)
    # every slow call is warm-up (the first fast one may be too: a CI run saw it 2 % slower
    # than the rest and the warm-up rule took it), and every steady sample is fast
    assert len(r.samples) >= 5 and max(r.samples) < 0.02
    assert sum(w >= 0.02 for w in r.warmup) == 18
    assert not r.truncated and r.elapsed_s < 5.0


def test_fixed_warmup_and_bytes_per_second():
    a, b = host_buffer(1 << 20), host_buffer(1 << 20, seed=1)
    r = sample(lambda: np.copyto(b, a), min_samples=5, max_time_s=0.05, warmup=2)
    assert len(r.warmup) == 2
    p = r.to_point(per_call_bytes=a.nbytes)
    # bytes/s of the median call: exact for an odd count; for an even count the median is the
    # mean of the two middle values, which lies between the rates of those two calls
    mid = sorted(r.samples)[(len(r.samples) - 1) // 2:len(r.samples) // 2 + 1]
    lo, hi = a.nbytes / max(mid), a.nbytes / min(mid)
    assert lo * (1 - 1e-9) <= p.stats.median <= hi * (1 + 1e-9)


def test_bad_sampler_arguments():
    with pytest.raises(ValueError):
        sample(lambda: None, min_samples=0)
    with pytest.raises(ValueError):
        sample(lambda: None, min_samples=10, max_samples=5)


def test_interleave_order_extra_rounds_and_deadline():
    values = {"A": iter([1.0, 1.0, 5.0, 1.0, 1.0, 1.0]), "B": iter([2.0] * 6)}
    res = interleave(["A", "B"], lambda c, i: [next(values[c])], repeats=3)
    assert [c for c, _ in res.order[:4]] == ["A", "B", "A", "B"]
    assert res.extra_rounds >= 1 and res.rounds == 3 + res.extra_rounds
    assert len(res.runs["A"]) == len(res.runs["B"])
    slow = interleave(["A", "B"], lambda c, i: (time.sleep(0.05), [1.0])[1], repeats=50,
                      deadline=time.monotonic() + 0.2)
    assert slow.truncated and slow.rounds < 50
    with pytest.raises(ValueError):
        interleave([], lambda c, i: 1.0)
    # repeats that always disagree: extra rounds stop at the budget, not at max_extra_rounds
    flip = interleave(["A"], lambda c, i: (time.sleep(0.05), [1.0 + 9 * (i % 2)])[1],
                      repeats=2, max_extra_rounds=100, deadline=time.monotonic() + 0.4)
    assert flip.truncated and 2 <= flip.rounds < 10 and flip.disagreement["A"] == 10.0


CODE = """
import json, sys, numpy as np
from advisor.measure import host_buffer, sample
n = int(sys.argv[1])
src, dst = host_buffer(n), host_buffer(n, seed=1)
r = sample(lambda: np.copyto(dst, src), min_samples=100, max_time_s=0.2)
print(json.dumps({"samples": r.samples}))
"""


@pytest.mark.integration
def test_real_difference_detected_across_fresh_processes():
    """Copying 16N bytes against N bytes, interleaved runs in fresh processes: 'worse'.

    The effect is made far larger than the A/A spread a loaded 2-core VM shows between fresh
    processes (up to 1.63x seen between two runs of the same copy: the VM's fast and slow copy
    states), so the claim holds with a busy neighbour; how small a difference the harness can
    resolve is a benchmark figure, not a test."""
    n = 64 * 1024
    sizes = {"N": n, "16N": 16 * n}
    res = interleave(list(sizes), lambda c, i: run_python(["-c", CODE, str(sizes[c])],
                                                          timeout_s=60)["samples"], repeats=2,
                     max_extra_rounds=1)
    cmp = res.compare("N", "16N")
    assert cmp.verdict == "worse", (cmp, res.disagreement)
    assert cmp.ratio < 0.5, cmp


def test_import_is_cheap_and_silent():
    """``import advisor.measure`` loads no numpy, psutil or mpi4py and prints nothing."""
    import subprocess
    import sys

    code = ("import sys, advisor.measure; "
            "print(','.join(m for m in ('numpy', 'psutil', 'mpi4py') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "" and out.stderr == ""
