"""Property: every built-in format reads back what it writes, ``parse(render(x)) == x``, for
hostile values (both quote kinds, ``$NAME``, backslashes, ``%(``, brackets, braces, ``!``,
globs, edge spaces, non-ASCII text, separators inside list items); a format that cannot carry a
value (easybuild, lmod, tcl: see their modules) refuses it with an EmitError naming the setting
instead, and only then.  Hypothesis settings: tests/conftest.py."""

from __future__ import annotations

import os

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from advisor.emit.decide import select
from advisor.specs.selection import EmitOptions
from advisor.errors import EmitError
from advisor.formats import builtin_modules
from advisor.formats.easybuild import easybuild_unsafe
from advisor.formats.quoting import module_unsafe
from advisor.formats.reframe import reframe_unsafe
from advisor.formats.spack_modules import spack_unsafe
from advisor.lint import resolve_env
from advisor.models import PluginResult, Recommendation, Setting
from advisor.plugins import collect, make_plugin_manager
from emit_fixtures import make_profile

REGISTRY = collect(make_plugin_manager(entry_points=False))

#: characters some reader gives a meaning to, and text from outside ASCII
HOSTILE_CHARS = "'\"$\\%([]{}!*?~ ;&|<>#=:,`^@-+/. \u00e9\u00df\u6771\U0001F680\u00a0\u2028"
VALUES = st.text(st.sampled_from(HOSTILE_CHARS + "abcXYZ019"), max_size=16) | st.sampled_from(
    ["$HOME", "${HOME}", "%(name)s", "[expr 1]", "{a,b}", "!!", "*.c", " edge ", "a\\", "'\""])
#: list items (GLIBC_TUNABLES-like ``name=value``): anything but the separator
ITEMS = st.lists(st.text(st.sampled_from(HOSTILE_CHARS.replace(":", "") + "abc019"),
                         min_size=1, max_size=8), min_size=1, max_size=3, unique=True)

#: the formats that read back (write-only snippet formats have no parse)
MODULES = {mod.NAME: mod for mod in builtin_modules() if getattr(mod, "parse", None)}
#: why a format refuses a value (None: it carries every value without a control character)
REFUSES = {"easybuild": easybuild_unsafe, "easybuild-hooks": easybuild_unsafe,
           "lmod": module_unsafe, "tcl": module_unsafe, "reframe": reframe_unsafe,
           "spack-modules": spack_unsafe}


def profile_of(values: list[str], items: list[str], library: str = "test"):
    settings_ = [Setting(library=library, name=f"ADVISOR_RT_{i}", value=v)
                 for i, v in enumerate(values)]
    settings_.append(Setting(library=library, name="ADVISOR_RT_LIST", value=":".join(items),
                             type="list", separator=":"))
    rec = Recommendation(id="r", title="t", rationale="r", confidence="low", settings=settings_)
    return make_profile([PluginResult(plugin="p", probe="p", status="ok",
                                      recommendations=[rec])])


@settings(max_examples=150)
@given(st.lists(VALUES, min_size=1, max_size=5), ITEMS)
@example(["it's \"both\"", "$HOME and ${X}", "back\\slash", "%(name)s", "[x] {y} !z",
          "*.c ?", " lead", "trail ", "Grüße 東京 🚀"], ["a=1", "b= 2 "])
@pytest.mark.parametrize("fmt", sorted(MODULES))
def test_parse_of_render_is_identity(fmt, values, items):
    mod = MODULES[fmt]
    # a format writing only some libraries' settings (easybuild-hooks) gets one of those
    prof = profile_of(values, items, getattr(mod, "LIBRARIES", ("test",))[0])
    want = {s.name: str(s.value) for _, _, s in prof.settings()}
    refused = [v for v in want.values() if REFUSES.get(fmt, lambda _v: None)(v)]
    try:
        text = mod.render(select(prof, REGISTRY, EmitOptions(), fmt))
    except EmitError as exc:
        assert refused, (fmt, str(exc))  # refused only what the format documents it cannot carry
        assert "ADVISOR_RT_" in str(exc)
        return
    assert not refused, fmt
    entries = mod.parse(text, f"site.{fmt}")
    assert all(e.problem is None for e in entries), entries
    assert resolve_env(entries) == want
    lists = [e for e in entries if e.name == "ADVISOR_RT_LIST"]
    # merged, except where the format cannot: EasyBuild never appends; Spack's append_path
    # normalises items as paths, so items normpath changes are set instead
    overwrites = fmt in ("easybuild", "easybuild-hooks", "reframe") or (
        fmt in ("spack", "spack-modules") and any(
        os.path.normpath(i) != i for i in items))
    assert lists and lists[0].append != overwrites
