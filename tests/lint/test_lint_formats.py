"""lint reads what ``advisor emit`` writes (every format it parses), plus hand-written sh files,
and the ``advisor lint`` command's output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import sample_profile

from advisor import lint as L
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
    from advisor.emit import EmitOptions, render
    from advisor.plugins import collect, make_plugin_manager

    prof = _profile()
    reg = collect(make_plugin_manager(entry_points=False))
    text = render(prof, fmt, reg.emitters, EmitOptions())
    path = tmp_path / f"site{SUFFIX[fmt]}"
    path.write_text(text)
    entries = L.read_env_file(path)
    env = L.resolve_env(entries)
    want = {s.name: str(s.value) for _r, _c, s in prof.settings()}
    assert env == want, fmt
    lines = text.splitlines()
    for e in entries:  # every entry points at a line that names it
        assert e.line is not None and e.name in lines[e.line - 1]
    glibc = [e for e in entries if e.name == "GLIBC_TUNABLES"]
    # list variables merge with the existing value, except in EasyBuild (it cannot append)
    assert any(e.append for e in glibc) == (fmt != "easybuild"), fmt
    # the format is recognised from the text alone, too
    assert L.resolve_env(L.read_env_text(text, "<text>")) == want, fmt


def test_profile_toml_is_read(tmp_path):
    from advisor.profile import save_profile

    path = save_profile(_profile(), tmp_path / "p.toml")
    names = {e.name for e in L.read_env_file(path)}
    assert {"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "GLIBC_TUNABLES"} <= names


def test_sh_quoting_continuations_and_expansions():
    text = ("# comment MPIR_CVAR_X=1\n"
            "export A='one two' B=\"x\"; C=3 export D\n"
            "E=\"multi\nline\"\n"
            "export F=${HOME}/x\n"
            "G=1 \\\n  H=2 prog\n"
            "if [ -n \"${GLIBC_TUNABLES-}\" ]; then GLIBC_TUNABLES=\"${GLIBC_TUNABLES}\"':x=1'; fi\n")
    es = {e.name: e for e in L.parse_env_text(text, path="q.sh")}
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
    assert hit and hit[0]["path"] == L.ENV_PATH and hit[0]["line"] is None
    assert "MPIR_CVAR_CH4_CMA_ENABLE?" in hit[0]["message"]


# --------------------------------------------------------------------------- Spack, EasyBuild, JSON


def test_spack_yaml_sections_and_lines():
    text = ("spack:\n  specs: [zlib]\n  env_vars:\n    set:\n      A_ONE: '1'\n"
            "      A_NUM: 2\n    append_path:\n      A_LIST: x\n    unset: [B]\n"
            "    prepend_path:\n      A_PRE: y\n")
    entries = L.parse_env_text(text, path="spack.yaml")
    got = [(e.name, e.value, e.line, e.append, e.separator) for e in entries]
    assert got == [("A_ONE", "1", 5, False, None), ("A_NUM", "2", 6, False, None),
                   ("A_LIST", "x", 8, True, ":"), ("A_PRE", "y", 11, True, ":")]


@pytest.mark.parametrize("text, word", [
    ("env_vars:\n  set:\n    A: [1, 2\n", "malformed YAML"),
    ("spack:\n  specs: []\n", "no 'env_vars'"),
])
def test_spack_bad_input(text, word):
    with pytest.raises(L.BadInputError, match=word):
        L.parse_env_text(text, path="x.yaml")


def test_easybuild_modextravars_read_without_running_anything(tmp_path):
    marker = tmp_path / "MARKER"
    text = (f"import os\nos.system('touch {marker}')\nname = 'x'\n"
            "modextravars = {\n    'A_ONE': '1',\n"
            "    'A_DICT': {'value': 'v', 'resolve_env_vars': False},\n"
            "    'bad name': 'z',\n}\n")
    entries = L.parse_env_text(text, path="x.eb")
    assert [(e.name, e.value, e.line) for e in entries if e.problem is None] == [
        ("A_ONE", "1", 5), ("A_DICT", "v", 6)]
    (bad,) = [e for e in entries if e.problem]
    assert bad.line == 7 and "not an environment variable name" in bad.problem
    assert not marker.exists()


@pytest.mark.parametrize("text, word", [
    ("modextravars = {'A': '1'\n", "not Python"),
    ("name = 'x'\n", "no modextravars"),
])
def test_easybuild_bad_input(text, word):
    with pytest.raises(L.BadInputError, match=word):
        L.parse_env_text(text, path="x.eb", fmt="easybuild")


def test_plain_json_object_of_names():
    text = '{\n  "MPIR_CVAR_CH4_CMA_ENABLE": 1,\n  "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"\n}\n'
    entries = L.parse_env_text(text, path="env.json")
    assert [(e.name, e.value, e.line) for e in entries] == [
        ("MPIR_CVAR_CH4_CMA_ENABLE", "1", 2), ("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 3)]
    with pytest.raises(L.BadInputError, match="object of names to values"):
        L.parse_env_text('{"A": [1, 2]}', path="x.json")


def test_cli_lint_reads_standard_input(advisor_home):
    done = subprocess.run([sys.executable, "-m", "advisor", "lint", "-"], capture_output=True,
                          text=True, timeout=120, input="export MPIR_CVAR_CH4_CMA_ENABLED=1\n")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("<stdin>:1: error:") and "MPIR_CVAR_CH4_CMA_ENABLE?" in done.stdout
    assert "1 variable(s) read" in done.stderr
    done = subprocess.run([sys.executable, "-m", "advisor", "lint", "-"], capture_output=True,
                          timeout=120, input=b"\xff\xfe binary")
    assert done.returncode == 2 and b"<stdin>: not UTF-8" in done.stderr
