"""advisor's own output lints clean: what emit writes from a real profile, lint accepts, in
every format (Spack YAML and EasyBuild easyconfigs included).

Found by a new-user walkthrough: lint read glibc's hex tunable values as bad integers, and the
csh file's if/else branches as a duplicate setting.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import BUILTIN_LIBRARIES, REPO, recorded_catalogues

PROFILE = REPO / "profiles" / "x86_64-icelake-2core-vm.toml"
FORMATS = ["env", "csh", "fish", "lmod", "tcl", "spack", "easybuild", "json", "toml"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_emitted_file_lints_clean(tmp_path, fmt):
    """Linted as on the machine the profile was made for (its facts, the recorded MPICH 5.0.2
    and glibc 2.36 catalogues): on an aarch64 host the profile's x86 glibc tunable is rightly
    unknown, which says nothing about whether lint reads emit's output."""
    from advisor import lint
    from advisor.plugins import load
    from advisor.profile import load_profile

    out = tmp_path / f"site.{fmt}"
    subprocess.run([sys.executable, "-m", "advisor", "emit", "-f", fmt, "--profile", str(PROFILE),
                    "-o", str(out)], check=True, capture_output=True, timeout=120)
    reg = load()
    entries = lint.read_env_text(out.read_text(), str(out))
    assert entries and not [e for e in entries if e.problem], entries
    found = lint.lint_entries(entries, facts=load_profile(PROFILE).facts, knobs=reg.knobs,
                              catalogues=recorded_catalogues(), probes=reg.probes,
                              libraries=BUILTIN_LIBRARIES)
    assert not [f for f in found if f.severity in ("error", "warning")], \
        [(f.severity, f.finding.id, f.finding.message) for f in found]


def test_cli_lint_of_an_emitted_file_exits_0_when_clean(tmp_path):
    """The same through the CLI, on settings that hold on any host (an MPICH threshold)."""
    out = tmp_path / "site.sh"
    out.write_text("export MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=8192\n")
    proc = subprocess.run([sys.executable, "-m", "advisor", "lint", "--json", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '"severity": "error"' not in proc.stdout and '"severity": "warning"' not in proc.stdout


def test_a_file_lint_cannot_read_is_no_all_clear(tmp_path):
    """Prose is not an env file: lint says so instead of reporting clean.  No format claims
    it, so it is refused (one line listing the formats, exit 2); read as sh on request, no
    line of it reads as a setting (exit 1)."""
    out = tmp_path / "notes.txt"
    out.write_text("Remember to set the CMA threshold to 8 KiB before the run.\n")
    proc = subprocess.run([sys.executable, "-m", "advisor", "lint", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if "no format claims" in ln]
    assert str(out) in line and "sh, spack" in line and "--format" in line
    proc = subprocess.run([sys.executable, "-m", "advisor", "lint", "--format", "sh", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "unreadable-line" in proc.stdout and "no line of this file reads" in proc.stdout


def test_emit_names_the_default_confirmations_it_leaves_out(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "advisor", "emit", "--profile", str(PROFILE),
                           "--plugin", "mpich-cma"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    code = [ln for ln in proc.stdout.splitlines() if not ln.startswith("#")]
    assert not any("MPIR_CVAR" in ln for ln in code)  # the advice is MPICH 5's own default here
    assert ("# left out: MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=8192 (only confirms the library "
            "default; --all writes it)") in proc.stdout.splitlines()
    assert "--all writes them too" in proc.stderr and "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD" in proc.stderr
