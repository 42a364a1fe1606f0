"""lint reads what ``advisor emit`` writes (every format it parses), plus hand-written sh files,
and the ``advisor lint`` command's output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import BUILTIN_LIBRARIES, recorded_catalogues, recorded_facts, sample_profile

from advisor import lint
from advisor.models import Setting

PARSED_FORMATS = ("env", "csh", "fish", "tcl", "lmod", "spack", "easybuild", "json", "toml")
SUFFIX = {"env": ".sh", "csh": ".csh", "fish": ".fish", "tcl": "", "lmod": ".lua", "json": ".json",
          "toml": ".toml", "spack": ".yaml", "easybuild": ".eb"}


def _profile():
    p = sample_profile()
    res = p.results[0]
    rec = res.recommendations[0]
    extra = [Setting(library="glibc", name="GLIBC_TUNABLES", value="glibc.malloc.hugetlb=1",
                     separator=":", type="list"),
             Setting(library="mpich", name="MPIR_CVAR_CH4_CMA_ENABLE", value=1, type="int")]
    rec = rec.model_copy(update={"settings": rec.settings + extra})
    return p.model_copy(update={"results": [res.model_copy(update={"recommendations": [rec]})]})


@pytest.mark.parametrize("fmt", PARSED_FORMATS)
def test_emitted_formats_round_trip(fmt, tmp_path):
    from advisor.specs.selection import EmitOptions
    from advisor.emit import render
    from advisor.plugins import collect, make_plugin_manager

    prof = _profile()
    reg = collect(make_plugin_manager(entry_points=False))
    text = render(prof, fmt, reg, EmitOptions())
    path = tmp_path / f"site{SUFFIX[fmt]}"
    path.write_text(text)
    entries = lint.read_env_file(path)
    env = lint.resolve_env(entries)
    want = {s.name: str(s.value) for _r, _c, s in prof.settings()}
    assert env == want, fmt
    lines = text.splitlines()
    for e in entries:  # every entry points at a line that names it
        assert e.line is not None and e.name in lines[e.line - 1]
    glibc = [e for e in entries if e.name == "GLIBC_TUNABLES"]
    # list variables merge with the existing value, except in EasyBuild (it cannot append)
    assert any(e.append for e in glibc) == (fmt != "easybuild"), fmt
    # the format is recognised from the text alone, too
    assert lint.resolve_env(lint.read_env_text(text, "<text>")) == want, fmt


def test_profile_toml_is_read(tmp_path):
    from advisor.save import save_profile

    path = save_profile(_profile(), tmp_path / "p.toml")
    names = {e.name for e in lint.read_env_file(path)}
    assert {"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "GLIBC_TUNABLES"} <= names


def test_sh_quoting_continuations_and_expansions():
    text = ("# comment MPIR_CVAR_X=1\n"
            "export A='one two' B=\"x\"; C=3 export D\n"
            "E=\"multi\nline\"\n"
            "export F=${HOME}/x\n"
            "G=1 \\\n  H=2 prog\n"
            "if [ -n \"${GLIBC_TUNABLES-}\" ]; then GLIBC_TUNABLES=\"${GLIBC_TUNABLES}\"':x=1'; fi\n")
    es = {e.name: e for e in lint.parse_env_text(text, path="q.sh")}
    assert es["A"].value == "one two" and es["B"].value == "x" and es["C"].line == 2
    assert es["E"].value == "multi\nline" and es["E"].line == 3
    assert es["F"].value is None  # an expansion: value not known
    assert es["H"].line == 6 and es["G"].line == 6 and es["H"].value == "2"
    assert es["GLIBC_TUNABLES"].append and es["GLIBC_TUNABLES"].value == "x=1"
    assert "MPIR_CVAR_X" not in es


def _cli(*args, env=None, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, env=e, timeout=120, cwd=cwd)


def test_cli_lint_file_exit_codes_and_json(tmp_path, advisor_home):
    from support import case

    c = case("cvar-typos")
    bad = tmp_path / "bad.sh"
    bad.write_text(c["env_file"]["text"])
    done = _cli("lint", str(bad))
    assert done.returncode == 1, done.stderr
    assert f"{bad}:1: error:" in done.stdout and "remedy:" in done.stdout
    assert "error(s)" in done.stderr
    done = _cli("lint", "--json", str(bad))
    data = json.loads(done.stdout)
    assert {d["line"] for d in data if d["severity"] == "error"} >= {1, 3}
    good = tmp_path / "good.sh"
    good.write_text("export MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=16384\n")
    done = _cli("lint", str(good))
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr
    done = _cli("lint", str(tmp_path / "missing.sh"))
    assert done.returncode == 2 and "missing.sh" in done.stderr and "Traceback" not in done.stderr
    done = _cli("lint")
    assert done.returncode == 2


def test_cli_lint_env(advisor_home):
    done = _cli("lint", "--env", "--json", env={"MPIR_CVAR_CH4_CMA_ENABLED": "1"})
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    hit = [d for d in data if d["name"] == "MPIR_CVAR_CH4_CMA_ENABLED"]
    assert hit and hit[0]["path"] == lint.ENV_PATH and hit[0]["line"] is None
    assert "MPIR_CVAR_CH4_CMA_ENABLE?" in hit[0]["message"]


# --------------------------------------------------------------------------- Spack, EasyBuild, JSON


def test_spack_yaml_sections_and_lines():
    text = ("spack:\n  specs: [zlib]\n  env_vars:\n    set:\n      A_ONE: '1'\n"
            "      A_NUM: 2\n    append_path:\n      A_LIST: x\n    unset: [B]\n"
            "    prepend_path:\n      A_PRE: y\n")
    entries = lint.parse_env_text(text, path="spack.yaml")
    got = [(e.name, e.value, e.line, e.append, e.separator) for e in entries]
    assert got == [("A_ONE", "1", 5, False, None), ("A_NUM", "2", 6, False, None),
                   ("A_LIST", "x", 8, True, ":"), ("A_PRE", "y", 11, True, ":")]


@pytest.mark.parametrize("text, word", [
    ("env_vars:\n  set:\n    A: [1, 2\n", "malformed YAML"),
    ("spack:\n  specs: []\n", "no 'env_vars'"),
])
def test_spack_bad_input(text, word):
    with pytest.raises(lint.BadInputError, match=word):
        lint.parse_env_text(text, path="x.yaml")


def test_easybuild_modextravars_read_without_running_anything(tmp_path):
    marker = tmp_path / "MARKER"
    text = (f"import os\nos.system('touch {marker}')\nname = 'x'\n"
            "modextravars = {\n    'A_ONE': '1',\n"
            "    'A_DICT': {'value': 'v', 'resolve_env_vars': False},\n"
            "    'bad name': 'z',\n}\n")
    entries = lint.parse_env_text(text, path="x.eb")
    assert [(e.name, e.value, e.line) for e in entries if e.problem is None] == [
        ("A_ONE", "1", 5), ("A_DICT", "v", 6)]
    (bad,) = [e for e in entries if e.problem]
    assert bad.line == 7 and "not an environment variable name" in bad.problem
    assert not marker.exists()


@pytest.mark.parametrize("text, word", [
    ("modextravars = {'A': '1'\n", "not Python"),
])
def test_easybuild_bad_input(text, word):
    with pytest.raises(lint.BadInputError, match=word):
        lint.parse_env_text(text, path="x.eb", fmt="easybuild")


def test_plain_json_object_of_names():
    text = '{\n  "MPIR_CVAR_CH4_CMA_ENABLE": 1,\n  "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"\n}\n'
    entries = lint.parse_env_text(text, path="env.json")
    assert [(e.name, e.value, e.line) for e in entries] == [
        ("MPIR_CVAR_CH4_CMA_ENABLE", "1", 2), ("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 3)]
    with pytest.raises(lint.BadInputError, match="key 'A': \\[1, 2\\] is not a value"):
        lint.parse_env_text('{"A": [1, 2]}', path="x.json")
    with pytest.raises(lint.BadInputError, match="nor an object of names to values"):
        lint.parse_env_text('[1, 2]', path="x.json")


def test_cli_lint_reads_standard_input(advisor_home):
    done = subprocess.run([sys.executable, "-m", "advisor", "lint", "-"], capture_output=True,
                          text=True, timeout=120, input="export MPIR_CVAR_CH4_CMA_ENABLED=1\n")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("<stdin>:1: error:") and "MPIR_CVAR_CH4_CMA_ENABLE?" in done.stdout
    assert "1 variable(s) read" in done.stderr
    done = subprocess.run([sys.executable, "-m", "advisor", "lint", "-"], capture_output=True,
                          timeout=120, input=b"\xff\xfe binary")
    assert done.returncode == 2 and b"<stdin>: not UTF-8" in done.stderr


# --------------------------------------------------------------------------- second walkthrough


def _lint_text(text, path, **kw):
    """Lint ``text`` as on the recording machine (MPICH 5.0.2, glibc 2.36): these tests are
    about reading and rules, so neither this host's glibc nor its MPI may decide them."""
    from advisor.plugins import load

    reg = load()
    entries = lint.read_env_text(text, path)
    return entries, lint.lint_entries(entries, facts=recorded_facts(), knobs=reg.knobs,
                                      catalogues=recorded_catalogues(), probes=reg.probes,
                                      libraries=BUILTIN_LIBRARIES)


def test_tcl_words_follow_tcl_quoting():
    """Braces are Tcl quoting ({8192} is 8192, as the module command reads it); a ';#' comment
    ends the command; a value from a variable is reported as not checkable."""
    from advisor.formats.shellread import _tcl

    if _tcl() is None:
        pytest.skip("this Python has no tkinter: Tcl files are read with POSIX word rules")
    text = ("#%Module\nsetenv MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD {8192}\n"
            'setenv DLAF_UMPIRE_HOST_MEMORY_POOL_ALIGNMENT_BYTES "4096" ;# note\n'
            "set v 1\nsetenv MPIR_CVAR_CH4_CMA_ENABLE $v\nsetenv ADVISOR_X {a b\nc}\n")
    entries, found = _lint_text(text, "site")
    got = {e.name: (e.value, e.line) for e in entries}
    assert got["MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] == ("8192", 2)
    assert got["DLAF_UMPIRE_HOST_MEMORY_POOL_ALIGNMENT_BYTES"] == ("4096", 3)
    assert got["ADVISOR_X"] == ("a b\nc", 6)
    assert not [f for f in found if f.severity == "error"], [f.finding.message for f in found]
    (unknown,) = [f for f in found if f.finding.id == "value-unknown"]
    assert unknown.line == 5 and unknown.severity == "info"


def test_lmod_call_over_several_lines_is_read():
    text = ('setenv("MPIR_CVAR_CH4_CMA_ENABLE",\n    "0")\n'
            'setenv("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "8192")\nsetenv("X",\n')
    entries, found = _lint_text(text, "site.lua")
    assert [(e.name, e.value, e.line) for e in entries if e.problem is None][:2] == [
        ("MPIR_CVAR_CH4_CMA_ENABLE", "0", 1), ("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "8192", 3)]
    assert any(f.finding.id == "cma-threshold-inert" for f in found)
    assert [e.line for e in entries if e.problem] == [4]  # never closed


@pytest.mark.parametrize("value", [" 1", "True", "2", "-1", "4k", "1 "])
def test_mpich_boolean_is_read_exactly_as_mpl_env2bool(value):
    """Measured on MPICH 5.0.2: ' 1' and 'Yes' abort MPI_Init; the message says what a boolean
    CVAR takes, not 'integer' or 'bytes'."""
    _, found = _lint_text(f"export MPIR_CVAR_CH4_CMA_ENABLE='{value}'\n", "site.sh")
    (f,) = [f for f in found if f.finding.id == "invalid-value"]
    assert "is not a boolean MPICH reads" in f.finding.message and f.severity == "error"
    assert "=1 or" in f.finding.remedy


@pytest.mark.parametrize("value", ["1", "0", "yes", "true", "TRUE", "ON", "off"])
def test_mpich_boolean_words_pass(value):
    _, found = _lint_text(f"export MPIR_CVAR_CH4_CMA_ENABLE={value}\n", "site.sh")
    assert not [f for f in found if f.finding.id == "invalid-value"]


def test_prepended_glibc_tunables_and_blank_names_are_flagged():
    text = "env_vars:\n  prepend_path:\n    GLIBC_TUNABLES: glibc.malloc.hugetlb=1\n"
    _, found = _lint_text(text, "env.yaml")
    assert [f.finding.id for f in found if f.severity == "warning"] == ["list-order"]
    _, found = _lint_text('GLIBC_TUNABLES=" glibc.malloc.hugetlb=1"\n', "site.sh")
    (f,) = [f for f in found if f.finding.id == "unknown-name"]
    assert f.finding.message.startswith("' glibc.malloc.hugetlb'") and "blank" in f.finding.message


def test_easyconfig_changes_lint_cannot_read_are_reported_and_none_is_fine():
    text = ("modextravars = {'A_B': '1'}\nmodextravars.update({'C': '2'})\n"
            "modextravars['D'] = '3'\n")
    entries = lint.read_env_text(text, "x.eb")
    assert [e.line for e in entries if e.problem] == [2, 3]
    assert lint.read_env_text("name = 'zlib'\nversion = '1.3'\n", "zlib.eb") == []


@pytest.mark.parametrize("text, path, words", [
    ("env_vars:\n  set: [1, 2]\n", "b.yaml", ["b.yaml:2:", "'env_vars.set'", "mapping"]),
    ("env_vars:\n  set:\n    A: [1, 2\n", "c.yaml", ["c.yaml:4:", "malformed YAML"]),
    ('{"MPIR_CVAR_CH4_CMA_ENABLE": "0", "X": null}', "n.json", ["key 'X'", "null"]),
])
def test_structured_bad_input_names_line_or_key(text, path, words):
    with pytest.raises(lint.BadInputError) as err:
        lint.read_env_text(text, path)
    msg = str(err.value)
    assert all(w in msg for w in words) and "\n" not in msg and "<unicode string>" not in msg


def test_cli_one_unreadable_file_does_not_hide_the_others(tmp_path, advisor_home):
    bad = tmp_path / "bad.yaml"
    bad.write_text("env_vars:\n  set:\n    A: [1, 2\n")
    good = tmp_path / "site.sh"
    good.write_text("export MPIR_CVAR_CH4_CMA_THRESHOLD=8192\n")
    done = _cli("lint", str(bad), str(good))
    assert done.returncode == 2
    assert f"{good}:1: error:" in done.stdout and "bad.yaml:4: malformed YAML" in done.stderr


def test_slip_of_a_plugin_knob_without_a_family_is_flagged():
    """A vendor plugin's VENDOR_COPY_MODE has no name family in lint; a one-letter slip of it
    is still caught from the knob records, and unrelated variables are left alone."""
    from advisor.knobs import Knob

    knob = Knob(library="vendor", name="VENDOR_COPY_MODE", type="enum", allowed=["fast", "safe"],
                source="test")
    entries = lint.parse_env_text("VENDOR_COPY_MOD=fast\nVENDOR_HOME=/opt/v\nSLURM_JOB_ID=1\n",
                                  path="site.env")
    found = lint.lint_entries(entries, knobs=[knob], libraries=BUILTIN_LIBRARIES)
    assert [(f.line, f.finding.id, f.severity) for f in found] == [(1, "unknown-name", "warning")]
    assert "did you mean VENDOR_COPY_MODE (vendor)?" in found[0].finding.message
