"""The verdict of mpich-cma's ``verify``, pure: one test per message size and metric (latency,
bandwidth), combined with a controlled family-wise false-alarm rate
(``advisor.measure.family``).  Ratios are advised / baseline, > 1 better.

Two layouts of the ``cma-verify`` evidence (evidence value ``mode``):

* ``paired`` (the switch through MPI_T is trusted: ``verify.paired_thresholds``): each launch
  alternates advised and baseline thresholds in adjacent batches, round after round (worker
  ``paired --values ADVISED,BASELINE``).  Series ``<metric>:advised`` / ``<metric>:baseline``,
  one point per size and launch (label ``launch<k>``), one sample per round, index-aligned.

  - ratio and CI: the median of the per-round log ratios of every launch (``paired_ratio`` at
    the family level), the CI then widened to hold each launch's own median ratio: a launch
    in another machine state moves it, so the launch-to-launch variation is inside the CI
    (a bootstrap that resamples K <= 3 launches spans exactly their range);
  - A/A floor: adjacent batches of the *same* configuration in one launch are A/A pairs (the
    worker's order on off | off on | on off ... puts baseline rounds 2j, 2j+1 and advised
    rounds 2j+1, 2j+2 side by side); the floor is the largest ratio the 95 % CI of their
    median cannot rule out (``family.floor_from_ci``).  The two configurations' pairs are
    oriented oppositely (earlier/later vs later/earlier), so a cost of the switch itself cancels
    in the A/A median as it does in the A/B one.  It shrinks with more rounds, as the CI does.

* ``launches`` (no trusted switch: Cray MPICH, a joint environment with other variables,
  MPI_T unavailable): interleaved launches, one advised and one baseline per round (series as
  the sweep's, points labelled ``run<r>``).  A test's pairs are the rounds: the ratio of the two
  launches' medians, so the CI (``paired_ratio`` over rounds) resamples launches and holds
  their state changes; the floor is the A/A spread of each configuration's launch medians
  (``noise_floor_from_aa``, the larger).

Measured on this project's 2-core AMD VM (bench/bench_verify_aa.py prints the figures).
"""

from __future__ import annotations

from advisor.models import Evidence, Verification

from advisor_mpich_cma.evidence import BW, LAT

ADVISED, BASELINE = "advised", "baseline"
PAIRED, LAUNCHES = "paired", "launches"
#: Bootstrap seed: fixed, so the verdict of recorded evidence is reproducible.
SEED = 0


def _points(ev: Evidence, metric: str, config: str) -> dict[tuple[int, str], list[float]]:
    out: dict[tuple[int, str], list[float]] = {}
    for s in ev.series:
        if s.name == f"{metric}:{config}":
            for p in s.points:
                if p.x is not None and p.samples and not p.artefact:
                    out[(int(p.x), p.label or "")] = list(p.samples)
    return out


def _paired_test(label: str, adv: dict, base: dict, n: int, higher: bool, level: float):
    """The ``paired`` layout's test at size ``n`` (module docstring) and each launch's own
    median ratio; None without pairs."""
    from advisor.measure.family import Contrast
    from advisor.measure.pairs import paired_ratio

    launches = sorted(k for (x, k) in adv if x == n and (x, k) in base)
    a_all, b_all, aa1, aa2, own = [], [], [], [], []
    for k in launches:
        b, a = base[(n, k)], adv[(n, k)]
        r = min(len(a), len(b))
        if r == 0:
            continue
        b_all += b[:r]
        a_all += a[:r]
        own.append(paired_ratio(b[:r], a[:r], higher_is_better=higher, n_boot=1)[0])
        nb = r // 2  # baseline rounds (2j, 2j+1); advised rounds (2j+2, 2j+1): opposite order
        later = a[2:r:2]
        aa1 += b[0:2 * nb:2] + later
        aa2 += b[1:2 * nb:2] + a[1:1 + 2 * len(later):2]
    if not a_all:
        return None
    ratio, lo, hi = paired_ratio(b_all, a_all, higher_is_better=higher, level=level, seed=SEED)
    lo, hi = min([lo, *own]), max([hi, *own])
    floor = aa_floor(aa1, aa2, higher) if aa1 else 0.0
    return Contrast(label, ratio, lo, hi, floor), own


def aa_floor(a: list[float], a2: list[float], higher: bool) -> float:
    """The A/A floor of A/A pairs ``(a[i], a2[i])``: ``family.floor_from_ci`` of the 95 % CI
    of their median ratio (``paired_ratio``)."""
    from advisor.measure.family import floor_from_ci
    from advisor.measure.pairs import paired_ratio

    _, lo, hi = paired_ratio(a, a2, higher_is_better=higher, seed=SEED)
    return floor_from_ci(lo, hi)


def _launch_test(label: str, adv: dict, base: dict, n: int, higher: bool, level: float):
    """The ``launches`` layout's test at size ``n`` (``family.launch_contrast``: the rounds are
    the pairs) and each round's ratio; None without rounds."""
    from advisor.measure.family import launch_contrast

    rounds = sorted(k for (x, k) in adv if x == n and (x, k) in base)
    if not rounds:
        return None
    return launch_contrast(label, [base[(n, k)] for k in rounds], [adv[(n, k)] for k in rounds],
                           higher_is_better=higher, level=level, seed=SEED)


def decide(ev: Evidence, key: str) -> Verification:
    """The verification of recommendation ``key`` from ``cma-verify`` evidence of either
    layout: verdict, ratio / CI / floor of the deciding test (``family.family_verdict``),
    ``reason``; every test's figures go into the evidence values (``lat_ratio_<n>``,
    ``lat_ci_<n>``, ``lat_floor_<n>``, ``lat_verdict_<n>``, ``lat_launch_ratios_<n>``, the
    same with ``bw_``) with ``decided_by``, ``family_tests`` and ``family_level``."""
    from advisor.measure.family import family_level, family_verdict

    mode = ev.values.get("mode", PAIRED)
    one = _paired_test if mode == PAIRED else _launch_test
    data = {(m, c): _points(ev, m, c) for m in (LAT, BW) for c in (ADVISED, BASELINE)}
    sizes = sorted({x for (x, _) in data[(LAT, ADVISED)]} | {x for (x, _) in data[(BW, ADVISED)]})
    plan = [(n, m, short) for n in sizes for m, short in ((LAT, "lat"), (BW, "bw"))
            if any(x == n for (x, _) in data[(m, ADVISED)])]
    level = family_level(max(1, len(plan)))
    tests, values, split = [], dict(ev.values), ""
    for n, m, short in plan:
        got = one(f"{m} at {n} bytes", data[(m, ADVISED)], data[(m, BASELINE)], n, m == BW,
                  level)
        if got is None:
            continue
        t, own = got
        tests.append(t)
        worse = sum(x < 1 / (1 + t.noise_floor) for x in own)
        better = sum(x > 1 + t.noise_floor for x in own)
        if worse and better and not split:
            split = (f"; the launches disagree at {t.label}: {worse} of {len(own)} below "
                     f"and {better} above the A/A band (launch-to-launch variation, e.g. the "
                     "machine's copy state: background.md section 4)")
        values.update({f"{short}_ratio_{n}": t.ratio,
                       f"{short}_ci_{n}": f"{t.ci_low:.4g}..{t.ci_high:.4g}",
                       f"{short}_floor_{n}": t.noise_floor,
                       f"{short}_verdict_{n}": t.decision,
                       f"{short}_launch_ratios_{n}": ",".join(f"{x:.4g}" for x in own)})
    verdict, t, reason = family_verdict(tests, level)
    reason += split
    values.update({"family_tests": len(tests), "family_level": level})
    if t is not None:
        values["decided_by"] = t.label
    ev = ev.model_copy(update={"values": values})
    if t is None:
        return Verification(recommendation=key, verdict="not-measurable", reason=reason,
                            evidence=[ev])
    return Verification(recommendation=key, verdict=verdict, ratio=t.ratio, ci_low=t.ci_low,
                        ci_high=t.ci_high, noise_floor=t.noise_floor, reason=reason,
                        evidence=[ev])


def with_loss(ev: Evidence, loss: float, config: str = ADVISED) -> Evidence:
    """``ev`` with a known loss planted in ``config``'s samples: latencies x (1 + loss),
    bandwidths / (1 + loss), so every true ratio advised/baseline becomes 1/(1 + loss)
    (bench/bench_verify_aa.py: the detection rate of a 10 % regression on real A/A data)."""
    series = []
    for s in ev.series:
        if s.name.endswith(f":{config}"):
            f = (1 + loss) if s.name.startswith(LAT) else 1 / (1 + loss)
            s = s.model_copy(update={"points": [p.model_copy(update={
                "samples": [v * f for v in p.samples]}) for p in s.points]})
        series.append(s)
    return ev.model_copy(update={"series": series})
