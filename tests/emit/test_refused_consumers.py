"""Code-running names are refused by kind (issue 28, part 5): for each consumer of
``advisor.specs.refused`` a plugin, installed as any third-party plugin is (an ``advisor`` entry
point), declares one of the consumer's names as a knob; ``advisor emit`` of a profile holding
it exits 2 with one line and writes nothing.  The control shows the refusal matters: the same
assignment written by hand into a file of that format and loaded in the real consumer runs the
marker command, and the empty file a refusal leaves runs nothing.  The controls are
``refused_controls.CONTROLS``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from consumers import base_env
from refused_controls import CONTROLS, Control, prepare, write_by_hand

from advisor.errors import EmitError
from advisor.knobs import Knob
from advisor.models import PluginResult, Recommendation, Setting
from advisor.save import save_profile
from advisor.specs.names import refused_by, refused_reason
from advisor.specs.refused import CONSUMERS
from emit_fixtures import facts, make_profile

pytestmark = pytest.mark.integration

PLUGIN = '''"""Test plugin: declares names advisor emit must refuse anyway (issue 28, part 5)."""
from advisor import hookimpl
from advisor.knobs import Knob

NAMES = {names!r}


@hookimpl
def advisor_register_knobs(register):
    for name in NAMES:
        register(Knob(library="refuse-test", name=name, type="str",
                      source="tests/emit/test_refused_consumers.py"))
'''


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    """A directory that, on the path, installs plugin ``refuse-test`` through an entry point
    (a ``.dist-info`` beside the module, as pip leaves it)."""
    site = tmp_path_factory.mktemp("refuse-site")
    names = sorted({c.name for c in CONTROLS})
    (site / "advisor_refuse_test.py").write_text(PLUGIN.format(names=names))
    info = site / "advisor_refuse_test-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: advisor-refuse-test\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text("[advisor]\nrefuse-test = advisor_refuse_test\n")
    return site


def profile_with(name: str, value: str):
    rec = Recommendation(id="hook", title="t", rationale="r", confidence="low",
                         settings=[Setting(library="refuse-test", name=name, value=value)])
    return make_profile([PluginResult(plugin="refuse-test", probe="refuse-test", status="ok",
                                      recommendations=[rec])], facts())


def emit_cli(site: Path, profile: Path, fmt: str, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ADVISOR_DISABLE_PLUGINS": "example-broken",
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "advisor", "emit", "-p", str(profile), "-f",
                           fmt, "-o", str(out)], capture_output=True, text=True, timeout=120,
                          env=env)


def load(argv: list[str], d: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=d, env=base_env(d / "home", None), capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_every_consumer_has_a_control_and_its_name_is_refused_for_it():
    assert sorted(c.consumer for c in CONTROLS) == sorted(c.name for c in CONSUMERS)
    for c in CONTROLS:
        assert c.consumer in [k.name for k, _, _ in refused_by(c.name)], c
    for k in CONSUMERS:
        for name, (why, source) in {**k.names, **k.prefixes}.items():
            assert why and source, (k.name, name)


def test_the_plugin_declares_every_control_name(plugin_site, monkeypatch):
    """The CLI below refuses names a loaded plugin really declares."""
    from advisor.plugins import collect, make_plugin_manager
    from advisor.specs.names import declared_names

    monkeypatch.syspath_prepend(str(plugin_site))
    reg = collect(make_plugin_manager(only=["refuse-test"]))
    assert {c.name for c in CONTROLS} <= declared_names(reg.knobs)


@pytest.mark.parametrize("control", CONTROLS, ids=[c.consumer for c in CONTROLS])
def test_refused_before_anything_runs_in_the_real_consumer(control: Control, plugin_site,
                                                           tmp_path, advisor_home):
    d = tmp_path / "c"
    d.mkdir()
    (d / "home").mkdir()
    argv = prepare(control, d)
    value = control.value.replace("{d}", str(d))
    profile = save_profile(profile_with(control.name, value), tmp_path / "p.toml")
    out = d / "emitted"

    proc = emit_cli(plugin_site, profile, control.fmt, out)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and not out.exists()
    lines = [ln for ln in proc.stderr.splitlines() if "refused" in ln or "error" in ln]
    assert lines == [f"advisor: error: {profile}: setting refuse-test/hook: {control.name}: "
                     f"refused, never emitted: {refused_reason(control.name)}"], proc.stderr
    assert "Traceback" not in proc.stderr

    write_by_hand(control, d, assignment=False)  # all a refusal leaves: nothing to run
    empty = load(argv, d)
    assert not (d / "MARKER").exists(), (empty.stdout, empty.stderr)

    write_by_hand(control, d, assignment=True)  # the same assignment, written by hand
    ran = load(argv, d)
    assert (d / "MARKER").exists(), (control.consumer, ran.stdout, ran.stderr)


def test_refused_before_the_version_decision(monkeypatch):
    """A refused name whose knob the recorded library version does not read is refused, not
    left out as a comment of the file."""
    from advisor.emit import render
    from advisor.plugins import collect, make_plugin_manager
    from advisor.specs.selection import EmitOptions
    from advisor import hookimpl

    class Plugin:
        @hookimpl
        def advisor_register_knobs(self, register):
            register(Knob(library="mpich", name="PROMPT_COMMAND", type="str",
                          versions=">=99", source="test"))

    reg = collect(make_plugin_manager(entry_points=False, plugins=[("p", Plugin())]))
    rec = Recommendation(id="r", title="t", rationale="r", confidence="low", settings=[
        Setting(library="mpich", name="PROMPT_COMMAND", value="touch MARKER")])
    prof = make_profile([PluginResult(plugin="p", probe="p", status="ok",
                                      recommendations=[rec])], facts())
    for fmt in ("env", "json"):
        with pytest.raises(EmitError, match="PROMPT_COMMAND: refused, never emitted: bash"):
            render(prof, fmt, reg, EmitOptions(refuse_undeclared=True))
