"""emit writes only what a plugin declared, and never a name that shells, the loader or a runtime
read as code or paths (advisor.specs.names), in every registered format."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from advisor.specs.selection import EmitOptions, Selection, Source
from advisor.emit import render
from advisor.errors import EmitError
from advisor.specs.names import REFUSED, REFUSED_PREFIXES, refused_reason
from advisor.models import Setting
from advisor.plugins import collect, make_plugin_manager
from advisor.save import save_profile
from support import sample_profile


@pytest.fixture(scope="module")
def reg():
    """Every installed plugin: the built-in formats, third-party ones and all knob records."""
    return collect(make_plugin_manager())


def _unchecked_selection(prof, reg) -> Selection:
    """A selection of every env setting that skips emit's own refusal (``emit.select``), as a
    format could be handed by a caller that bypasses it."""
    return Selection(prof, tuple(Source(res.plugin, res.probe, rec.id, rec.title, s)
                                 for res, rec, s in prof.settings()),
                     EmitOptions(), "env", reg.libraries)


def with_setting(**setting) -> "object":
    prof = sample_profile()
    res = prof.results[0]
    rec = res.recommendations[0]
    rec = rec.model_copy(update={"settings": rec.settings + [Setting(**setting)]})
    return prof.model_copy(update={"results": [res.model_copy(update={"recommendations": [rec]})]})


HOSTILE_SETTINGS = {
    "PROMPT_COMMAND": dict(library="bash", name="PROMPT_COMMAND", value="touch MARKER"),
    "LD_PRELOAD": dict(library="glibc", name="LD_PRELOAD", value="/tmp/evil.so"),
    "undeclared": dict(library="mpich", name="MPIR_CVAR_NOT_DECLARED_BY_ANYONE", value=1),
    "list item": dict(library="glibc", name="GLIBC_TUNABLES", value="glibc.rtld.not_a_knob=1",
                      type="list", separator=":"),
}
MESSAGES = {
    "PROMPT_COMMAND": "setting mpich-cma/cma-threshold: PROMPT_COMMAND: refused, never emitted: "
                      "bash runs its value as a command before each prompt (bash(1), "
                      "Shell Variables)",
    "LD_PRELOAD": "setting mpich-cma/cma-threshold: LD_PRELOAD: refused, never emitted: the "
                  "dynamic loader reads these",
    "undeclared": "setting mpich-cma/cma-threshold: MPIR_CVAR_NOT_DECLARED_BY_ANYONE: refused: "
                  "no loaded plugin declares 'MPIR_CVAR_NOT_DECLARED_BY_ANYONE'",
    "list item": "setting mpich-cma/cma-threshold: GLIBC_TUNABLES: refused: no loaded plugin "
                 "declares 'glibc.rtld.not_a_knob'",
}


@pytest.mark.parametrize("case", sorted(HOSTILE_SETTINGS))
def test_refused_in_every_registered_format(reg, case):
    prof = with_setting(**HOSTILE_SETTINGS[case])
    assert len(reg.emitters) >= 10  # the nine built-in formats and the sh alias at least
    for fmt in sorted(reg.emitters):
        with pytest.raises(EmitError) as info:
            render(prof, fmt, reg, EmitOptions(refuse_undeclared=True), label="p.toml")
        assert str(info.value).startswith("p.toml: " + MESSAGES[case]), (fmt, str(info.value))
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["PROMPT_COMMAND", "LD_PRELOAD", "BASH_ENV", "PATH"])
def test_refused_names_refused_even_without_knobs_and_in_format_code(reg, name):
    """Whatever a plugin declares: refused without a knob check, and by the built-in formats'
    own selection (a direct call of a format's render)."""
    from advisor.formats import builtin_modules

    prof = with_setting(library="x", name=name, value="1")
    with pytest.raises(EmitError, match=f"{name}: refused, never emitted"):
        render(prof, "env", reg, EmitOptions())
    for mod in builtin_modules():
        if getattr(mod, "LIBRARIES", None) is not None:
            continue  # writes only its libraries' settings (cxx-header, cupy): never this name
        with pytest.raises(EmitError, match="refused, never emitted"):
            mod.render(_unchecked_selection(prof, reg))


def test_refused_list_has_a_reason_and_source_per_name():
    for name, (why, source) in {**REFUSED, **REFUSED_PREFIXES}.items():
        assert why and source, name
    for name in ("PROMPT_COMMAND", "BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
                 "PATH", "IFS", "PS1", "PS4", "SHELLOPTS", "BASHOPTS", "CDPATH", "PYTHONPATH",
                 "PYTHONSTARTUP", "PERL5OPT", "NODE_OPTIONS", "MALLOC_TRACE"):
        assert refused_reason(name), name
    for name in ("GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MPIR_CVAR_CH4_CMA_ENABLE"):
        assert refused_reason(name) is None, name


def test_declared_settings_are_emitted(reg):
    """The settings the built-in plugins recommend are declared by their knob records."""
    prof = with_setting(library="glibc", name="GLIBC_TUNABLES", value="glibc.malloc.hugetlb=1",
                        type="list", separator=":")
    text = render(prof, "env", reg, EmitOptions(refuse_undeclared=True))
    assert "glibc.malloc.hugetlb=1" in text and "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD" in text


def test_cli_emit_refuses_undeclared_and_refused_names(tmp_path, advisor_home):
    for case in ("LD_PRELOAD", "undeclared"):
        path = save_profile(with_setting(**HOSTILE_SETTINGS[case]), tmp_path / f"{case}.toml")
        proc = subprocess.run([sys.executable, "-m", "advisor", "emit", "-p", str(path), "-f",
                               "sh"], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "ADVISOR_DISABLE_PLUGINS": "example-broken"})
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        assert f"{path}: {MESSAGES[case]}" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_cli_emit_with_the_owning_plugin_disabled_says_so(tmp_path, advisor_home):
    """A profile's setting whose plugin is disabled is refused with a line that says why and
    what to do (found by a new user: the bare "no loaded plugin declares" left them guessing)."""
    from support import SHIPPED_PROFILE

    proc = subprocess.run([sys.executable, "-m", "advisor", "emit", "-p", str(SHIPPED_PROFILE)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ,
                               "ADVISOR_DISABLE_PLUGINS": "example-broken,mpich-cma"})
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert f"{SHIPPED_PROFILE}: setting mpich-cma/" in line
    assert "plugin 'mpich-cma' recommended it" in line and "ADVISOR_DISABLE_PLUGINS" in line
    assert "--plugin" in line


def test_a_format_refusal_names_the_profile(tmp_path, advisor_home):
    """A value a format cannot carry (easybuild: ``$NAME``) is refused with the profile's path,
    like every other refusal."""
    prof = with_setting(library="mpich", name="MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
                        value="$(touch x)")
    path = save_profile(prof, tmp_path / "bad-value.toml")
    proc = subprocess.run([sys.executable, "-m", "advisor", "emit", "-p", str(path), "-f",
                           "easybuild"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ADVISOR_DISABLE_PLUGINS": "example-broken"})
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert f"{path}: " in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("name, value", [("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "16k"),
                                         ("MPIR_CVAR_CH4_CMA_ENABLE", "maybe")])
def test_a_value_the_knob_type_rules_out_is_refused_in_every_format(reg, name, value):
    """A hand-edited value MPICH would abort MPI_Init on (MPL reads neither ``16k`` nor
    ``maybe``) never reaches a file, whatever the format."""
    prof = with_setting(library="mpich", name=name, value=value)
    for fmt in sorted(reg.emitters):
        with pytest.raises(EmitError, match=rf"{name}: refused: value '{value}' is not a"):
            render(prof, fmt, reg, EmitOptions(refuse_undeclared=True), label="p.toml")


def _declared_everywhere_registry(names):
    """Every installed plugin plus one that declares ``names`` as knobs of library ``x``."""
    from advisor import hookimpl
    from advisor.knobs import Knob

    class Declares:
        @hookimpl
        def advisor_register_knobs(self, register):
            for n in names:
                register(Knob(library="x", name=n, type="str", source="test"))

    return collect(make_plugin_manager(plugins=[("declares", Declares())]))


def test_each_consumers_names_are_refused_in_every_format_even_when_declared():
    """One name and one prefix family member per consumer table (advisor.specs.refused),
    declared by a plugin: every registered format refuses it, naming that consumer's reason."""
    from advisor.specs.names import refused_by
    from advisor.specs.refused import CONSUMERS

    names = sorted({n for c in CONSUMERS for n in list(c.names)[:1]}
                   | {p + "X" for c in CONSUMERS for p in list(c.prefixes)[:1]})
    reg = _declared_everywhere_registry(names)
    for name in names:
        assert refused_by(name), name
        prof = with_setting(library="x", name=name, value="1")
        for fmt in sorted(reg.emitters):
            with pytest.raises(EmitError, match=f": {name}: refused, never emitted: "):
                render(prof, fmt, reg, EmitOptions(refuse_undeclared=True), label="p.toml")
