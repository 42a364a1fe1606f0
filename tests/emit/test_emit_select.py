"""The selection of one emit (``advisor.emit.decide``): one version decision per setting, and
a plugin-registered library is seen by emit without a fallback to the built-in records."""

from __future__ import annotations

import pytest
from emit_fixtures import standard_profile

import advisor
import advisor.libraries.reads as reads
from advisor.config.scopes import load_config
from advisor.emit import left_out_notes, plan, write
import advisor.emit.decide as select_module
from advisor.libraries import Library
from advisor.models import Facts, PluginResult, Recommendation, Setting
from advisor.plugins import SETTING_KINDS, collect, make_plugin_manager
from advisor.specs.selection import EmitOptions

REGISTRY = collect(make_plugin_manager(entry_points=False))


@pytest.mark.parametrize("fmt", ["env", "toml", "lmod", "spack-modules", "cxx-header"])
@pytest.mark.parametrize("include_defaults", [False, True])
def test_one_emit_decides_once_per_setting(fmt, include_defaults, monkeypatch, tmp_path):
    """plan, render and the stderr notes of one emit ask ``drop_reason`` exactly once for each
    setting of the profile (every kind, defaults included), whoever reads the answer."""
    prof = standard_profile()
    n = len(prof.settings(kinds=SETTING_KINDS, include_defaults=True))
    assert n >= 5
    calls: list[str] = []
    real = reads.drop_reason

    def counting(setting, *args, **kwargs):
        calls.append(setting.name)
        return real(setting, *args, **kwargs)

    monkeypatch.setattr(reads, "drop_reason", counting)
    monkeypatch.setattr(select_module, "drop_reason", counting)
    cfg = load_config(environ={"ADVISOR_SITE_CONFIG": str(tmp_path / "site.toml"),
                               "ADVISOR_USER_CONFIG": str(tmp_path / "user.toml")})
    planned = plan(prof, REGISTRY, cfg, None, fmt=fmt,
                   options=EmitOptions(include_defaults=include_defaults))
    try:
        write(planned.emitter, planned.selection)
    except advisor.errors.EmitError:
        pass  # nothing to write as this format: the decision was made all the same
    left_out_notes(planned.selection, planned.emitter.kinds)
    assert len(calls) == n, calls
    assert sorted(calls) == sorted(s.name for _, _, s in prof.settings(
        kinds=SETTING_KINDS, include_defaults=True))


class _Vendor:
    """A plugin's own library: its version comes from its facts, its knob has a range."""

    @advisor.hookimpl
    def advisor_register_libraries(self, register):
        register(Library(name="vendor", prefixes=("VENDOR_",),
                         version=lambda facts: facts.extra.get("vendor", {}).get("version")))


def test_a_plugin_library_decides_what_emit_writes():
    reg = collect(make_plugin_manager(entry_points=False, plugins=[("vendor", _Vendor())]))
    setting = Setting(library="vendor", name="VENDOR_COPY_MODE", value="fast", versions=">=2.0")
    rec = Recommendation(id="r", title="t", rationale="r", confidence="low", settings=[setting])
    prof = standard_profile().model_copy(update={
        "results": [PluginResult(plugin="vendor", probe="vendor", status="ok",
                                 recommendations=[rec])],
        "facts": Facts(extra={"vendor": {"version": "1.4"}})})
    sel = select_module.select(prof, reg, EmitOptions(), "env")
    (drop,) = sel.dropped()
    assert drop.cause == "version" and "vendor 1.4" in drop.why
    newer = prof.model_copy(update={"facts": Facts(extra={"vendor": {"version": "2.1"}})})
    assert select_module.select(newer, reg, EmitOptions(), "env").dropped() == []
