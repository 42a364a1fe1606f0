"""Advice quality of the mpich-cma probe, judged against an oracle: N probes and a long
exhaustive measurement of every threshold candidate (see below).

    .venv/bin/python bench/advice_quality.py [--probes N] [--quick] [--oracle-rounds R]
        [--oracle-target-s S] [--sizes 1024,2048,...] [--check-rounds R] [--out DIR] [--json]
    make bench-advice PROBES=5

What it does (DESIGN.md, "Advice (what makes it trustworthy)": judge advice against an oracle):

1. **Probes.**  ``N`` runs of ``python -m advisor probe --plugin mpich-cma [--quick] -o
   DIR/pK.toml``, each in a fresh process.  The advice is read from the PROFILE only (the stable
   interface): the Setting ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD`` / ``MPIR_CVAR_CH4_CMA_ENABLE``
   (or an alias with the ``MPICH_`` / ``MPIR_PARAM_`` prefix) in the mpich-cma result's
   recommendations; no recommendation means the library default, which is read from the
   Settings' ``default`` fields or the ``cma-library`` evidence values of the same profile.

2. **The oracle.**  Every candidate setting: CMA off, and CMA on with threshold ``T`` for every
   oracle size ``T`` (powers of two from 1 KiB to 16 MiB, plus the sizes the probes measured and
   the library default).  Per message size only two paths exist, CMA (``n >= T``) or the
   two-copy shared-memory path (``n < T``), so candidate ``T``'s performance at size ``n`` IS the
   CMA measurement when ``n >= T`` and the copy measurement otherwise.  The exhaustive
   measurement of every candidate therefore reduces to a long paired measurement of CMA on vs
   off at every size, then evaluating every candidate on it.  The on/off measurement is the
   worker's ``paired`` mode (``advisor_mpich_cma.workers.rank paired``: one launch with CMA enabled,
   MPI_T switches ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD`` between adjacent batches, on/off order
   alternating per round, up to 48 rounds per size and launch), repeated in ``R`` independent
   launches interleaved with the probes (probe 1, oracle launch 1, probe 2, ...), so the oracle
   samples the same machine states as the probes, over a longer time.  Per size and metric the
   CMA/copy ratio is the median over ALL paired rounds of all launches of the per-round ratio
   (bandwidth on/off; latency off/on, i.e. inverted: > 1 means CMA is better); adjacent batches
   share the machine's fast/slow state (background.md §4), so it cancels in the ratio.

   Scoring (the same minimax-regret notion the plugin's DESIGN names, written independently here
   so the judge does not share code with what it judges): performance relative to the copy path
   is 1 for a size sent by copy and the CMA/copy ratio for a size sent by CMA; the oracle's
   per-size best is the max over the candidates; a candidate's ratio at a size is its
   performance over that best (bandwidth and latency separately, latency inverted), its WORST
   ratio the minimum over sizes and both metrics; the oracle's MINIMAX choice is the candidate
   with the highest worst ratio (ties: the library default, then the smaller threshold, then
   CMA off).

3. **Independent check of the reduction.**  The oracle's minimax candidate, the distinct advised
   candidates and the library default are also measured directly as WHOLE settings (environment
   variables in fresh launches of the worker's ``sweep`` mode, the candidates' order rotated round
   after round) at a few sizes where they route messages differently.  Per size and metric, the
   measured candidate/minimax ratio (median over rounds of the per-round ratio of launch medians,
   95 % bootstrap CI) is printed beside the ratio the reduction predicts from a short paired
   (MPI_T) launch run in every check round (same minutes, same load: on a shared machine the
   on/off ratio itself moves with the load) and from the long oracle.  Sizes that two
   settings route alike are A/A comparisons: their spread is the launch-to-launch machine state
   that fresh launches cannot cancel (why the oracle itself is paired inside one launch), and it
   is the check's noise floor: the reduction holds at a point where the settings differ when the
   prediction lies inside the CI or within that floor (``check_verdicts``).

Prints: the distinct advices (and how many probes gave each); per probe the advised/oracle-best
ratio per message size and the worst of them; per probe the advice's worst ratio over that of
the oracle's minimax setting; a summary line with the issue's targets ("same advice: k/N (or
within 5 % of the oracle's minimax choice)", "min advised/minimax worst-ratio: x (target >=
0.95)"); the elapsed time.  Nothing is asserted (targets are figures here, never test gates).

Units: sizes in bytes, latency in seconds (one way, ping-pong), bandwidth in bytes/s (osu_bw
window); ratios are dimensionless.  Default run (5 full probes, 6 oracle launches): about 8-10
minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

# --------------------------------------------------------------------------- constants

#: Issue 13 item 9 target: a probe's advice counts as "the same" when it equals the oracle's
#: minimax choice or its worst ratio is within 5 % of the minimax choice's worst ratio.
SAME_ADVICE_TOLERANCE = 0.05
#: Issue 13 item 9 target: min over probes of (advised worst ratio / minimax worst ratio) >= 0.95.
MINIMAX_RATIO_TARGET = 0.95

#: The candidate "CMA off" (no size uses CMA).
OFF = None
#: Metrics scored; both higher-is-better once latency is inverted.
LAT, BW = "lat", "bw"
METRICS = (LAT, BW)

#: MPICH's names (every CVAR is also read under the ``MPICH_`` and ``MPIR_PARAM_`` prefixes:
#: MPICH's generated ``mpir_cvars.c``; background.md §3).
CMA_ENABLE = "MPIR_CVAR_CH4_CMA_ENABLE"
CMA_THRESHOLD = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"
PREFIXES = ("MPIR_CVAR_", "MPICH_", "MPIR_PARAM_")
#: The probe's name and the worker module whose public modes (``paired``, ``sweep``) we run.
PROBE = "mpich-cma"
WORKER = "advisor_mpich_cma.workers.rank"
#: The library's identity evidence in a profile (values ``cma_enable_default``,
#: ``threshold_default_bytes``) and the paired evidence (its series' x values are the sizes).
LIBRARY_EVIDENCE, PAIRED_EVIDENCE = "cma-library", "cma-paired"

#: Oracle sizes: every power of two from 1 KiB to 16 MiB (the plugin's measured range, issue 4).
ORACLE_SIZES = tuple(1 << k for k in range(10, 25))
#: Oracle launches (interleaved with the probes) and seconds per size, measure and configuration
#: in one launch: a budget choice so the default run stays within ~10 minutes on 2 cores
#: (~40 s per launch at 18 sizes), each launch giving up to 48 paired rounds per size.
ORACLE_ROUNDS, ORACLE_TARGET_S = 6, 0.4
#: Paired rounds per size inside one oracle launch: the worker's own cap (``MAX_ROUNDS``, 48).
ORACLE_ROUNDS_PER_LAUNCH = 48
#: Direct check: rounds (one fresh launch per candidate each), seconds per size and measure in
#: a launch, and at most this many sizes (budget choices: ~1.5 s per launch here).
CHECK_ROUNDS, CHECK_TARGET_S, CHECK_MAX_SIZES = 5, 0.05, 4
#: Two-sided level of the bootstrap CIs printed (the plugin's level too).
LEVEL = 0.95
#: Bootstrap resamples of the CIs (a percentile CI of a median; 2000 is the usual choice for
#: tail quantiles, Efron & Tibshirani 1993 ch. 13).
N_BOOT = 2000
#: ``advisor probe`` exit codes that still wrote a profile: 0 ok, 3 findings (advisor.cli).
PROBE_OK_CODES = (0, 3)
#: Seconds before a probe / a launch is killed (a stuck run must not hang the bench).
PROBE_TIMEOUT_S, LAUNCH_TIMEOUT_S = 900.0, 600.0


# --------------------------------------------------------------------------- pure scoring

Candidate = Optional[int]   # threshold in bytes, or OFF (None)
Key = tuple[str, int]       # (metric, size in bytes)


def uses_cma(t: Candidate, n: int) -> bool:
    """Whether candidate ``t`` sends a message of ``n`` bytes through CMA (MPICH: CMA for
    messages >= the threshold; OFF: never)."""
    return t is not None and n >= t


def signature(t: Candidate, sizes: Sequence[int]) -> tuple[bool, ...]:
    """How ``t`` routes each of ``sizes``: two candidates with the same signature are the same
    setting as far as these sizes can tell."""
    return tuple(uses_cma(t, n) for n in sizes)


def candidate_grid(sizes: Sequence[int], default: Candidate) -> list[Candidate]:
    """Distinct candidates in tie-break order: the library default, every size as a threshold
    (ascending), CMA off; thresholds that route every size alike are kept once (the first)."""
    sizes = sorted(set(sizes))
    out: list[Candidate] = []
    seen = set()
    for t in [default, *sizes, OFF]:
        sig = signature(t, sizes)
        if sig not in seen:
            seen.add(sig)
            out.append(t)
    return out


def paired_ratio(on: Sequence[float], off: Sequence[float], metric: str) -> list[float]:
    """Per-round CMA/copy performance ratios of index-aligned pairs (> 1: CMA better):
    bandwidth on/off (bytes/s), latency off/on (seconds, inverted)."""
    out = []
    for a, b in zip(on, off):
        if a > 0 and b > 0:
            out.append(a / b if metric == BW else b / a)
    return out


def candidate_perf(t: Candidate, cma_over_copy: Mapping[Key, float]) -> dict[Key, float]:
    """The reduction: performance of candidate ``t`` relative to the copy path at each
    (metric, size): 1 where ``t`` sends by copy, the measured CMA/copy ratio where by CMA."""
    return {(m, n): (r if uses_cma(t, n) else 1.0) for (m, n), r in cma_over_copy.items()}


def oracle_best(perf: Mapping[Candidate, Mapping[Key, float]]) -> dict[Key, float]:
    """Per (metric, size): the best performance over all candidates."""
    keys = set().union(*(p.keys() for p in perf.values()))
    return {k: max(p[k] for p in perf.values() if k in p) for k in keys}


def per_size_ratios(perf: Mapping[Key, float], best: Mapping[Key, float]) -> dict[Key, float]:
    """A candidate's performance over the per-size best at each (metric, size): 1 = best."""
    return {k: perf[k] / best[k] for k in perf if best.get(k, 0) > 0}


def by_size(ratios: Mapping[Key, float]) -> dict[int, float]:
    """Per size, the smaller of the metrics' ratios (what a size costs the candidate)."""
    out: dict[int, float] = {}
    for (_, n), r in ratios.items():
        out[n] = min(r, out.get(n, math.inf))
    return dict(sorted(out.items()))


def worst_ratio(ratios: Mapping[Key, float]) -> tuple[float, Optional[Key]]:
    """``(smallest ratio, its (metric, size))`` over all sizes and metrics; ``(1.0, None)`` when
    empty."""
    if not ratios:
        return 1.0, None
    k = min(sorted(ratios), key=lambda key: ratios[key])
    return ratios[k], k


def minimax(worst: Mapping[Candidate, float], order: Sequence[Candidate]) -> Candidate:
    """The candidate with the highest worst ratio; ties go to the earliest in ``order``."""
    best, chosen = -math.inf, order[0]
    for t in order:
        if worst[t] > best:
            best, chosen = worst[t], t
    return chosen


def same_or_within(advised: Candidate, chosen: Candidate, advised_worst: float,
                   chosen_worst: float, sizes: Sequence[int],
                   tolerance: float = SAME_ADVICE_TOLERANCE) -> bool:
    """The issue's "same advice (or within 5 % of the oracle's minimax choice)": the advice
    routes every oracle size as the minimax choice does, or its worst ratio is at least
    ``(1 - tolerance)`` times the minimax choice's."""
    if signature(advised, sizes) == signature(chosen, sizes):
        return True
    return advised_worst >= (1.0 - tolerance) * chosen_worst


def score(cma_over_copy: Mapping[Key, float], default: Candidate,
          advices: Sequence[Candidate]) -> dict[str, Any]:
    """Everything the bench reports, from the oracle's per-(metric, size) CMA/copy ratios.

    :param cma_over_copy: ``(metric, bytes) -> ratio`` (> 1: CMA better; latency inverted).
    :param default: the library default candidate (threshold bytes, or OFF).
    :param advices: each probe's advised candidate (OFF allowed).
    :returns: ``grid``, ``worst`` (candidate -> worst ratio), ``minimax``, ``minimax_worst``,
        ``runner_up`` / ``runner_up_worst`` (the next best candidate: the oracle's margin),
        and per probe ``probes[i]``: ``advice``, ``ratios`` (size -> min over metrics),
        ``worst``, ``worst_at`` (metric, size), ``vs_minimax``, ``same_or_within``; plus
        ``same_count``, ``min_vs_minimax``.
    """
    sizes = sorted({n for (_, n) in cma_over_copy})
    grid = candidate_grid(sizes, default)
    perf = {t: candidate_perf(t, cma_over_copy) for t in grid}
    best = oracle_best(perf)
    worst = {t: worst_ratio(per_size_ratios(perf[t], best))[0] for t in grid}
    chosen = minimax(worst, grid)
    mw = worst[chosen]
    probes = []
    for a in advices:
        rat = per_size_ratios(candidate_perf(a, cma_over_copy), best)
        w, at = worst_ratio(rat)
        probes.append({"advice": a, "ratios": by_size(rat), "worst": w, "worst_at": at,
                       "vs_minimax": w / mw if mw > 0 else math.nan,
                       "same_or_within": same_or_within(a, chosen, w, mw, sizes)})
    rest = [t for t in grid if t != chosen]
    runner = minimax(worst, rest) if rest else chosen
    return {"sizes": sizes, "grid": grid, "worst": worst, "minimax": chosen, "minimax_worst": mw,
            "runner_up": runner, "runner_up_worst": worst[runner],
            "default": default, "probes": probes,
            "same_count": sum(p["same_or_within"] for p in probes),
            "min_vs_minimax": min((p["vs_minimax"] for p in probes), default=math.nan)}


def predicted_ratio(a: Candidate, b: Candidate, key: Key,
                    cma_over_copy: Mapping[Key, float]) -> float:
    """What the reduction predicts for candidate ``a``'s performance over ``b``'s at ``key``."""
    return candidate_perf(a, {key: cma_over_copy[key]})[key] / \
        candidate_perf(b, {key: cma_over_copy[key]})[key]


def check_sizes(cands: Sequence[Candidate], ref: Candidate, sizes: Sequence[int],
                cma_over_copy: Mapping[Key, float], limit: int = CHECK_MAX_SIZES) -> list[int]:
    """Sizes for the direct check against ``ref``, at most ``limit``, in this priority: for each
    candidate in order, the smallest and the largest size it routes differently from ``ref``
    (the boundary, often a near tie, and the far end), then the size of largest predicted
    difference (|log CMA/copy|, worse metric).  When no candidate differs: the sizes on both
    sides of ``ref``'s threshold (the largest sizes when ``ref`` is CMA off)."""
    ss = sorted(set(sizes))
    want: list[int] = []
    gaps = []
    for c in cands:
        diff = [n for n in ss if uses_cma(c, n) != uses_cma(ref, n)]
        if diff:
            want += [diff[0], diff[-1]]
            gaps += [(max(abs(math.log(cma_over_copy[(m, n)])) for m in METRICS
                          if cma_over_copy.get((m, n), 0) > 0), n) for n in diff]
    if gaps:
        want.append(max(gaps)[1])
    if not want:
        if ref is None:
            want = ss[-limit:]
        else:
            want = [n for n in ss if n < ref][-1:] + [n for n in ss if n >= ref][:1]
    return sorted(list(dict.fromkeys(want))[:limit]) or ss[:limit]


def check_verdicts(rows: Sequence[dict]) -> dict[str, Any]:
    """Verdicts of the direct check.  ``rows``: dicts with ``candidate``, ``ref``, ``bytes``,
    ``measured``, ``ci`` (low, high) and ``predicted`` (candidate/ref ratios).

    Points where the two settings route the size the same way (``predicted == 1``) are A/A
    comparisons: their deviation from 1 is the launch-to-launch machine state the fresh
    launches cannot cancel (background.md §4), and the largest such ``|log ratio|`` is the
    check's noise floor.  A point where the settings differ is consistent with the reduction
    when the prediction lies in the measured CI or within the A/A floor of the measurement.
    Marks each row's ``verdict`` ("A/A", "in CI", "within A/A", "DIFFERS") and returns
    ``aa_floor`` (|log|), ``consistent`` and ``tested`` (counts over differing points)."""
    aa = [abs(math.log(r["measured"])) for r in rows
          if r["predicted"] == 1.0 and r["measured"] > 0]
    floor = max(aa, default=0.0)
    ok = tested = 0
    for r in rows:
        if r["predicted"] == 1.0:
            r["verdict"] = "A/A"
            continue
        tested += 1
        lo, hi = r["ci"]
        err = abs(math.log(r["measured"] / r["predicted"])) if r["measured"] > 0 else math.inf
        r["verdict"] = ("in CI" if lo <= r["predicted"] <= hi else
                        "within A/A" if err <= floor else "DIFFERS")
        ok += r["verdict"] != "DIFFERS"
    return {"aa_floor": floor, "consistent": ok, "tested": tested}


def advice_from_settings(settings: Mapping[str, Any], default: Candidate,
                         default_threshold: Optional[int] = None) -> Candidate:
    """A probe's advised candidate from its recommended settings (name -> value; the canonical
    MPICH names or their ``MPICH_`` / ``MPIR_PARAM_`` aliases).  No setting: ``default`` (the
    library default candidate); CMA enabled without a threshold: the library's default
    threshold ``default_threshold`` (bytes; ``default`` when not given)."""
    def get(cvar: str):
        base = cvar[len("MPIR_CVAR_"):]
        for p in PREFIXES:
            if p + base in settings:
                return settings[p + base]
        return None

    enable, thr = get(CMA_ENABLE), get(CMA_THRESHOLD)
    if enable is not None and str(enable).strip().lower() in ("0", "no", "false"):
        return OFF
    if thr is not None:
        return int(thr)
    if enable is not None:  # enabled, threshold left at the library's default
        return default_threshold if default_threshold is not None else default
    return default


def cand_name(t: Candidate) -> str:
    """Human name of a candidate (``CMA off`` / ``threshold 8 KiB``)."""
    return "CMA off" if t is None else f"threshold {fmt_bytes(t)}"


def fmt_bytes(n: int) -> str:
    for unit, k in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << k and n % (1 << k) == 0:
            return f"{n >> k} {unit}"
    return f"{n} B"


# --------------------------------------------------------------------------- profiles


def read_probe(path: Path) -> dict[str, Any]:
    """Advice, library default and measured sizes from one profile (the public schema only)."""
    from advisor.profile import load_profile

    prof = load_profile(path)
    res = [r for r in prof.results if r.probe == PROBE or r.plugin == PROBE]
    if not res:
        raise SystemExit(f"{path}: no {PROBE} result")
    r = res[0]
    settings: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for rec in r.recommendations:
        for s in rec.settings:
            if s.library == "mpich":
                settings[s.name] = s.value
                if s.default is not None:
                    defaults[s.name] = s.default
    lib = next((e.values for e in r.evidence if e.id == LIBRARY_EVIDENCE), {}) or {}
    en = defaults.get(CMA_ENABLE, lib.get("cma_enable_default"))
    thr = defaults.get(CMA_THRESHOLD, lib.get("threshold_default_bytes"))
    default: Candidate = int(thr) if en is not None and int(en) == 1 and thr is not None \
        else OFF
    sizes = sorted({int(p.x) for e in r.evidence if e.id.startswith(PAIRED_EVIDENCE)
                    for s in e.series for p in s.points if p.x is not None})
    return {"path": str(path), "status": r.status, "reason": r.reason, "settings": settings,
            "default": default, "default_known": en is not None,
            "advice": (advice_from_settings(settings, default, int(thr) if thr is not None
                                            else None) if r.status == "ok" else default),
            "recommendations": [rec.id for rec in r.recommendations], "sizes": sizes,
            "duration_s": r.duration_s}


# --------------------------------------------------------------------------- measuring


def run_probe(path: Path, quick: bool) -> float:
    """One ``advisor probe`` in a fresh process; returns its wall seconds."""
    argv = [sys.executable, "-m", "advisor", "probe", "--plugin", PROBE, "-o", str(path)]
    if quick:
        argv.insert(4, "--quick")
    t0 = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=PROBE_TIMEOUT_S)
    if p.returncode not in PROBE_OK_CODES or not path.exists():
        raise SystemExit(f"advisor probe failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
    return time.monotonic() - t0


def setting_env(t: Candidate) -> dict[str, Optional[str]]:
    """Env overlay making ``t`` the whole setting (every alias of both CVARs cleared first)."""
    env: dict[str, Optional[str]] = {}
    for cvar in (CMA_ENABLE, CMA_THRESHOLD):
        base = cvar[len("MPIR_CVAR_"):]
        for p in PREFIXES:
            env[p + base] = None
    if t is None:
        env[CMA_ENABLE] = "0"
    else:
        env[CMA_ENABLE] = "1"
        env[CMA_THRESHOLD] = str(int(t))
    return env


def oracle_launch(sizes: Sequence[int], target_s: float) -> dict:
    """One paired (MPI_T) launch of the worker: CMA enabled at init (threshold 1, so MPICH's init
    check applies), the threshold switched per batch."""
    from advisor.measure import run_mpi

    res = run_mpi(WORKER, ["paired", "--sizes", ",".join(map(str, sizes)),
                           "--target-s", str(target_s),
                           "--rounds", str(ORACLE_ROUNDS_PER_LAUNCH)],
                  env=setting_env(1), timeout_s=LAUNCH_TIMEOUT_S)
    if res.get("mpit_error") or not res.get("sizes"):
        raise SystemExit("the oracle needs MPI_T switching of the CMA threshold: "
                         + str(res.get("mpit_error") or "no sizes returned"))
    return res


def pool_oracle(launches: Sequence[dict]) -> dict[str, Any]:
    """Per (metric, size): per-round CMA/copy ratios pooled over launches, their median, CI and
    the absolute medians (seconds, bytes/s) of each path."""
    from advisor.measure import bootstrap_median_ci

    pooled: dict[Key, list[float]] = {}
    raw: dict[tuple[str, str, int], list[float]] = {}
    for res in launches:
        for row in res["sizes"]:
            n = int(row["bytes"])
            for m, unit in ((LAT, "s"), (BW, "Bps")):
                on, off = row[f"{m}_on_{unit}"], row[f"{m}_off_{unit}"]
                pooled.setdefault((m, n), []).extend(paired_ratio(on, off, m))
                raw.setdefault((m, "on", n), []).extend(on)
                raw.setdefault((m, "off", n), []).extend(off)
    ratio = {k: statistics.median(v) for k, v in pooled.items() if v}
    ci = {k: bootstrap_median_ci(v, n_boot=N_BOOT, level=LEVEL) for k, v in pooled.items() if v}
    med = {k: statistics.median(v) for k, v in raw.items() if v}
    return {"ratio": ratio, "ci": ci, "pairs": {k: len(v) for k, v in pooled.items()},
            "median": med}


def direct_check(cands: Sequence[Candidate], ref: Candidate, sizes: Sequence[int],
                 cma_over_copy: Mapping[Key, float], rounds: int,
                 target_s: float) -> list[dict[str, Any]]:
    """Each candidate as a whole setting (env vars, fresh ``sweep`` launches, order rotated per
    round) at ``sizes``; per candidate != ``ref``, size and metric: measured ratio to ``ref``
    (median of per-round ratios of launch medians, bootstrap CI) vs the reduction's prediction.

    Every round also runs one short paired (MPI_T) launch at ``sizes``: the prediction
    (``predicted``) uses those local on/off ratios, measured in the same minutes as the whole
    settings, because on a shared machine the on/off ratio itself moves with the load (seen on
    the 2-core VM: CMA/copy bandwidth at 16 MiB x1.2 in a paired oracle launch, x3-6 between
    whole-setting launches under heavier load minutes later); ``predicted_oracle`` is the long
    oracle's prediction."""
    from advisor.measure import bootstrap_median_ci, run_mpi

    order = [ref] + [c for c in cands if c != ref]
    per: dict[tuple[Candidate, int], dict[Key, float]] = {}
    local_launches = []
    args = ["sweep", "--sizes", ",".join(map(str, sizes)), "--target-s", str(target_s)]
    for rnd in range(rounds):
        k = rnd % len(order)
        local_launches.append(oracle_launch(sizes, target_s))
        for c in order[k:] + order[:k]:
            res = run_mpi(WORKER, args, env=setting_env(c), timeout_s=LAUNCH_TIMEOUT_S)
            row: dict[Key, float] = {}
            for s in res["sizes"]:
                n = int(s["bytes"])
                row[(LAT, n)] = statistics.median(s["lat_s"])
                bws = [n * s["window"] / t for t in s["bw_window_s"] if t > 0]
                row[(BW, n)] = statistics.median(bws) if bws else math.nan
            per[(c, rnd)] = row
    local = pool_oracle(local_launches)["ratio"]
    out = []
    for c in order[1:]:
        for n in sizes:
            for m in METRICS:
                r = []
                for rnd in range(rounds):
                    a, b = per[(c, rnd)][(m, n)], per[(ref, rnd)][(m, n)]
                    if a > 0 and b > 0:
                        r.append(a / b if m == BW else b / a)
                if not r or (m, n) not in local:
                    continue
                lo, hi = bootstrap_median_ci(r, n_boot=N_BOOT, level=LEVEL)
                out.append({"candidate": c, "ref": ref, "bytes": n, "metric": m,
                            "measured": statistics.median(r), "ci": (lo, hi),
                            "predicted": predicted_ratio(c, ref, (m, n), local),
                            "predicted_oracle": predicted_ratio(c, ref, (m, n), cma_over_copy)})
    return out


# --------------------------------------------------------------------------- output


def _fmt_key(k: Optional[Key]) -> str:
    return "-" if k is None else f"{'latency' if k[0] == LAT else 'bandwidth'} {fmt_bytes(k[1])}"


def print_report(fig: dict, w=sys.stdout.write) -> None:
    s = fig["score"]
    n = len(fig["probes"])
    w(f"machine: {fig['machine']}\n")
    w(f"probes: {n} x advisor probe --plugin {PROBE}{' --quick' if fig['quick'] else ''} "
      f"(median {statistics.median(p['wall_s'] for p in fig['probes']):.0f} s each)\n")
    w(f"oracle: {fig['oracle']['launches']} paired MPI_T launches x up to "
      f"{ORACLE_ROUNDS_PER_LAUNCH} rounds, {len(s['sizes'])} sizes, "
      f"{min(fig['oracle']['pairs'].values())}+ paired rounds per size and metric, "
      f"{len(s['grid'])} candidates; library default: {cand_name(s['default'])}\n\n")
    w("distinct advices:\n")
    counts: dict[str, int] = {}
    for p in s["probes"]:
        counts[cand_name(p["advice"])] = counts.get(cand_name(p["advice"]), 0) + 1
    for name, k in sorted(counts.items(), key=lambda kv: -kv[1]):
        w(f"  {name:<20} {k}/{n} probes\n")
    w(f"oracle minimax: {cand_name(s['minimax'])} (worst ratio {s['minimax_worst']:.3f}); "
      f"runner-up {cand_name(s['runner_up'])} ({s['runner_up_worst']:.3f}); "
      f"library default {s['worst'][s['default']]:.3f}\n\n")
    # per-size table: oracle's CMA/copy ratios then each probe's advised/best
    heads = "".join(f"  p{i + 1:<5}" for i in range(n))
    w(f"{'':>8}  {'oracle CMA/copy':>15}  {'advised/oracle-best (min of lat, bw)'}\n")
    w(f"{'size':>8}  {'lat':>7} {'bw':>7}  {'minimax':>7}{heads}\n")
    mm = by_size(per_size_ratios(candidate_perf(s["minimax"], fig["oracle"]["ratio"]),
                                 oracle_best({t: candidate_perf(t, fig["oracle"]["ratio"])
                                              for t in s["grid"]})))
    for size in s["sizes"]:
        lat = fig["oracle"]["ratio"].get((LAT, size), math.nan)
        bw = fig["oracle"]["ratio"].get((BW, size), math.nan)
        cells = "".join(f"  {p['ratios'].get(size, math.nan):<6.3f}" for p in s["probes"])
        w(f"{fmt_bytes(size):>8}  {lat:>7.3f} {bw:>7.3f}  {mm[size]:>7.3f}{cells}\n")
    w("\nper probe:\n")
    for i, p in enumerate(s["probes"]):
        w(f"  p{i + 1}: {cand_name(p['advice']):<20} worst ratio {p['worst']:.3f} "
          f"({_fmt_key(p['worst_at'])}); advised/minimax worst-ratio {p['vs_minimax']:.3f}"
          f"{'  same/within 5 %' if p['same_or_within'] else ''}\n")
    chk = fig.get("check") or []
    if chk:
        w(f"\ndirect check of the reduction (whole settings, env vars, fresh launches, "
          f"{fig['check_rounds']} interleaved rounds, each with a short paired launch for the "
          f"prediction): candidate/{cand_name(chk[0]['ref'])}\n")
        v = fig["check_verdict"]
        for c in chk:
            w(f"  {cand_name(c['candidate']):<20} {fmt_bytes(c['bytes']):>8} {c['metric']:<3} "
              f"predicted {c['predicted']:.3f} (oracle {c['predicted_oracle']:.3f})  measured "
              f"{c['measured']:.3f} [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]  {c['verdict']}\n")
        w(f"  reduction consistent at {v['consistent']}/{v['tested']} (size, metric) points "
          f"where the settings differ; A/A (same routing) deviation up to "
          f"x{math.exp(v['aa_floor']):.2f} (launch-to-launch machine state)\n")
    w(f"\nsame advice: {s['same_count']}/{n} (or within {SAME_ADVICE_TOLERANCE:.0%} of the "
      f"oracle's minimax choice); min advised/minimax worst-ratio: {s['min_vs_minimax']:.3f} "
      f"(target >= {MINIMAX_RATIO_TARGET})\n")
    w(f"elapsed: {fig['elapsed_s']:.0f} s\n")


def _jsonable(x):
    if isinstance(x, dict):
        return {(k if isinstance(k, str) else "off" if k is None else
                 ":".join(map(str, k)) if isinstance(k, tuple) else str(k)): _jsonable(v)
                for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


# --------------------------------------------------------------------------- main


def _machine() -> str:
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = math.nan
    return f"{os.cpu_count()} CPUs, affinity {len(os.sched_getaffinity(0))}, loadavg_1m {load:.2f}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probes", type=int, default=5, help="probes to run (default 5)")
    ap.add_argument("--quick", action="store_true", help="quick probes (advisor probe --quick)")
    ap.add_argument("--oracle-rounds", type=int, default=ORACLE_ROUNDS,
                    help=f"oracle launches, each up to {ORACLE_ROUNDS_PER_LAUNCH} paired rounds "
                         f"per size (default {ORACLE_ROUNDS})")
    ap.add_argument("--oracle-target-s", type=float, default=ORACLE_TARGET_S,
                    help="oracle seconds per size, measure and configuration in one launch "
                         f"(default {ORACLE_TARGET_S})")
    ap.add_argument("--sizes", default=None,
                    help="oracle sizes in bytes, comma-separated (default: powers of two 1 KiB"
                         "-16 MiB, the probes' sizes and the library default)")
    ap.add_argument("--check-rounds", type=int, default=CHECK_ROUNDS,
                    help=f"rounds of the direct whole-setting check (0: skip; default "
                         f"{CHECK_ROUNDS})")
    ap.add_argument("--out", default=None, help="keep the profiles and figures.json here")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if args.probes < 1 or args.oracle_rounds < 1:
        ap.error("--probes and --oracle-rounds must be >= 1")
    t0 = time.monotonic()
    tmp = None
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
    else:
        out = Path(tempfile.mkdtemp(prefix="advice-quality-"))
        tmp = out
    log = sys.stderr.write
    try:
        fixed = sorted({int(x) for x in args.sizes.split(",") if x.strip()}) if args.sizes \
            else None
        # probe 1 first: the oracle's sizes include the sizes it measured and its default
        probes: list[dict] = []
        launches: list[dict] = []
        sizes: list[int] = list(fixed or ORACLE_SIZES)
        for i in range(max(args.probes, args.oracle_rounds)):
            if i < args.probes:
                path = out / f"p{i + 1}.toml"
                log(f"probe {i + 1}/{args.probes} ...\n")
                wall = run_probe(path, args.quick)
                info = read_probe(path)
                info["wall_s"] = wall
                probes.append(info)
                if i == 0 and not fixed:
                    extra = set(info["sizes"]) | ({info["default"]} if info["default"] else set())
                    sizes = sorted(set(ORACLE_SIZES) | extra)
            if i < args.oracle_rounds:
                log(f"oracle launch {i + 1}/{args.oracle_rounds} ({len(sizes)} sizes) ...\n")
                launches.append(oracle_launch(sizes, args.oracle_target_s))
        bad = [p for p in probes if p["status"] != "ok"]
        if bad:
            log(f"note: {len(bad)} probe(s) not ok ({bad[0]['status']}: {bad[0]['reason']}); "
                "their advice counts as the library default\n")
        default = probes[0]["default"]
        if not probes[0]["default_known"]:
            log("note: the profile records no library default (no recommendation defaults, no "
                f"{LIBRARY_EVIDENCE} evidence): scoring with the default taken as CMA off\n")
        oracle = pool_oracle(launches)
        sc = score(oracle["ratio"], default, [p["advice"] for p in probes])
        check: list[dict] = []
        if args.check_rounds > 0:
            # the advised candidates and the default, then two contrasts that route the most
            # sizes differently (CMA everywhere, CMA nowhere) so the check always tests both
            # paths even when every probe agrees with the oracle
            cands = list(dict.fromkeys([sc["minimax"], *(p["advice"] for p in probes), default,
                                        sc["sizes"][0], OFF]))
            csz = check_sizes(cands, sc["minimax"], sc["sizes"], oracle["ratio"])
            log(f"direct check: {len(cands)} settings x {args.check_rounds} rounds at "
                f"{', '.join(map(fmt_bytes, csz))} ...\n")
            check = direct_check(cands, sc["minimax"], csz, oracle["ratio"], args.check_rounds,
                                 CHECK_TARGET_S)
        fig = {"machine": _machine(), "quick": args.quick, "probes": probes,
               "oracle": {"launches": len(launches), "sizes": sc["sizes"],
                          "target_s": args.oracle_target_s, **oracle},
               "score": sc, "check": check, "check_rounds": args.check_rounds,
               "check_verdict": check_verdicts(check),
               "targets": {"same_advice_tolerance": SAME_ADVICE_TOLERANCE,
                           "minimax_ratio_target": MINIMAX_RATIO_TARGET},
               "elapsed_s": time.monotonic() - t0}
        if args.out:
            (out / "figures.json").write_text(json.dumps(_jsonable(fig), indent=1) + "\n")
            (out / "oracle-launches.json").write_text(json.dumps(launches) + "\n")
        if args.json:
            sys.stdout.write(json.dumps(_jsonable(fig), indent=1) + "\n")
        else:
            print_report(fig)
        return 0
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
