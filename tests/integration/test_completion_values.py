"""Shell completion of option values (issue 29, polish): format names, ``@`` shipped profiles,
plugin names and setting names, through the real completion machinery: ``advisor completion
bash|fish`` sourced by the real shell, which runs ``advisor`` in completion mode
(``_ADVISOR_COMPLETE``) with the words typed so far."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from support import REPO, tool

pytestmark = pytest.mark.integration

SHIPPED = sorted(p.stem for p in (REPO / "advisor" / "shipped").glob("*.toml")
                 if p.name != "index.toml")


@pytest.fixture(scope="module")
def shell_env(tmp_path_factory):
    """(scratch directory, environment) where ``advisor`` on PATH is this checkout's, and no
    configuration scope or disabled plugin of the machine is read."""
    tmp = tmp_path_factory.mktemp("complete")
    bin_ = tmp / "bin"
    bin_.mkdir()
    exe = bin_ / "advisor"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m advisor "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if k != "ADVISOR_DISABLE_PLUGINS"}
    env.update(PATH=f"{bin_}:{os.environ['PATH']}", ADVISOR_HOME=str(tmp / "home"),
               ADVISOR_SITE_CONFIG=str(tmp / "site.toml"),
               ADVISOR_USER_CONFIG=str(tmp / "user.toml"),
               PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "plugins"),
                                           os.environ.get("PYTHONPATH", "")]))
    return tmp, env


def _script(shell: str, env: dict) -> str:
    proc = subprocess.run([sys.executable, "-m", "advisor", "completion", shell],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def bash_complete(shell_env, *words: str) -> list[str]:
    """What bash offers for the last of ``words`` (COMPREPLY), as bash completion sets
    COMP_WORDS / COMP_CWORD before calling the script's function."""
    tmp, env = shell_env
    script = tmp / "advisor.bash"
    if not script.exists():
        script.write_text(_script("bash", env))
    array = " ".join(f"'{w}'" for w in ("advisor", *words))
    drive = (f"source {script}; COMP_WORDS=({array}); COMP_CWORD={len(words)}; "
             f'_advisor_completion advisor; printf "%s\\n" "${{COMPREPLY[@]}}"')
    proc = subprocess.run([tool("bash"), "--norc", "--noprofile", "-c", drive],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


def test_bash_completes_emit_and_lint_format_names(shell_env):
    assert bash_complete(shell_env, "emit", "-f", "lm") == ["lmod"]
    formats = bash_complete(shell_env, "emit", "--format", "")
    assert {"env", "lmod", "tcl", "spack-modules", "easybuild-hooks"} <= set(formats)
    lint = bash_complete(shell_env, "lint", "--format", "")
    assert lint[0] == "auto" and "lmod" in lint
    assert "cxx-header" in formats and "cxx-header" not in lint  # write-only: lint cannot read it
    assert bash_complete(shell_env, "report", "-f", "s") == ["svg"]


def test_bash_completes_shipped_profiles_after_the_at(shell_env):
    # bash splits "@" off the word (it is in COMP_WORDBREAKS): "-p @<TAB>" completes "@"
    assert bash_complete(shell_env, "emit", "-p", "@") == [f"@{n}" for n in SHIPPED]
    assert bash_complete(shell_env, "explain", "X", "--profile", "@x86_64-icelake-2core-vm-o") \
        == ["@x86_64-icelake-2core-vm-openmpi"]
    # as readline hands "-p @x86_64-...-o<TAB>" over ("@" is in COMP_WORDBREAKS)
    assert bash_complete(shell_env, "emit", "-p", "@", "x86_64-icelake-2core-vm-o") \
        == ["@x86_64-icelake-2core-vm-openmpi"]
    # a word without "@" is a file: no candidates, so bash's "-o default" completes files
    assert bash_complete(shell_env, "emit", "-p", "x86") == []


def interactive_bash(shell_env, typed: str) -> str:
    """The command line an interactive bash (under util-linux ``script``, a pseudo-terminal)
    holds after ``typed`` and one TAB: readline splits the words by ``COMP_WORDBREAKS`` and
    replaces text as a user sees it, which COMP_WORDS set by hand does not show.  The line is
    read back by turning it into ``echo LINE > FILE`` (Ctrl-A, Ctrl-E) and running it."""
    tmp, env = shell_env
    rc = tmp / "interactive.bash"
    rc.write_text(_script("bash", env))
    result = tmp / "line.txt"
    result.unlink(missing_ok=True)
    proc = subprocess.Popen([tool("script"), "-qec", f"bash --rcfile {rc} -i", "/dev/null"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        proc.stdin.write(f"{typed}\t\x01echo \x05 > {result}\rexit\r".encode())
        proc.stdin.flush()
        proc.wait(timeout=120)  # bash reads the keys in order: exit comes after the echo
    finally:
        proc.kill()
    return result.read_text().strip()


def test_interactive_bash_completes_a_shipped_name_after_its_at(shell_env):
    # "@" is in bash's COMP_WORDBREAKS: readline hands "@" and "x86..." as two words
    assert interactive_bash(shell_env, "advisor emit -p @x86_64-icelake-2core-vm-o") \
        == "advisor emit -p @x86_64-icelake-2core-vm-openmpi"
    assert interactive_bash(shell_env, "advisor emit -p @") \
        == "advisor emit -p @x86_64-icelake-2core-vm"  # the names' common prefix
    assert interactive_bash(shell_env, "advisor emit -f lm") == "advisor emit -f lmod"


def test_bash_completes_plugin_and_probe_names(shell_env):
    assert bash_complete(shell_env, "probe", "--plugin", "mpich") == ["mpich-cma"]
    assert "host-buffer" in bash_complete(shell_env, "probe", "--skip-plugin", "h")
    names = bash_complete(shell_env, "emit", "--plugin", "")
    assert {"mpich-cma", "host-buffer", "memory-pool", "openmpi"} <= set(names)


def test_bash_completes_setting_names_and_config_keys(shell_env):
    name = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"
    assert name in bash_complete(shell_env, "explain", "MPIR_CVAR_CH4_IPC")
    assert bash_complete(shell_env, "config", "set", "settings.pin.MPIR_CVAR_CH4_IPC_CMA_P") \
        == [f"settings.pin.{name}"]
    assert f"settings.exclude.{name}" in bash_complete(shell_env, "config", "get",
                                                       "settings.exclude.MPIR")
    assert bash_complete(shell_env, "config", "get", "laun") == ["launcher.command"]


def test_a_bad_configuration_completes_nothing_and_prints_nothing(shell_env):
    tmp, env = shell_env
    (tmp / "user.toml").write_text("[settings\n")  # malformed TOML
    try:
        assert bash_complete(shell_env, "emit", "-f", "lm") == []  # stderr checked empty
    finally:
        (tmp / "user.toml").unlink()


def test_fish_completes_a_shipped_profile_with_its_machine(shell_env):
    tmp, env = shell_env
    script = tmp / "advisor.fish"
    script.write_text(_script("fish", env))
    typed = "advisor emit -p @x86_64-icelake-2core-vm-o"
    proc = subprocess.run([tool("fish"), "--no-config", "-c",
                           f"source {script}; complete -C '{typed}'"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    value, _, machine = line.partition("\t")
    assert value == "@x86_64-icelake-2core-vm-openmpi" and machine, line
