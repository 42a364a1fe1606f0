"""Issue 29's polish, in real processes: did-you-mean for a format or a shipped profile named
without its ``@`` (one line, exit 2), and ``ADVISOR_DISABLE_PLUGINS`` naming no plugin is a
warning, not silence."""

from __future__ import annotations

import pytest

from config_support import advisor

pytestmark = pytest.mark.integration

PROFILE = "@x86_64-icelake-2core-vm"


def _error_line(proc) -> str:
    """The one error line of a refused command (other stderr lines are plugin warnings)."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    return line


@pytest.mark.parametrize("word, meant", [("lua", "lmod"), ("bash", "env"), ("tcsh", "csh"),
                                         ("environment-modules", "tcl"), ("lmdo", "lmod"),
                                         ("spack-module", "spack-modules")])
def test_emit_suggests_the_format_meant(word, meant):
    line = _error_line(advisor("emit", "-p", PROFILE, "-f", word))
    assert f"unknown emit format '{word}': did you mean {meant}?" in line, line
    assert "known formats: " in line


def test_emit_names_no_format_when_nothing_is_close():
    line = _error_line(advisor("emit", "-p", PROFILE, "-f", "xyzzy"))
    assert "did you mean" not in line and "known formats: " in line


def test_a_misspelt_format_is_the_news_before_a_missing_profile(tmp_path):
    line = _error_line(advisor("emit", "-p", str(tmp_path / "none.toml"), "-f", "lua"))
    assert "unknown emit format 'lua': did you mean lmod?" in line, line


def test_lint_suggests_the_format_meant(tmp_path):
    env_file = tmp_path / "site.sh"
    env_file.write_text("export MPIR_CVAR_CH4_CMA_ENABLE=1\n")
    line = _error_line(advisor("lint", "-f", "lua", str(env_file)))
    assert "--format 'lua': did you mean lmod?" in line and "auto" in line


@pytest.mark.parametrize("given", ["x86_64-icelake-2core-vm", "x86_64-icelake-2core-vm.toml",
                                   "x86_64-icelake-2core"])
def test_a_shipped_name_without_its_at_is_suggested(given):
    line = _error_line(advisor("emit", "-p", given))
    assert f"--profile {given}: no such file; did you mean @x86_64-icelake-2core-vm?" in line


def test_a_misspelt_shipped_name_is_suggested():
    line = _error_line(advisor("emit", "-p", "@x86_64-icelake-2core-vm-openmp"))
    assert "did you mean @x86_64-icelake-2core-vm-openmpi?" in line


def test_a_file_path_that_is_missing_is_not_taken_for_a_shipped_name(tmp_path):
    line = _error_line(advisor("emit", "-p", str(tmp_path / "x86_64-icelake-2core-vm.toml")))
    assert "did you mean" not in line


def test_disabling_an_unknown_plugin_warns_once_with_the_known_ones():
    proc = advisor("emit", "--list", env={"ADVISOR_DISABLE_PLUGINS": "host-bufer,openmpi"})
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if "ADVISOR_DISABLE_PLUGINS" in ln]
    assert "warning: ADVISOR_DISABLE_PLUGINS: no plugin named 'host-bufer'" in line
    assert "did you mean host-buffer?" in line
    known = line.split("known plugins: ", 1)[1]
    assert {"host-buffer", "memory-pool", "mpich-cma", "openmpi"} <= set(known.rstrip(")")
                                                                        .split(", "))


def test_disabling_known_plugins_says_nothing():
    proc = advisor("emit", "--list", env={"ADVISOR_DISABLE_PLUGINS": "openmpi,host-buffer"})
    assert proc.returncode == 0 and "ADVISOR_DISABLE_PLUGINS" not in proc.stderr, proc.stderr
