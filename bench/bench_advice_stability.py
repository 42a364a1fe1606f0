"""Does the advice agree from one probe to the next, and does its stability figure say so?
(issue 25 "Must show"; prints to stdout; not a test).

    .venv/bin/python bench/bench_advice_stability.py                       # 10 full mpich-cma
    .venv/bin/python bench/bench_advice_stability.py --plugin openmpi --probes 5 --quick
    .venv/bin/python bench/bench_advice_stability.py --probes 20 --ab later_sizes=all  # A/B
    .venv/bin/python bench/bench_advice_stability.py --plugin all      # whole probes

Each probe is ``python -m advisor probe --plugin P [--quick] -o <tmp>`` in a fresh process, one
after the other.  Per probe it prints the advised settings (the recommendations' non-default
settings, "default" when every setting is the library's), the stability the probe reported
(``cma-decision`` for mpich-cma; the openmpi rationale's "Stability x"), its launches and why
measuring stopped, and the wall seconds.  Then the summary:

* agreement: the share of probes whose advice is the most common one (target: 9 of 10);
* stable: the share reporting stability >= 0.8, or naming the budget as the reason (target
  9 of 10);
* calibration: among probes that reported stability >= 0.8, the share whose advice is the
  most common one (the figure must not be above the agreement it predicts);
* the median wall time (the issue's target for a full probe: 30 s).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``--plugin all``: the whole probe (no ``--plugin``); the advice is every probe's, the
#: stability, launches and stop mpich-cma's.
ALL = "all"
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

#: The stability policy (advisor.measure.STABLE_SHARE).
from advisor.measure import STABLE_SHARE  # noqa: E402


def one(plugin: str, quick: bool, keep: Path | None = None, index: int = 0,
        options: tuple[str, ...] = ()) -> dict:
    from advisor.profile import load_profile

    with tempfile.TemporaryDirectory() as tmp:
        out = (keep / f"probe-{index:02d}.toml") if keep else Path(tmp) / "p.toml"
        t0 = time.monotonic()
        cp = subprocess.run([sys.executable, "-m", "advisor", "probe",
                             *(["--plugin", plugin] if plugin != ALL else []),
                             *(["--quick"] if quick else []),
                             *[x for o in options for x in ("--option", o)], "-o", str(out)],
                            capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'plugins'}"})
        took = time.monotonic() - t0
        if not out.exists():
            return {"advice": f"(no profile, exit {cp.returncode})", "stability": None,
                    "launches": None, "stopped": None, "seconds": took}
        prof = load_profile(out)
    # the whole probe (``--plugin all``): every probe's advice, mpich-cma's stability
    res = next((r for r in prof.results if r.probe == (plugin if plugin != ALL else "mpich-cma")),
               None)
    if res is None:
        return {"advice": "(no result)", "stability": None, "launches": None,
                "stopped": None, "seconds": took}
    advice = sorted(f"{s.name}={s.value}"
                    for r in (prof.results if plugin == ALL else [res])
                    for rec in r.recommendations for s in rec.settings
                    if not s.is_default) or ["default"]
    stab, launches, stopped = None, None, None
    dec = next((e for e in res.evidence if e.id == "cma-decision"), None)
    if dec is not None:
        stab = dec.values.get("stability")
        launches, stopped = dec.values.get("launches"), dec.values.get("stopped")
    else:
        found = [float(m.group(1)) for r in res.recommendations
                 for m in [re.search(r"Stability ([0-9.]+)", r.rationale)] if m]
        stab = min(found) if found else None
        ev = next((e for e in res.evidence if e.id == "ompi-paths"), None)
        if ev is not None:
            launches, stopped = ev.values.get("rounds"), ev.values.get("stopped")
        check = next((e for e in res.evidence if e.id == "cma-switch-check"), None)
        if check is not None and check.values.get("trusted") is False:
            stopped = "MPI_T untrusted: separate launches, no stability figure"
    return {"advice": ", ".join(advice), "stability": stab, "launches": launches,
            "stopped": stopped, "seconds": took, "status": res.status}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugin", default="mpich-cma",
                    help="the probe, or 'all': whole probes (every probe's advice compared)")
    ap.add_argument("--probes", type=int, default=10)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="keep each probe's profile in DIR (probe-01.toml, ...)")
    ap.add_argument("--option", action="append", default=[], metavar="K=V",
                    help="probe option for every probe (advisor probe --option)")
    ap.add_argument("--ab", default=None, metavar="K=V",
                    help="alternate: odd probes as given, even probes with this option too; "
                         "the summary is printed per group (an A/B of a probe change under "
                         "the same machine states)")
    a = ap.parse_args()
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
    print(f"# {a.probes} {'quick' if a.quick else 'full'} probes of {a.plugin}; load average "
          f"{os.getloadavg()[0]:.2f}; python {sys.executable}"
          + (f"; A/B: {a.ab} on even probes" if a.ab else ""))
    groups: dict[str, list[dict]] = {}
    for i in range(a.probes):
        opts = tuple(a.option) + ((a.ab,) if a.ab and i % 2 else ())
        r = one(a.plugin, a.quick, a.keep, i + 1, opts)
        groups.setdefault(" ".join(opts[len(a.option):]) or "as given", []).append(r)
        st = "-" if r["stability"] is None else f"{r['stability']:.2f}"
        print(f"probe {i + 1:2d}: {r['advice']:<45} stability {st:>5}  launches "
              f"{r['launches']}  stopped {r['stopped']}  {r['seconds']:.1f} s"
              + (f"  [{' '.join(opts)}]" if opts else ""), flush=True)
    for name, rows in groups.items():
        if len(groups) > 1:
            print(f"## {name}")
        summary(rows)
    return 0


def summary(rows: list[dict]) -> None:
    """Agreement, share stable, calibration and wall time of ``rows`` (module docstring)."""
    common, n_common = Counter(r["advice"] for r in rows).most_common(1)[0]
    stable = [r for r in rows if (r["stability"] or 0) >= STABLE_SHARE or r["stopped"] == "budget"]
    high = [r for r in rows if (r["stability"] or 0) >= STABLE_SHARE]
    calib = sum(r["advice"] == common for r in high) / len(high) if high else float("nan")
    print(f"agreement: {n_common}/{len(rows)} give '{common}'")
    print(f"stable (>= {STABLE_SHARE}) or budget named: {len(stable)}/{len(rows)}")
    print(f"calibration: of {len(high)} probes at stability >= {STABLE_SHARE}, "
          f"{calib:.2f} give the common advice")
    print(f"wall time: median {statistics.median(r['seconds'] for r in rows):.1f} s "
          f"(range {min(r['seconds'] for r in rows):.1f}-{max(r['seconds'] for r in rows):.1f})")

if __name__ == "__main__":
    raise SystemExit(main())
