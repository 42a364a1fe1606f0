"""``advisor.errors.did_you_mean`` and the format alias table, on the real registry's names."""

from __future__ import annotations

from advisor.emit import FORMAT_ALIASES, unknown_format
from advisor.errors import did_you_mean
from advisor.plugins import collect, make_plugin_manager


def _formats() -> list[str]:
    """The core formats (no entry-point plugin)."""
    return sorted(collect(make_plugin_manager(entry_points=False)).emitters)


def test_every_alias_names_a_builtin_format():
    formats = set(_formats())
    assert {target for target in FORMAT_ALIASES.values()} <= formats
    assert not set(FORMAT_ALIASES) & formats  # an alias never shadows a real name


def test_alias_first_then_spelling_then_nothing():
    formats = _formats()
    assert did_you_mean("lua", formats, FORMAT_ALIASES) == "lmod"
    assert did_you_mean("LUA", formats, FORMAT_ALIASES) == "lmod"
    assert did_you_mean("spack-module", formats, FORMAT_ALIASES) == "spack-modules"
    assert did_you_mean("xyzzy", formats, FORMAT_ALIASES) is None
    # an alias whose format is not loaded (its plugin disabled) suggests nothing by itself
    assert did_you_mean("lua", ["env", "csh"], FORMAT_ALIASES) is None


def test_unknown_format_is_one_line():
    line = unknown_format("--format 'lua'", "lua", _formats())
    assert "\n" not in line and line.startswith("--format 'lua': did you mean lmod? (known ")
