"""Helpers of tests/config: the real ``advisor`` console script run in a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import REPO, VENV_BIN


def advisor(*args: str, env: dict | None = None, input: str | None = None):
    """Run the real ``advisor`` console script (of this interpreter's venv) in a process."""
    exe = VENV_BIN / "advisor"
    argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "advisor"]
    run_env = dict(os.environ)
    run_env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "plugins"),
                                             run_env.get("PYTHONPATH", "")])
    run_env.update(env or {})
    return subprocess.run([*argv, *args], capture_output=True, text=True, env=run_env,
                          input=input, timeout=120, cwd=str(Path(REPO)))
