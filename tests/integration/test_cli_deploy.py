"""The CLI polish of issue 18, as a user runs it (real subprocesses, real shells): ``advisor``
alone, shipped profiles by name, shell completion in bash/zsh/fish, progress lines in a log,
``--json`` on probe / ``emit --list`` / ``facts``, and no visible lock beside ``emit -o``."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest

from support import SHIPPED_PROFILE, tool

ADVISOR = [sys.executable, "-m", "advisor"]
SHIPPED = "@" + SHIPPED_PROFILE.stem
#: rich decides "terminal" from these too: a test of the non-terminal path drops them
_TERMINAL_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_TERMINAL")


def run(*args, env=None, check=True, timeout=120, **kw):
    full = {k: v for k, v in os.environ.items() if k not in _TERMINAL_ENV}
    full.update(env or {})
    proc = subprocess.run([*ADVISOR, *args], capture_output=True, text=True, timeout=timeout,
                          env=full, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"advisor {' '.join(args)} -> {proc.returncode}\n{proc.stderr}")
    return proc


def test_advisor_alone_prints_help_and_exits_0():
    proc = run()
    assert proc.returncode == 0
    assert proc.stdout.startswith("Usage: advisor") and "probe" in proc.stdout
    assert "profiles" in proc.stdout and "Exit codes" in proc.stdout


def test_profiles_list_and_profile_by_name(advisor_home):
    rows = json.loads(run("profiles", "list", "--json").stdout)
    assert SHIPPED[1:] in [r["name"] for r in rows]
    assert SHIPPED in run("profiles", "list", env={"COLUMNS": "400"}).stdout
    by_name = run("emit", "-f", "env", "-p", SHIPPED).stdout
    by_path = run("emit", "-f", "env", "-p", str(SHIPPED_PROFILE)).stdout
    # the label line names the file read; everything else is the same
    strip = lambda t: [ln for ln in t.splitlines() if str(SHIPPED_PROFILE.parent) not in ln
                       and "profiles/" not in ln]
    assert strip(by_name) == strip(by_path) and "export " in by_name
    bad = run("show", "-p", "@no-such-machine", check=False)
    assert bad.returncode == 2 and "no shipped profile" in bad.stderr
    assert "Traceback" not in bad.stderr
    ro = run("probe", "-o", SHIPPED, check=False)
    assert ro.returncode == 2 and "read-only" in ro.stderr


def test_probe_log_has_a_line_per_plugin_step(tmp_path, advisor_home):
    """``advisor probe 2>log``: stderr is a file, so each step of each probe is one line with
    the elapsed seconds; ``--json`` puts the summary on stdout."""
    log = tmp_path / "log"
    target = tmp_path / "p.toml"
    with log.open("w") as fh:
        proc = subprocess.run(
            [*ADVISOR, "probe", "--plugin", "memory-pool", "--plugin", "openmpi", "--quick",
             "--time-budget", "60", "-o", str(target), "--json"],
            stdout=subprocess.PIPE, stderr=fh, text=True, timeout=300,
            env={k: v for k, v in os.environ.items() if k not in _TERMINAL_ENV})
    text = log.read_text()
    assert proc.returncode in (0, 3), text
    summary = json.loads(proc.stdout)
    assert summary["profile"] == str(target) and target.is_file()
    from advisor.profile import load_profile

    prof = load_profile(target)
    assert [p["probe"] for p in summary["probes"]] == [r.probe for r in prof.results]
    line = re.compile(r"^advisor: \[\s*(\d+\.\d) s\] ([a-z0-9-]+): (.+)$")
    steps: dict[str, list[str]] = {}
    for ln in text.splitlines():
        m = line.match(ln)
        if m:
            steps.setdefault(m.group(2), []).append(m.group(3))
    assert "\x1b[" not in text  # no terminal control sequences in a log
    for r in prof.results:
        got = [s for s in steps[r.probe] if s.split(" (")[0] in
               ("checking", "measuring", "recommending", "done")]
        want = ["checking"] + (["measuring"] if r.status == "ok" else []) + ["recommending"]
        assert [s.split(" (")[0] for s in got] == want + ["done"], steps[r.probe]
        assert re.fullmatch(r"done \(\d+\.\d s\)", got[-1])


def test_emit_list_json_and_facts_json_fingerprint():
    formats = {f["name"]: f for f in json.loads(run("emit", "--list", "--json").stdout)}
    plain = run("emit", "--list").stdout
    assert sorted(formats) == sorted(ln.split()[0] for ln in plain.splitlines())
    assert formats["env"]["kinds"] == ["env"] and formats["env"]["description"]
    bad = run("emit", "--json", check=False)
    assert bad.returncode == 2 and "--list" in bad.stderr
    data = json.loads(run("facts", "--json").stdout)
    from advisor.models import Facts

    fp = data.pop("fingerprint")
    assert re.fullmatch(r"[0-9a-f]{16}", fp)
    assert Facts.model_validate(data).fingerprint() == fp


def test_emit_output_leaves_no_visible_lock(tmp_path):
    mods = tmp_path / "modules" / "advisor"
    out = mods / "1.0.lua"
    # --mkdir: a new module tree (issue 27: -o creates no missing directory without it)
    run("emit", "-f", "lmod", "-p", str(SHIPPED_PROFILE), "-o", str(out), "--mkdir")
    assert [p.name for p in mods.iterdir() if not p.name.startswith(".")] == ["1.0.lua"]
    from advisor.save import lock_path

    assert lock_path(out).name == ".1.0.lua.lock"


# ------------------------------------------------------------------------- shell completion


@pytest.fixture
def advisor_on_path(tmp_path):
    """A directory holding an ``advisor`` command that runs this checkout's advisor (the
    completion scripts call ``advisor`` by name)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    exe = bin_ / "advisor"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m advisor "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return bin_


def _script(shell: str) -> str:
    text = run("completion", shell).stdout
    assert "_ADVISOR_COMPLETE" in text, text
    return text


def test_bash_completes_em_to_emit(tmp_path, advisor_on_path):
    bash = tool("bash")
    script = tmp_path / "advisor.bash"
    script.write_text(_script("bash"))
    drive = (f'source {script}; COMP_WORDS=(advisor em); COMP_CWORD=1; '
             f'_advisor_completion advisor; printf "%s\\n" "${{COMPREPLY[@]}}"')
    env = {**os.environ, "PATH": f"{advisor_on_path}:{os.environ['PATH']}"}
    proc = subprocess.run([bash, "--norc", "--noprofile", "-c", drive], capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["emit"]


def test_fish_completes_em_to_emit(tmp_path, advisor_on_path):
    fish = tool("fish")
    script = tmp_path / "advisor.fish"
    script.write_text(_script("fish"))
    env = {**os.environ, "PATH": f"{advisor_on_path}:{os.environ['PATH']}"}
    proc = subprocess.run([fish, "--no-config", "-c", f"source {script}; complete -C 'advisor em'"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert [ln.split("\t")[0] for ln in proc.stdout.splitlines()] == ["emit"]


def test_zsh_completion_script_loads(tmp_path):
    zsh = tool("zsh")
    script = tmp_path / "_advisor"
    script.write_text(_script("zsh"))
    assert "#compdef advisor" in script.read_text()
    proc = subprocess.run([zsh, "-f", "-c", f"autoload -U compinit && compinit -u && "
                           f"source {script} && whence -w _advisor_completion"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "function" in proc.stdout
    # what the script's function runs when `advisor em<TAB>` is typed in zsh
    answer = run(env={"_TYPER_COMPLETE_ARGS": "advisor em", "_ADVISOR_COMPLETE": "complete_zsh"})
    assert "emit" in answer.stdout and "probe" not in answer.stdout


def test_probe_on_a_terminal_keeps_the_progress_bar(tmp_path, advisor_home):
    """Under a pseudo-terminal (util-linux ``script``) the rich bar shows, not the log lines."""
    import shlex

    script = tool("script")
    target = tmp_path / "p.toml"
    cmd = shlex.join([*ADVISOR, "probe", "--plugin", "openmpi", "--plugin",
                      "memory-pool-device", "--quick", "-o", str(target)])
    proc = subprocess.run([script, "-qec", cmd, "/dev/null"], capture_output=True, text=True,
                          timeout=300, env={k: v for k, v in os.environ.items()
                                            if k not in _TERMINAL_ENV})
    assert proc.returncode in (0, 3), proc.stdout
    assert "openmpi: done" in proc.stdout and "\x1b[" in proc.stdout  # drawn by rich
    assert not re.search(r"advisor: \[\s*\d+\.\d s\]", proc.stdout)
