"""The plugin host: fresh managers, contract checks, fault isolation, selection."""

from __future__ import annotations

import ast
import inspect
import re
import types

import pytest

from advisor import hookimpl, hookspecs
from advisor.knobs import Knob
from advisor.plugins import collect, make_plugin_manager
from support import REPO, StubProbe


class _Probe(StubProbe):
    def __init__(self, name):
        self.name = name
        self.description = name



def _issues(reg):
    """Issues of the test's own plugins (the core's hook modules are checked elsewhere)."""
    return [i for i in reg.issues if not i.plugin.startswith("advisor.")]


def _plugin(**hooks):
    mod = types.SimpleNamespace()
    for name, fn in hooks.items():
        setattr(mod, name, hookimpl(fn))
    return mod


def test_fresh_manager_has_only_what_is_given():
    good = _plugin(advisor_register_probes=lambda register: register(_Probe("alpha")))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("good", good)]))
    assert list(reg.probes) == ["alpha"]
    assert reg.plugin_of("probe", "alpha") == "good"
    # the built-in emitters are registered through the same hook
    assert {"env", "toml", "json"} <= set(reg.emitters)
    reg2 = collect(make_plugin_manager(entry_points=False))
    assert reg2.probes == {}


def test_hook_that_raises_loses_only_its_own_contributions():
    def boom(register):
        register(_Probe("half"))
        raise RuntimeError("broken hook")

    bad = _plugin(advisor_register_probes=boom)
    good = _plugin(advisor_register_probes=lambda register: register(_Probe("alpha")))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("bad", bad), ("good", good)]))
    assert list(reg.probes) == ["alpha"]
    assert [(i.plugin, i.stage) for i in _issues(reg)] == [("bad", "advisor_register_probes")]
    assert "broken hook" in _issues(reg)[0].error


@pytest.mark.parametrize("thing, message", [
    (object(), "is not a probe"),
    (_Probe("Bad Name"), "must match"),
])
def test_contract_violations_are_reported(thing, message):
    bad = _plugin(advisor_register_probes=lambda register: register(thing))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("bad", bad)]))
    assert reg.probes == {}
    assert message in _issues(reg)[0].error


@pytest.mark.parametrize("kinds", ["env", ["env", "cfg"]])
def test_emitter_kinds_must_be_setting_kinds(kinds):
    bad = _plugin(advisor_register_emitters=lambda register: register(
        "x", lambda p, o: "", kinds=kinds))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("bad", bad)]))
    assert "x" not in reg.emitters and "kinds" in _issues(reg)[0].error


def test_setting_kinds_agree_with_the_schema():
    from typing import get_args

    from advisor.models import Setting
    from advisor.plugins import SETTING_KINDS

    assert get_args(Setting.model_fields["kind"].annotation) == SETTING_KINDS
    reg = collect(make_plugin_manager(entry_points=False))
    assert reg.emitters["env"].kinds == ("env",) and reg.emitters["toml"].kinds == SETTING_KINDS


def test_duplicate_probe_and_bad_knob_are_reported():
    a = _plugin(advisor_register_probes=lambda register: register(_Probe("same")))
    b = _plugin(advisor_register_probes=lambda register: register(_Probe("same")),
                advisor_register_knobs=lambda register: register({"name": "X"}))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("a", a), ("b", b)]))
    assert reg.plugin_of("probe", "same") == "a"
    errors = {i.stage: i.error for i in reg.issues if i.plugin == "b"}
    assert "already registered" in errors["advisor_register_probes"]
    assert "Knob" in errors["advisor_register_knobs"]


def test_knobs_and_fact_detectors_are_collected():
    knob = Knob(library="demo", name="DEMO_X", type="int", source="test")
    p = _plugin(advisor_register_knobs=lambda register: register(knob),
                advisor_register_facts=lambda register: register("demo", lambda: {"x": 1}))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("p", p)]))
    assert reg.knobs == [knob]
    assert reg.fact_detectors["demo"]() == {"x": 1}


def test_disable_by_environment(monkeypatch):
    monkeypatch.setenv("ADVISOR_DISABLE_PLUGINS", "good, other")
    good = _plugin(advisor_register_probes=lambda register: register(_Probe("alpha")))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("good", good)]))
    assert reg.probes == {}


def test_probe_selection():
    p = _plugin(advisor_register_probes=lambda register: [register(_Probe(n)) for n in "abc"])
    pm = make_plugin_manager(entry_points=False, plugins=[("p", p)])
    assert list(collect(pm, only_probes=["b"]).probes) == ["b"]
    assert sorted(collect(pm, skip_probes=["b"]).probes) == ["a", "c"]


def test_installed_entry_points_include_builtins_and_skip_broken():
    reg = collect(make_plugin_manager())
    assert {"mpich-cma", "host-buffer", "memory-pool-host", "memory-pool-device"} <= set(reg.probes)
    broken = [i for i in reg.issues if i.plugin == "example-broken"]
    if "example-broken" in reg.plugins:  # installed by the test set-up (make test)
        assert broken and broken[0].stage == "import"


def test_core_never_imports_a_plugin():
    plugin_modules = {p.name for p in (REPO / "plugins").iterdir() if p.is_dir()}
    assert plugin_modules
    offenders = []
    for path in (REPO / "advisor").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                top = n.split(".")[0]
                if top in plugin_modules or top == "plugins":
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno} imports {n}")
    assert not offenders, offenders


def test_every_hook_is_documented_as_a_contract():
    doc = (REPO / "docs" / "plugins.md").read_text()
    hooks = [n for n, f in inspect.getmembers(hookspecs, inspect.isfunction)
             if n.startswith("advisor_")]
    assert len(hooks) == 5  # probes, emitters, knobs, facts, libraries
    for name in hooks:
        assert re.search(rf"^## {name}$", doc, re.M), f"docs/plugins.md lacks a section for {name}"
        section = doc.split(f"## {name}", 1)[1].split("\n## ", 1)[0]
        for word in ("register", "Errors", "Called by"):
            assert word in section, f"{name}: section lacks {word!r}"
        spec_doc = getattr(hookspecs, name).__doc__
        for word in (":param register:", ":return:", "Called by"):
            assert word in spec_doc, f"hookspec {name} docstring lacks {word!r}"


def test_registry_entries_carry_their_plugin():
    knob = Knob(library="demo", name="DEMO_X", type="int", source="test")
    p = _plugin(advisor_register_probes=lambda register: register(_Probe("alpha")),
                advisor_register_knobs=lambda register: register(knob),
                advisor_register_facts=lambda register: register("demo", lambda: {"x": 1}),
                advisor_register_emitters=lambda register: register("demo", lambda p, o: ""))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("p", p)]))
    mine = reg.of_plugin("p")
    assert [(e.kind, e.name) for e in mine] == [
        ("probe", "alpha"), ("emitter", "demo"), ("knob", "demo:DEMO_X"), ("fact_detector", "demo")]
    assert reg.plugin_of("knob", "demo:DEMO_X") == "p" and reg.plugin_of("probe", "x") is None
    assert reg.plugin_of("emitter", "env") == "advisor.emit.builtin"
    assert reg.owners("probe") == {"alpha": "p"}
    assert reg.plugin_of("library", "mpich") == "advisor.libraries.mpich"  # core records
    with pytest.raises(TypeError):  # the views are read-only
        reg.probes["beta"] = _Probe("beta")


def test_misspelt_hook_is_a_plugin_error_not_a_crash(tmp_path, monkeypatch):
    """pluggy's check_pending: an implementation of no hook (``advisor_register_probe``, without
    the s) would never be called; it is reported against its plugin, with the nearest hook."""
    import importlib

    (tmp_path / "advisor_test_typo.py").write_text(
        "from advisor import hookimpl\n\n\n"
        "@hookimpl\n"
        "def advisor_register_probe(register):\n"
        "    raise AssertionError('never called')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("advisor_test_typo")
    monkeypatch.delitem(__import__("sys").modules, "advisor_test_typo")
    good = _plugin(advisor_register_probes=lambda register: register(_Probe("alpha")))
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("typo", mod), ("good", good)]))
    assert list(reg.probes) == ["alpha"]
    [issue] = _issues(reg)
    assert (issue.plugin, issue.stage) == ("typo", "advisor_register_probe")
    assert "unknown hook" in issue.error and "did you mean advisor_register_probes" in issue.error
    # ... and `advisor plugins` shows the plugin as an error, with it
    from advisor.report.tables import plugin_rows

    row = next(r for r in plugin_rows(reg) if r["name"] == "typo")
    assert row["status"] == "error" and "advisor_register_probe: unknown hook" in row["errors"][0]


def test_probes_of_a_failed_probe_hook_are_remembered():
    def half(register):
        register(_Probe("half"))
        raise RuntimeError("broken hook")

    reg = collect(make_plugin_manager(entry_points=False,
                                      plugins=[("bad", _plugin(advisor_register_probes=half))]))
    assert reg.probes == {} and reg.lost_probes == {"bad": ["half"]}
