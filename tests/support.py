"""Test support: the field cases from ../shared/cases, recorded data, tool lookups.

Import in tests as ``from support import case, tool, REPO, DATA``."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
CASES = Path(os.environ.get("ADVISOR_CASES", REPO.parent / "shared" / "cases"))
DATA = REPO / "tests" / "data"
VENV_BIN = Path(sys.executable).parent


def case(name: str) -> dict:
    """Load ``../shared/cases/<name>.toml`` (expected values come from the file, never retyped)."""
    path = CASES / f"{name}.toml"
    if not path.exists():
        pytest.skip(f"case file {path} not present (the shared/ folder is beside the checkout)")
    with path.open("rb") as fh:
        return tomllib.load(fh)


def tool(name: str) -> str:
    """Path of a command-line tool from the venv or PATH, or skip the test with the reason."""
    cand = VENV_BIN / name
    if cand.exists():
        return str(cand)
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} not installed here (CI installs it through .ci/run)")
    return found
