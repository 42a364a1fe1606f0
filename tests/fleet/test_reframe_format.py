"""``advisor emit -f reframe-test`` on class profiles that a real ``advisor fleet report`` wrote
from the recorded profile's nodes (tests/fleet/conftest.py): references from the class band,
rounded; profile strings only as Python literals; ReFrame's own loader lists the test."""

from __future__ import annotations

import ast
import os
import subprocess

import pytest
from support import tool

from advisor.emit import render
from advisor.errors import EmitError
from advisor.fleet.report import build_report
from advisor.formats.reframe import round_sig, thresholds
from advisor.profile import load_profile
from advisor.specs.selection import EmitOptions, Selection

HOST = "host-buffer:memcpy_bandwidth_largest_bytes_per_s"


@pytest.fixture(scope="module")
def registry():
    from advisor.plugins import collect, make_plugin_manager

    return collect(make_plugin_manager(entry_points=False))


@pytest.fixture
def class_profile(fleet_dir):
    (cls,) = build_report(fleet_dir).classes
    return cls.profile_path


def emitted(profile, source=None) -> str:
    from advisor.formats.reframe_test import render as render_test

    return render_test(Selection(profile, (), EmitOptions(), "reframe-test", {}, source))


def assigned(text: str, name: str):
    """The literal assigned to ``name`` at the top level of ``text`` (never run)."""
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.Assign)
                and [t.id for t in n.targets if isinstance(t, ast.Name)] == [name])
    return ast.literal_eval(node.value)


def test_references_are_the_class_band_rounded_outward(class_profile):
    prof = load_profile(class_profile)
    text = emitted(prof, class_profile)
    figures = assigned(text, "FIGURES")
    bands = prof.fleet.headlines
    assert {row[0] for row in figures.values()} == {f for f, b in bands.items()
                                                   if b.low is not None}
    assert HOST in {row[0] for row in figures.values()}
    for var, (fig, value, lower, upper, unit) in figures.items():
        b = bands[fig]
        assert var == fig.replace("-", "_").replace(":", "_")
        assert value == float(f"{b.median:.3g}") and unit == b.unit and unit
        # only the worse side is bounded (advisor check): a rate below, a time above
        if fig.endswith("_per_s"):
            assert upper is None and len(repr(lower)) <= 5  # whole percent
            # the written bound holds the class band's, at most 1 % of the value wider
            assert value * (1 + lower) <= b.low * (1 + 1e-12)
            assert b.low - value * (1 + lower) <= 0.01 * value * (1 + 1e-9)
        else:
            assert fig.endswith("_s") and lower is None and len(repr(upper)) <= 5
            assert value * (1 + upper) >= b.high * (1 - 1e-12)
            assert value * (1 + upper) - b.high <= 0.01 * value * (1 + 1e-9)
    assert assigned(text, "CLASS_PROFILE") == os.path.abspath(class_profile)
    compile(text, "advisor_check.py", "exec")


def test_rounding_examples():
    assert round_sig(6751234567.0) == 6.75e9 and round_sig(0.0123456) == 0.0123
    assert thresholds(100.0, 94.0, 106.0) == (-0.06, 0.06)  # exact: not widened
    assert thresholds(100.0, 94.5, 105.2) == (-0.06, 0.06)
    assert thresholds(3.54e9, -1.0e9, 8.1e9) == (-1.0, 1.29)  # ReFrame's lower limit is -1
    assert thresholds(100.0, 101.0, 103.0) == (0.0, 0.03)  # 0 stays inside


def test_figures_without_a_band_are_left_out_and_named(class_profile):
    prof = load_profile(class_profile)
    bands = dict(prof.fleet.headlines)
    lone = bands[HOST].model_copy(update={"mad": None, "low": None, "high": None, "nodes": 2})
    bands["odd-probe:two_nodes_s"] = lone
    prof = prof.model_copy(update={"fleet": prof.fleet.model_copy(update={"headlines": bands})})
    text = emitted(prof, class_profile)
    assert "# left out: odd-probe:two_nodes_s: no band (only 2 node(s) of the class had it)" \
        in text
    assert "odd_probe_two_nodes_s" not in assigned(text, "FIGURES")


HOSTILE = "x'\"; import os; os.system('touch /tmp/pwned') #\n\\u2028\u2028"


def test_profile_strings_are_literals_never_code(class_profile, tmp_path):
    """A class profile path, figure name, unit and class id holding quotes, newlines and a
    line separator: each lands as the same string in a literal or a one-line comment; the
    module's top level is only imports, the data, functions and the test class."""
    prof = load_profile(class_profile)
    band = prof.fleet.headlines[HOST].model_copy(update={"unit": HOSTILE[:40]})
    fleet = prof.fleet.model_copy(update={"class_id": HOSTILE,
                                          "headlines": {f"p{HOSTILE}:fig": band}})
    text = emitted(prof.model_copy(update={"fleet": fleet}), str(tmp_path / HOSTILE))
    tree = ast.parse(text)
    kinds = {type(n).__name__ for n in tree.body}
    assert kinds <= {"Expr", "Import", "ImportFrom", "Assign", "FunctionDef", "ClassDef"}
    names = [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets]
    assert names == ["CLASS_PROFILE", "FIGURES", "_MEASURED"]
    assert assigned(text, "CLASS_PROFILE") == str(tmp_path / HOSTILE)
    ((fig, *_rest, unit),) = assigned(text, "FIGURES").values()
    assert fig == f"p{HOSTILE}:fig" and unit == HOSTILE[:40]
    assert "pwned" not in "".join(ast.unparse(n) for n in tree.body
                                  if not isinstance(n, ast.Assign))


def test_a_profile_without_bands_is_refused_in_one_line(registry):
    from support import SHIPPED_PROFILE

    with pytest.raises(EmitError) as info:
        render(load_profile(SHIPPED_PROFILE), "reframe-test", registry, EmitOptions(),
               label="p.toml")
    assert str(info.value).startswith("p.toml: not a class profile with headline bands")
    assert "\n" not in str(info.value)


def test_reframe_lists_the_emitted_test(class_profile, tmp_path):
    """ReFrame's own loader (``reframe -l``) accepts the file and its parameters."""
    pytest.importorskip("reframe", reason="reframe-hpc not installed (the test extra has it)")
    from reframe_support import reframe_env, site_config

    test = tmp_path / "advisor_check.py"
    test.write_text(emitted(load_profile(class_profile), class_profile), encoding="utf-8")
    proc = subprocess.run([tool("reframe"), "-C", str(site_config(tmp_path)), "-c", str(test),
                           "-l", "--prefix", str(tmp_path / "rfm")], capture_output=True,
                          text=True, env=reframe_env(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "- AdvisorCheck" in proc.stdout and "Found 1 check(s)" in proc.stdout
