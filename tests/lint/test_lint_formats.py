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

PARSED_FORMATS = ("env", "csh", "fish", "tcl", "lmod", "json", "toml")
SUFFIX = {"env": ".sh", "csh": ".csh", "fish": ".fish", "tcl": "", "lmod": ".lua", "json": ".json",
          "toml": ".toml"}


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
    assert any(e.append for e in glibc), fmt  # list variables merge with the existing value


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
