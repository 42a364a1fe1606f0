"""The left-out comment every format writes (``advisor.specs.writing.left_out_comment``), built
on the one home of the logic, ``advisor.specs.selection.Selection.left_out``."""

from __future__ import annotations

from dataclasses import replace

from advisor.emit import left_out_notes, render
from advisor.emit.decide import select
from advisor.plugins import collect, make_plugin_manager
from advisor.specs.selection import EmitOptions, LeftOut
from advisor.specs.writing import left_out_comment, left_out_entries
from emit_fixtures import standard_profile

REGISTRY = collect(make_plugin_manager(entry_points=False))


def _sel(prof, opts, fmt="this format"):
    return select(prof, REGISTRY, opts, fmt)


def _why(entries, name):
    return [why for n, _v, why in entries if n == name]


def test_reasons_kind_default_version_in_name_order():
    prof = standard_profile()
    entries = left_out_entries(_sel(prof, EmitOptions()), ("env",), fmt="env")
    names = [n for n, _v, _w in entries]
    assert names == sorted(names)
    assert _why(entries, "MPIR_CVAR_CH4_CMA_ENABLE") == [
        "only confirms the library default; --all writes it"]
    # the recorded MPICH 5.0.2 does not read a 4.3-only CVAR
    (why,) = _why(entries, "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE")
    assert why.startswith("valid for mpich >=4.3,<5") and "5.0.2" in why
    (why,) = [w for n, _v, w in entries if n.endswith("QuickPool.alignment")]
    assert why.startswith("umpire config setting, not written by env; written by --format")
    assert "toml" in why and "json" in why


def test_data_formats_leave_out_no_config_and_all_keeps_defaults():
    prof = standard_profile()
    entries = left_out_entries(_sel(prof, EmitOptions(include_defaults=True)), ("env", "config"),
                               fmt="toml")
    assert all("config setting" not in w and "--all" not in w for _n, _v, w in entries)


def test_library_restriction_and_marker():
    prof = standard_profile()
    lines = left_out_comment(_sel(prof, EmitOptions(include_defaults=True)), ("env", "config"),
                             "--", fmt="umpire-json", libraries=("umpire",))
    assert lines and all(ln.startswith("-- left out: ") for ln in lines)
    assert any("a setting of" in ln and "umpire-json writes only umpire settings" in ln
               for ln in lines)
    assert not any("QuickPool" in ln for ln in lines)


def test_scope_entries_passed_in_options_come_through_once():
    prof = standard_profile()
    _res, rec, s = next((r, c, x) for r, c, x in prof.settings(kinds=("env",))
                        if x.name == "GLIBC_TUNABLES")
    lo = LeftOut(_res.probe, rec.id, s, "scope", "excluded by /etc/advisor/config.toml:4")
    got = _sel(prof, EmitOptions(left_out=(lo,))).left_out(("env",))
    assert [x for x in got if x.setting is s] == [lo]


def test_render_passes_version_drops_to_the_format():
    """advisor.emit.render gives the format a selection whose version-excluded settings are
    left out; the comment still names them (``Selection.left_out``)."""
    registry = collect(make_plugin_manager(entry_points=False))
    text = render(standard_profile(), "env", registry, EmitOptions())
    assert "# left out: MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE=" in text
    assert text.count("IQUEUE_CELL_SIZE") == 1


def test_cli_notes_and_comment_agree_on_defaults():
    prof = standard_profile()
    opts = EmitOptions()
    notes = " ".join(t for _l, t in left_out_notes(_sel(prof, opts, "env"), ("env",)))
    for name, _v, why in left_out_entries(_sel(prof, opts), ("env",), fmt="env"):
        if why.startswith("only confirms"):
            assert name in notes
    assert left_out_entries(_sel(prof, replace(opts, plugins=frozenset())), ("env",)) == []
