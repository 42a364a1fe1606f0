"""advisor verify, joint environment (issue 13 item 4): every plugin's env settings together.

Hermetic: two small probes registered through a plugin manager built here.  ``malloc-demo``'s
advice (``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``) helps alone and hurts when ``mpi-demo``'s
``MPIR_CVAR_DEMO=1`` is in the same environment: its verifier derives deterministic samples from
the environment it is handed and judges them with ``advisor.measure.compare``, so the logic
(environment building, reversal, finding, storage, exit code) is tested without timing anything.
"""

from __future__ import annotations

import json
import types

import pytest
from support import BUILTIN_LIBRARIES, StubProbe, sample_profile

from advisor import hookimpl
from advisor.models import Evidence, PluginResult, Recommendation, Setting, Verification
from advisor.plugins import collect, make_plugin_manager
from advisor.report.verify import joint_rows, to_json
from advisor.baseline import Baseline
from advisor.joint import (JOINT_SUFFIX, REVERSAL_ID, has_reversal, joint_environment,
                           redo_command, reversal_findings)
from advisor.verify import has_regression, verify_profile

HUGETLB = "glibc.malloc.hugetlb=1"
NT = "glibc.cpu.x86_non_temporal_threshold=0x4000000"
#: Synthetic seconds per call: baseline, advice alone, advice with the other plugin's setting.
BASE_S, ALONE_S, JOINT_S = 1.0, 0.8, 1.25
#: Spread of the synthetic samples (relative), well inside the gaps between the levels above.
SPREAD = 0.01
N = 20


def _samples(level: float) -> list[float]:
    return [level * (1 + SPREAD * ((i % 5) - 2) / 2) for i in range(N)]


class DemoProbe(StubProbe):
    """A probe whose verify judges synthetic timings derived from the environment it gets."""

    description = "joint verification demo"
    joint_verify = True

    def __init__(self, name: str, hurts_with: str | None = None, flips: bool = False):
        self.name = name
        self.hurts_with = hurts_with
        self.flips = flips
        self.calls: list[dict] = []


    def verify(self, rec, ctx):
        from advisor.measure import compare

        advised = dict(ctx.joint.advised) if ctx.joint is not None else {
            s.name: str(s.value) for s in rec.settings if s.kind == "env"}
        self.calls.append({"joint": ctx.joint is not None, "advised": advised,
                           "baseline": dict(ctx.joint.baseline) if ctx.joint else {}})
        interacts = self.hurts_with is not None and advised.get(self.hurts_with) is not None
        good, bad = (JOINT_S, ALONE_S) if self.flips else (ALONE_S, JOINT_S)
        level = bad if interacts else good
        cmp = compare(_samples(BASE_S), _samples(level), noise_floor=SPREAD, seed=ctx.seed)
        verdict = {"better": "confirmed", "worse": "regression",
                   "indistinguishable": "no-effect"}[cmp.verdict]
        ev = Evidence(id=f"{self.name}-verify", values={**cmp.as_values(),
                                                         "decided_by": "demo timing"})
        return Verification(recommendation=rec.id, verdict=verdict, ratio=cmp.ratio,
                            ci_low=cmp.ci_low, ci_high=cmp.ci_high, noise_floor=cmp.noise_floor,
                            evidence=[ev])


def _registry(*probes):
    plugin = types.SimpleNamespace()

    @hookimpl
    def advisor_register_probes(register):
        for p in probes:
            register(p)

    plugin.advisor_register_probes = advisor_register_probes
    return collect(make_plugin_manager(entry_points=False, plugins=[("joint-demo", plugin)]))


def _rec(rid, name, value, *, kind="env", separator=None, verifiable=True, is_default=False):
    return Recommendation(id=rid, title=f"{rid} title", rationale="demo", confidence="high",
                          verifiable=verifiable, settings=[
                              Setting(library="demo", name=name, value=value, kind=kind,
                                      type="list" if separator else "str", separator=separator,
                                      is_default=is_default)])


def _profile(**recs_by_probe):
    base = sample_profile()
    results = [PluginResult(plugin="joint-demo", probe=probe, status="ok", duration_s=1.0,
                            recommendations=recs)
               for probe, recs in recs_by_probe.items()]
    return base.model_copy(update={"results": results})


def _two_plugins():
    return _profile(**{
        "malloc-demo": [_rec("hugetlb", "GLIBC_TUNABLES", HUGETLB, separator=":")],
        "mpi-demo": [_rec("cvar", "MPIR_CVAR_DEMO", "1")]})


def test_joint_environment_is_what_emit_writes():
    prof = _profile(**{
        "malloc-demo": [_rec("hugetlb", "GLIBC_TUNABLES", HUGETLB, separator=":"),
                        _rec("nt", "GLIBC_TUNABLES", NT, separator=":"),
                        _rec("pool", "pool_alignment", 2097152, kind="config")],
        "mpi-demo": [_rec("cvar", "MPIR_CVAR_DEMO", "1"),
                     _rec("kept", "MPIR_CVAR_KEPT", "0", is_default=True)]})
    builtin = collect(make_plugin_manager(entry_points=False))
    env = joint_environment(prof, builtin, environ={"GLIBC_TUNABLES": "glibc.malloc.perturb=1"})
    # one list variable with both items (emit's merge), no config or default-confirming setting
    assert dict(env.advised) == {"GLIBC_TUNABLES": f"{HUGETLB}:{NT}", "MPIR_CVAR_DEMO": "1"}
    assert dict(env.baseline) == {"GLIBC_TUNABLES": None, "MPIR_CVAR_DEMO": None}
    assert env.sources["GLIBC_TUNABLES"] == ("malloc-demo/hugetlb", "malloc-demo/nt")
    # against the environment: appended to the current value, as sourcing the file does
    now = joint_environment(prof, builtin, against=Baseline.ENV,
                            environ={"GLIBC_TUNABLES": "glibc.malloc.perturb=1"})
    assert now.advised["GLIBC_TUNABLES"] == f"glibc.malloc.perturb=1:{HUGETLB}:{NT}"
    assert now.baseline == {"GLIBC_TUNABLES": "glibc.malloc.perturb=1", "MPIR_CVAR_DEMO": None}
    # the same variables emit's env format writes
    from advisor.specs.selection import EmitOptions
    from advisor.emit import render

    reg = collect(make_plugin_manager(entry_points=False, plugins=[
        ("builtin", __import__("advisor.emit.builtin", fromlist=["x"]))]))
    text = render(prof, "env", reg, EmitOptions(comments=False))
    for name in env.advised:
        assert name in text
    code = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    assert "MPIR_CVAR_KEPT" not in code and "pool_alignment" not in code  # named only as left out


def test_reversal_confirmed_alone_regression_jointly():
    malloc, mpi = DemoProbe("malloc-demo", hurts_with="MPIR_CVAR_DEMO"), DemoProbe("mpi-demo")
    reg = _registry(malloc, mpi)
    prof = _two_plugins()
    updated, out = verify_profile(prof, reg.probes, facts=prof.facts, time_budget_s=30,
                                  joint=True, environ={}, libraries=BUILTIN_LIBRARIES)
    by = {(o.probe, o.scope): o for o in out}
    alone, joint = by[("malloc-demo", "alone")], by[("malloc-demo", "joint")]
    assert alone.verdict == "confirmed" and alone.verification.ci_low > 1
    assert joint.verdict == "regression" and joint.verification.ci_high < 1
    # the joint measurement was handed every plugin's settings, and the defaults as baseline
    jcall = next(c for c in malloc.calls if c["joint"])
    assert jcall["advised"] == {"GLIBC_TUNABLES": HUGETLB, "MPIR_CVAR_DEMO": "1"}
    assert jcall["baseline"] == {"GLIBC_TUNABLES": None, "MPIR_CVAR_DEMO": None}
    # the other plugin's verdict does not reverse
    assert by[("mpi-demo", "alone")].verdict == by[("mpi-demo", "joint")].verdict == "confirmed"
    assert has_reversal(out) and has_regression(out)
    # the finding names both settings' plugins and the re-probe command under the others' env
    found = reversal_findings(updated, out)
    assert len(found) == 1
    f = found[0]
    assert f.id == REVERSAL_ID and f.severity == "error"
    assert f.message.startswith("malloc-demo/hugetlb:") and "mpi-demo/cvar" in f.message
    assert "MPIR_CVAR_DEMO=1 advisor probe --plugin malloc-demo" in f.remedy
    assert redo_command(prof, collect(make_plugin_manager(entry_points=False)), "malloc-demo",
                        "hugetlb") in f.remedy
    # stored: the joint verdict says the advice is to be redone; the finding sits with the probe
    stored = {v.recommendation: v for v in updated.verifications}
    jv = stored[f"malloc-demo:hugetlb{JOINT_SUFFIX}"]
    assert jv.verdict == "regression" and "REVERSED" in jv.reason and REVERSAL_ID in jv.reason
    assert stored["malloc-demo:hugetlb"].verdict == "confirmed"
    res = {r.probe: r for r in updated.results}
    assert [x.id for x in res["malloc-demo"].findings] == [REVERSAL_ID]
    assert res["mpi-demo"].findings == []
    # table and JSON
    rows = joint_rows(out)
    assert [r[0] for r in rows] == ["malloc-demo", "mpi-demo"]
    assert rows[0][1] == "hugetlb: demo timing" and rows[0][2] == "regression"
    data = json.loads(to_json(out, found))
    assert {d["scope"] for d in data["joint"]} == {"joint"}
    assert [d["id"] for d in data["findings"]] == [REVERSAL_ID]

    # re-verified once the interaction is gone: the stale finding is removed, not duplicated
    mpi_fixed = _profile(**{"malloc-demo": [_rec("hugetlb", "GLIBC_TUNABLES", HUGETLB,
                                                 separator=":")],
                            "mpi-demo": [_rec("cvar", "MPIR_CVAR_OTHER", "1")]})
    again = updated.model_copy(update={"results": [
        r.model_copy(update={"recommendations": n.recommendations})
        for r, n in zip(updated.results, mpi_fixed.results)]})
    redone, out2 = verify_profile(again, reg.probes, facts=prof.facts, time_budget_s=30,
                                  joint=True, environ={}, libraries=BUILTIN_LIBRARIES)
    assert not has_reversal(out2) and reversal_findings(redone) == []
    assert len(redone.verifications) == 4


def test_reversal_the_other_way_round():
    malloc = DemoProbe("malloc-demo", hurts_with="MPIR_CVAR_DEMO", flips=True)
    reg = _registry(malloc, DemoProbe("mpi-demo"))
    prof = _two_plugins()
    _, out = verify_profile(prof, reg.probes, facts=prof.facts, time_budget_s=30, joint=True,
                            environ={}, libraries=BUILTIN_LIBRARIES)
    by = {(o.probe, o.scope): o.verdict for o in out}
    assert (by[("malloc-demo", "alone")], by[("malloc-demo", "joint")]) == (
        "regression", "confirmed")
    assert has_reversal(out)


def test_own_settings_only_reuses_the_alone_measurement():
    malloc = DemoProbe("malloc-demo", hurts_with="MPIR_CVAR_DEMO")
    reg = _registry(malloc)
    prof = _profile(**{"malloc-demo": [_rec("hugetlb", "GLIBC_TUNABLES", HUGETLB,
                                            separator=":")]})
    updated, out = verify_profile(prof, reg.probes, facts=prof.facts, time_budget_s=30,
                                  joint=True, environ={}, libraries=BUILTIN_LIBRARIES)
    assert len(malloc.calls) == 1 and not malloc.calls[0]["joint"]
    joint = [o for o in out if o.scope == "joint"]
    assert [o.verdict for o in joint] == ["confirmed"] and "only this recommendation" in joint[0].note
    assert not has_reversal(out)


def test_joint_not_measurable_reasons():
    class Legacy(DemoProbe):
        joint_verify = False

    legacy, mpi = Legacy("malloc-demo", hurts_with="MPIR_CVAR_DEMO"), DemoProbe("mpi-demo")
    prof = _profile(**{
        "malloc-demo": [_rec("hugetlb", "GLIBC_TUNABLES", HUGETLB, separator=":"),
                        _rec("pool", "pool_alignment", 2097152, kind="config"),
                        _rec("unverifiable", "MALLOC_DEMO", "1", verifiable=False)],
        "mpi-demo": [_rec("cvar", "MPIR_CVAR_DEMO", "1")]})
    _, out = verify_profile(prof, _registry(legacy, mpi).probes, facts=prof.facts,
                            time_budget_s=30, joint=True, environ={}, libraries=BUILTIN_LIBRARIES)
    joint = {o.recommendation: o for o in out if o.scope == "joint"}
    assert joint["hugetlb"].verdict == "not-measurable" and "joint_verify" in joint["hugetlb"].note
    assert joint["pool"].verdict == "not-measurable" and "config" in joint["pool"].note
    assert joint["unverifiable"].verdict == "not-measurable"
    assert all(not c["joint"] for c in legacy.calls)  # never handed an env it would ignore
    assert joint["cvar"].verdict == "confirmed"
    # alone only (--alone): no joint outcome at all
    _, alone = verify_profile(prof, _registry(legacy, mpi).probes, facts=prof.facts,
                              time_budget_s=30, environ={}, libraries=BUILTIN_LIBRARIES)
    assert {o.scope for o in alone} == {"alone"}


def test_cli_exits_1_on_a_reversal(tmp_path, advisor_home, monkeypatch):
    from typer.testing import CliRunner

    import advisor.cli as cli
    import advisor.cli.common as cli_common
    import advisor.facts as facts_mod
    from advisor.profile import load_profile
    from advisor.save import save_profile

    prof = _two_plugins()
    reg = _registry(DemoProbe("malloc-demo", hurts_with="MPIR_CVAR_DEMO"), DemoProbe("mpi-demo"))
    monkeypatch.setattr(cli_common, "load_registry", lambda *a, **k: reg)
    monkeypatch.setattr(facts_mod, "detect", lambda *a, **k: prof.facts)
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    monkeypatch.delenv("MPIR_CVAR_DEMO", raising=False)
    path = save_profile(prof, tmp_path / "p.toml")
    res = CliRunner().invoke(cli.app, ["verify", "--profile", str(path), "--json",
                                       "--time-budget", "30"])
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    assert [d["probe"] for d in data["joint"]] == ["malloc-demo", "mpi-demo"]
    assert [d["id"] for d in data["findings"]] == [REVERSAL_ID]
    assert "Joint verification" in res.stderr and REVERSAL_ID in res.stderr
    assert "advisor probe --plugin malloc-demo" in res.stderr
    stored = load_profile(path)
    assert [f.id for r in stored.results for f in r.findings] == [REVERSAL_ID]
    # --alone: the per-recommendation verdicts only, both confirmed: exit 0
    res = CliRunner().invoke(cli.app, ["verify", "--profile", str(path), "--json", "--alone",
                                       "--time-budget", "30"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["joint"] == []


def test_default_advice_names_the_reprobe_under_the_others():
    """An advice equal to the library default has advised == baseline for its own settings, so
    no A/B can test it under the other plugins' settings: the joint note names the re-probe."""
    prof = _profile(**{
        "malloc-demo": [_rec("hugetlb", "GLIBC_TUNABLES", HUGETLB, separator=":")],
        "mpi-demo": [_rec("keep", "MPIR_CVAR_DEMO", "8192", is_default=True)]})
    _, out = verify_profile(prof, _registry(DemoProbe("malloc-demo"), DemoProbe("mpi-demo")).probes,
                            facts=prof.facts, time_budget_s=30, joint=True, environ={},
                            libraries=BUILTIN_LIBRARIES)
    keep = next(o for o in out if o.scope == "joint" and o.recommendation == "keep")
    assert keep.verdict == "no-effect"
    assert keep.note.startswith("not measured jointly")
    assert "malloc-demo/hugetlb (GLIBC_TUNABLES)" in keep.note
    # the command is not a table cell (a table would fold it mid-token): its own field and line
    assert keep.redo.startswith(f"env GLIBC_TUNABLES={HUGETLB} advisor probe --plugin mpi-demo")
    assert keep.redo not in keep.note and keep.to_dict()["redo"] == keep.redo


@pytest.mark.parametrize("args, want", [([], "defaults"), (["--against", "env"], "env"),
                                        (["--against-env"], "env")])
def test_cli_passes_a_typed_baseline(tmp_path, advisor_home, monkeypatch, args, want):
    """``--against defaults|env`` (and the older ``--against-env``) reach verify as a
    ``Baseline``, converted once at the CLI."""
    from typer.testing import CliRunner

    import advisor.cli as cli
    import advisor.cli.common as cli_common
    import advisor.facts as facts_mod
    import advisor.verify as verify_mod
    from advisor.baseline import Baseline
    from advisor.save import save_profile

    prof = _two_plugins()
    seen = {}

    def fake_verify(profile, probes, **kw):
        seen["against"] = kw["against"]
        return profile, []

    monkeypatch.setattr(cli_common, "load_registry", lambda *a, **k: _registry(
        DemoProbe("malloc-demo"), DemoProbe("mpi-demo")))
    monkeypatch.setattr(facts_mod, "detect", lambda *a, **k: prof.facts)
    monkeypatch.setattr(verify_mod, "verify_profile", fake_verify)
    path = save_profile(prof, tmp_path / "p.toml")
    res = CliRunner().invoke(cli.app, ["verify", "--profile", str(path), *args])
    assert res.exit_code == 0, res.output
    assert seen["against"] is Baseline(want)
