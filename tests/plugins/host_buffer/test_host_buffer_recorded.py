"""Pure logic of the host-buffer plugin on real data recorded on the build machine (KVM guest,
2 cores, glibc 2.36, THP madvise, PoCL 3.0; see tests/data/host_buffer/README.md)."""

from __future__ import annotations

import json
import re

import pytest
from support import DATA

from advisor.libraries.glibc_tunables import Tunable, parse_list_tunables
from advisor.models import Evidence, Facts, KernelFacts
from advisor_host_buffer.cliff import Cliff, ab_stability, choose_nt_threshold, sweep_gain
from advisor_host_buffer import evidence
from advisor_host_buffer import thp
from advisor_host_buffer import zero_page
from advisor_host_buffer.knobs import knobs
from advisor_host_buffer.tunables import merged_tunables
from advisor_host_buffer.recommend import recommend
from advisor_host_buffer.workers.memory import parse_numa_maps

HB = DATA / "host_buffer"


def _load(name: str) -> tuple[Facts, list[Evidence]]:
    raw = json.loads((HB / name).read_text())
    return Facts.model_validate(raw["facts"]), [Evidence.model_validate(e) for e in raw["evidence"]]


@pytest.fixture(scope="module")
def probe():
    return _load("probe-default-kvm.json")


def _ids(items):
    return {x.id: x for x in items}


def test_recorded_default_probe_gives_all_measured_advice(probe):
    """The default probe recorded on the build machine: the cliff, both THP items, hygiene."""
    facts, ev = probe
    advice = recommend(ev, facts)
    assert {"glibc-non-temporal-threshold", "host-pool-hugepages", "glibc-malloc-hugetlb"} <= \
        set(_ids(advice.recommendations))
    assert {"zero-page-inflation", "zero-page-inflation-opencl", "thp-madvise", "memcpy-cliff"} <= \
        set(_ids(advice.findings))
    # the THP mode is recorded next to every bandwidth result
    mode = thp.thp_mode(facts.memory.thp_enabled)
    for e in ev:
        if any(s.unit == evidence.BPS for s in e.series):
            assert e.conditions.thp_enabled == mode, e.id


def test_recorded_zero_page_memcpy_and_opencl_inflation(probe):
    facts, ev = probe
    advice = recommend(ev, facts)
    f = _ids(advice.findings)
    for ev_id, fid, key in ((evidence.EV_ZERO_MEMCPY, "zero-page-inflation", "copy"),
                            (evidence.EV_ZERO_OPENCL, "zero-page-inflation-opencl", "h2d")):
        e = Evidence.find(ev, ev_id)
        lo, hi = e.values[f"{key}.inflation_ci_low"], e.values[f"{key}.inflation_ci_high"]
        assert lo > 1.0  # measured here: the CI excludes 1
        assert f[fid].severity == "warning"
        assert f"95% CI {lo:.2f}-{hi:.2f}" in f[fid].message


def test_recorded_artefacts_never_stored_as_bandwidth(probe):
    _, ev = probe
    o = Evidence.find(ev, evidence.EV_ZERO_OPENCL)
    mapped = o.series_named("h2d").point("mapped")
    assert "ceiling" in mapped.artefact and mapped.samples == [] and mapped.stats is None
    refs = evidence.reference_bandwidths(ev)
    assert refs
    for name, (value, lower, upper, unit) in refs.items():
        assert "untouched" not in name and "mapped" not in name
        assert unit == "bytes/s" and lower <= value <= upper
    # labelling again against the recorded ceiling changes nothing (idempotent)
    again = zero_page.label_artefacts(o, float(o.values["ceiling_bytes_per_s"]))
    assert [p.artefact for s in again.series for p in s.points] == \
        [p.artefact for s in o.series for p in s.points]


def test_recorded_above_ceiling_point_is_labelled(probe):
    """A real point above 3x the ceiling: the recorded untouched memcpy figure judged against
    a ceiling a third of its size (as clpeak would with a slower real peak)."""
    _, ev = probe
    z = Evidence.find(ev, evidence.EV_ZERO_MEMCPY)
    u = (z.series[0]).point(evidence.UNTOUCHED).model_copy(update={"artefact": None, "label": "x"})
    e = z.model_copy(update={"series": [z.series[0].model_copy(update={"points": [u]})]})
    ceiling = u.stats.median / (evidence.CLPEAK_CEILING_FACTOR + 1)
    (p,) = zero_page.label_artefacts(e, ceiling).series[0].points
    assert p.artefact and "ceiling" in p.artefact and p.stats is None


def test_recorded_first_touch_and_host_pool_advice(probe):
    facts, ev = probe
    advice = recommend(ev, facts)
    ft = Evidence.find(ev, evidence.EV_FIRST_TOUCH)
    rec = _ids(advice.recommendations)["host-pool-hugepages"]
    assert f"{ft.values['huge_speedup']:.2f}x" in rec.rationale
    assert {s.kind for s in rec.settings} == {"config"}
    assert _ids(advice.findings)["thp-madvise"].message.count("s/GiB") == 2


def test_recorded_malloc_hugetlb_gated_by_glibc_and_thp(probe):
    facts, ev = probe
    rec = _ids(recommend(ev, facts).recommendations)["glibc-malloc-hugetlb"]
    (s,) = rec.settings
    assert (s.name, s.value, s.separator, s.versions) == (
        "GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", ":", ">=2.35")
    old = facts.model_copy(update={"kernel": KernelFacts(glibc_version="2.34")})
    assert "glibc-malloc-hugetlb" not in _ids(recommend(ev, old).recommendations)
    never = facts.model_copy(update={"memory": facts.memory.model_copy(update={"thp_enabled": "never"})})
    thp_recs = {"host-pool-hugepages", "glibc-malloc-hugetlb"}
    assert not thp_recs & set(_ids(recommend(ev, never).recommendations))


def test_list_tunables_parse_recorded():
    text = (HB / "list-tunables-glibc2.36-kvm.txt").read_text()
    t = parse_list_tunables(text)
    line = next(l for l in text.splitlines() if l.startswith("glibc.cpu.x86_non_temporal_threshold:"))
    val, lo, hi = re.findall(r"0x[0-9a-f]+", line)
    assert t["glibc.cpu.x86_non_temporal_threshold"] == Tunable(
        "glibc.cpu.x86_non_temporal_threshold", int(val, 16), int(lo, 16), int(hi, 16), val)
    assert t["glibc.malloc.hugetlb"].value == 0
    # a tuned threshold is never one glibc ignores (it takes only values above the minimum)
    cliff = Cliff(start_bytes=int(lo, 16), end_bytes=int(lo, 16), last_fast_bytes=None,
                    plateau_bps=1.0, depth=1.0)
    assert choose_nt_threshold(cliff, minimum=int(lo, 16)) > int(lo, 16)


def test_numa_maps_parse_recorded():
    text = (HB / "numa_maps-1node.txt").read_text()
    addr = int(re.search(r"address: (0x[0-9a-f]+)", text).group(1), 16)
    nbytes = int(re.search(r"\((\d+) MiB", text).group(1)) << 20
    pages = parse_numa_maps(text, addr)
    line = next(l for l in text.splitlines() if l.startswith(f"{addr:x} "))
    page_kb = int(re.search(r"kernelpagesize_kB=(\d+)", line).group(1))
    assert sum(pages.values()) * page_kb * 1024 == nbytes


def test_glibc_tunables_merge_keeps_other_items():
    merged = merged_tunables("glibc.malloc.check=3:glibc.cpu.x86_non_temporal_threshold=0x1",
                             "glibc.cpu.x86_non_temporal_threshold", "0x4000000")
    assert merged.split(":") == ["glibc.malloc.check=3", "glibc.cpu.x86_non_temporal_threshold=0x4000000"]
    assert merged_tunables(None, "glibc.malloc.hugetlb", "1") == "glibc.malloc.hugetlb=1"


def test_knob_records():
    ks = {k.name: k for k in knobs()}
    assert ks["glibc.cpu.x86_non_temporal_threshold"].valid_for("2.36")
    assert not ks["glibc.cpu.x86_non_temporal_threshold"].valid_for("2.27")
    assert ks["glibc.tune.x86_non_temporal_threshold"].renamed_to == "glibc.cpu.x86_non_temporal_threshold"
    assert not ks["glibc.malloc.hugetlb"].valid_for("2.34")
    glibc = [k for k in ks.values() if k.library == "glibc"]
    assert all(k.separator == ":" and "manual" in k.source for k in glibc)
    # the host-pool recommendation's config settings are declared too (emit writes only
    # declared names); they are set in the program's code, not the environment
    pool = [k for k in ks.values() if k.library == "host-pool"]
    assert {k.name for k in pool} == {"chunk_alignment", "chunk_size_multiple", "madvise"}
    assert all(k.kind == "config" and "transhuge" in k.source for k in pool)
    assert len(glibc) + len(pool) == len(ks)


# --------------------------------------------------------------------------- memcpy cliff

NT = "glibc.cpu.x86_non_temporal_threshold"


def _nt_advice(advice):
    return [r for r in advice.recommendations if r.id == "glibc-non-temporal-threshold"]


def test_recorded_sweep_with_cliff_gives_threshold_advice():
    facts, ev = _load("sweep-cliff-kvm.json")
    sweep = Evidence.find(ev, evidence.EV_SWEEP)
    tun = Evidence.find(ev, evidence.EV_TUNABLES)
    (rec,) = _nt_advice(recommend(ev, facts))
    (s,) = rec.settings
    tuned = int(sweep.values["nt_threshold.tuned_bytes"])
    current = int(tun.values[f"{NT}.value"])
    assert s.value == f"{NT}={hex(tuned)}" and s.default == f"{NT}={hex(current)}"
    assert (s.name, s.separator, s.kind, s.versions) == ("GLIBC_TUNABLES", ":", "env", ">=2.28")
    # the tuned threshold comes from the measured cliff, below glibc's current threshold
    assert int(sweep.values["cliff.start_bytes"]) >= tuned and tuned < current
    gain = sweep_gain(sweep, noise_floor=0.0)
    # only sizes whose glibc code path the setting changes count: [tuned, current)
    assert gain.gains and all(tuned <= n < current for n in gain.gains)
    r, lo, hi = gain.gains[gain.best]
    assert lo > 1 + float(sweep.values[f"gain.{gain.best}.noise_floor"])
    assert f"{r:.2f}x faster (95% CI {lo:.2f}-{hi:.2f})" in rec.rationale
    assert rec.verifiable


def test_recorded_sweep_without_cliff_gives_no_advice():
    facts, ev = _load("sweep-no-cliff-kvm.json")
    sweep = Evidence.find(ev, evidence.EV_SWEEP)
    assert "cliff.start_bytes" not in sweep.values
    advice = recommend(ev, facts)
    assert not _nt_advice(advice)
    assert "memcpy-no-cliff" in _ids(advice.findings)


@pytest.mark.parametrize("glibc, name, versions", [
    ("2.27", "glibc.tune.x86_non_temporal_threshold", ">=2.26,<2.28"),
    ("2.25", None, None),
])
def test_recorded_sweep_tunable_name_follows_glibc_version(glibc, name, versions):
    facts, ev = _load("sweep-cliff-kvm.json")
    facts = facts.model_copy(update={"kernel": KernelFacts(glibc_version=glibc)})
    recs = _nt_advice(recommend(ev, facts))
    if name is None:
        assert not recs
    else:
        (s,) = recs[0].settings
        assert s.value.startswith(f"{name}=") and s.versions == versions


def test_recorded_sweep_tunable_ignored_by_glibc_gives_no_advice():
    """Kind of fault: a tuned value glibc did not take (ld.so shows another) is never advised."""
    facts, ev = _load("sweep-cliff-kvm.json")
    sweep = Evidence.find(ev, evidence.EV_SWEEP)
    vals = dict(sweep.values, **{"nt_threshold.tuned_effective_bytes":
                                 int(Evidence.find(ev, evidence.EV_TUNABLES).values[f"{NT}.value"])})
    ev = [e if e.id != evidence.EV_SWEEP else sweep.model_copy(update={"values": vals}) for e in ev]
    advice = recommend(ev, facts)
    assert not _nt_advice(advice)
    assert "did not take" in _ids(advice.findings)["memcpy-cliff"].message


def test_recorded_cliff_from_a_quick_probe_is_a_finding_not_advice():
    """A --quick probe stops after the first sweep: the recorded cliff with its first sweep only
    (no tuned runs, no gains) gives the finding naming the candidate and the full probe, never
    a setting measured by nobody."""
    facts, ev = _load("sweep-cliff-kvm.json")
    sweep = Evidence.find(ev, evidence.EV_SWEEP)
    vals = {k: v for k, v in sweep.values.items()
            if not k.startswith(("gain.", "interleave.", "aa_noise_floor.", "followup"))}
    vals["ab_skipped"] = "quick"
    first = [s for s in sweep.series if s.name == "default"]
    ev = [e if e.id != evidence.EV_SWEEP else sweep.model_copy(update={"values": vals, "series": first})
          for e in ev]
    advice = recommend(ev, facts)
    assert not _nt_advice(advice)
    msg = _ids(advice.findings)["memcpy-cliff"].message
    tuned = int(sweep.values["nt_threshold.tuned_bytes"])
    assert "--quick" in msg and hex(tuned) in msg and "full probe" in msg


def _rounds(gains: list, n: int = 8 << 20) -> tuple[dict, dict, dict]:
    """Constructed A/B rounds at one affected size: the default at 5 GB/s in every round, the
    tuned run at ``gains[i]`` times it in round ``i`` (a small deterministic spread inside each
    run); values as the measurement writes them for the pooled data."""
    import numpy as np

    from advisor.measure import compare

    d = {n: [[5e9 * (1 + 0.001 * (j % 3 - 1)) for j in range(9)] for _ in gains]}
    t = {n: [[5e9 * g * (1 + 0.001 * (j % 3 - 1)) for j in range(9)] for g in gains]}
    c = compare([x for r in d[n] for x in r], [x for r in t[n] for x in r],
                higher_is_better=True, noise_floor=0.05)
    assert np.isfinite(c.ratio)
    values = {f"gain.{n}": c.ratio, f"gain.{n}.ci_low": c.ci_low, f"gain.{n}.ci_high": c.ci_high,
              f"gain.{n}.noise_floor": 0.05, f"gain.{n}.affected": True}
    return values, d, t


def test_the_nt_gain_is_stable_only_when_every_round_shows_it():
    """Issue 25 item 1 for host-buffer: the verdict's stability over resamples of the A/B
    rounds.  A 1.3x gain in each of 4 rounds is stable; a gain in 2 of 4 rounds (the other two
    level) is not, though the pooled CI may clear the floor."""
    assert ab_stability(*_rounds([1.3, 1.3, 1.3, 1.3])) == 1.0
    mixed = ab_stability(*_rounds([1.3, 1.0, 1.3, 1.0]))
    assert mixed is not None and mixed < 0.8
    assert ab_stability(*_rounds([1.3])) is None  # one round: nothing to resample


def test_an_unstable_nt_gain_is_not_advised():
    """The recorded cliff, its A/B marked unstable as the measurement would (``nt.stability``
    below the policy): no tunable is advised, and the finding says why and what to do."""
    facts, ev = _load("sweep-cliff-kvm.json")
    sweep = Evidence.find(ev, evidence.EV_SWEEP)
    unstable = sweep.model_copy(update={"values": {**sweep.values, "nt.stability": 0.55,
                                                   "interleave.rounds": 4,
                                                   "nt.stopped": "budget"}})
    adv = recommend([unstable if e is sweep else e for e in ev], facts)
    assert not _nt_advice(adv)
    f = next(f for f in adv.findings if f.id == "memcpy-cliff")
    assert "only 55% of resamples" in f.message and "budget" in f.message
    stable = sweep.model_copy(update={"values": {**sweep.values, "nt.stability": 0.9,
                                                 "interleave.rounds": 3}})
    (rec,) = _nt_advice(recommend([stable if e is sweep else e for e in ev], facts))
    assert "Stability 0.90" in rec.rationale and rec.confidence == "high"


def test_resample_stability_of_a_decision():
    from advisor.measure import resample_stability

    assert resample_stability(lambda idx: "same", 3) == 1.0
    assert resample_stability(lambda idx: "x", 1) is None
    # the decision follows round 0 alone: a resample keeps it when it draws round 0
    share = resample_stability(lambda idx: 0 in idx, 4, n=400)
    assert 0.6 < share < 0.8  # 1 - (3/4)**4 = 0.68
    with pytest.raises(ValueError):
        resample_stability(lambda idx: 0, 3, n=0)
