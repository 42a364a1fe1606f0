"""Test support: the field cases the project owns (tests/cases), recorded data, tool lookups.

Import in tests as ``from support import case, tool, REPO, DATA``."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
#: the field cases, one real public report each (copied from the steering folder, source kept in
#: each file's ``[case] source``); a case the tests ask for must be here, never skipped
CASES = REPO / "tests" / "cases"
DATA = REPO / "tests" / "data"
VENV_BIN = Path(sys.executable).parent


def case(name: str) -> dict:
    """Load ``tests/cases/<name>.toml`` (expected values come from the file, never retyped).

    Raises FileNotFoundError for a case the project does not have: a missing case is a failure,
    never a skip."""
    path = CASES / f"{name}.toml"
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


def sample_profile(**overrides):
    """A small valid Profile built from the models (for tests that need any profile)."""
    from advisor.models import (Evidence, Facts, Finding, PluginResult, Point, Profile,
                                Provenance, Recommendation, Series, Setting, Stats)

    facts = Facts(hostname="node001", cpu={"arch": "x86_64", "cores_logical": 2},
                  mpi={"implementation": "mpich", "flavour": "upstream", "version": "5.0.2"})
    st = Stats(n=3, median=1.0, mean=1.0, p5=0.9, p95=1.1, min=0.9, max=1.1)
    ev = Evidence(id="sweep", series=[Series(name="bw", unit="bytes/s", x_name="size",
                                             x_unit="bytes", points=[Point(x=8192.0, samples=[1.0, 0.9, 1.1], stats=st)])])
    rec = Recommendation(id="cma-threshold", title="use CMA from 8 KiB", rationale="measured",
                         confidence="high", evidence=["sweep"], settings=[
                             Setting(library="mpich", flavour="upstream",
                                     name="MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", value=8192,
                                     type="bytes", unit="bytes", default=16384, versions=">=4.3")])
    res = PluginResult(plugin="mpich-cma", probe="mpich-cma", status="ok", duration_s=1.0,
                       recommendations=[rec], evidence=[ev],
                       findings=[Finding(id="demo", severity="info", message="demo")])
    data = dict(provenance=Provenance(advisor_version="0.1.0", command="advisor probe",
                                      created="2026-11-30T00:00:00+00:00", hostname="node001"),
                fingerprint=facts.fingerprint(), facts=facts, results=[res])
    data.update(overrides)
    return Profile(**data)
