"""advisor's own output lints clean: what emit writes from a real profile, lint accepts.

Found by a new-user walkthrough: lint read glibc's hex tunable values as bad integers, and the
csh file's if/else branches as a duplicate setting.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import REPO

PROFILE = REPO / "profiles" / "x86_64-icelake-2core-vm.toml"
FORMATS = ["env", "csh", "fish", "lmod", "tcl", "json", "toml"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_emitted_file_lints_clean(tmp_path, fmt):
    out = tmp_path / f"site.{fmt}"
    subprocess.run([sys.executable, "-m", "advisor", "emit", "-f", fmt, "--profile", str(PROFILE),
                    "-o", str(out)], check=True, capture_output=True, timeout=120)
    proc = subprocess.run([sys.executable, "-m", "advisor", "lint", "--json", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '"severity": "error"' not in proc.stdout and '"severity": "warning"' not in proc.stdout, \
        proc.stdout
