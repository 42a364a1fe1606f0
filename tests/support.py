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


#: The machine the lint catalogues were recorded on: the MPICH 5.0.2 wheel's ``mpivars`` and
#: glibc 2.36's ``ld.so --list-tunables`` (x86-64).  Lint tests that are about parsing or rules,
#: not about this host, use these instead of the live ones: an aarch64 glibc has no x86 tunables,
#: a glibc < 2.33 has no list at all.
MPIVARS_502 = DATA / "lint" / "mpivars-mpich-5.0.2.txt"
TUNABLES_236 = DATA / "lint" / "glibc-2.36-list-tunables.txt"
SHIPPED_PROFILE = REPO / "profiles" / "x86_64-icelake-2core-vm.toml"


def recorded_facts():
    """Facts of the recording machine as lint needs them: upstream MPICH 5.0.2, glibc 2.36
    (security facts unknown, so nothing is judged blocked)."""
    from advisor.models import Facts

    return Facts(mpi={"implementation": "mpich", "flavour": "upstream", "version": "5.0.2"},
                 kernel={"glibc_version": "2.36"})


#: The built-in library records (``advisor.libraries.builtin_libraries``), for calls that
#: take the registry's ``libraries`` in tests without a plugin registry.
BUILTIN_LIBRARIES = __import__("advisor.libraries", fromlist=["x"]).builtin_libraries()


def recorded_catalogues() -> dict:
    """The libraries' own lists as recorded (``advisor.lint`` catalogues), never this host's."""
    from advisor import lint

    return {"mpich": lint.parse_mpivars(MPIVARS_502.read_text(), source="mpivars (recorded)"),
            "glibc": lint.parse_glibc_tunables(TUNABLES_236.read_text())}


def profile_made_here(dest: Path, source: Path = SHIPPED_PROFILE) -> Path:
    """Write ``source`` to ``dest`` with this machine's facts and fingerprint, so a command that
    compares the profile with the machine (emit's other-machine warning) finds no difference
    on any host.  Returns ``dest``."""
    from advisor.facts import detect_fingerprint_facts
    from advisor.profile import load_profile
    from advisor.save import save_profile

    here = detect_fingerprint_facts()
    prof = load_profile(source)
    save_profile(prof.model_copy(update={"facts": here, "fingerprint": here.fingerprint()}), dest)
    return dest


def yama_scope():
    """This kernel's Yama ``ptrace_scope`` (0-3), or None without Yama."""
    try:
        return int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except (OSError, ValueError):
        return None


def need_mpich_keeps_cma() -> None:
    """Skip unless MPICH's init keeps CMA on when asked: it forces CMA off whenever Yama's
    ``ptrace_scope`` is not 0 (background.md, MPICH 5.0), and then no message takes the
    single-copy path whatever the test sets."""
    scope = yama_scope()
    if scope not in (None, 0):
        pytest.skip(f"Yama ptrace_scope={scope}: MPICH turns CMA off at init on this machine")


def need_cma_usable() -> None:
    """Skip unless CMA really works between two sibling processes here (the live
    ``process_vm_readv`` test of ``advisor.measure.mpi.sibling``) and MPICH keeps it on: a
    machine whose Yama, seccomp filter or user namespaces block CMA is a machine where the
    plugin's right answer is "blocked"."""
    need_mpich_keeps_cma()
    from advisor.measure.mpi.usability import sibling_evidence

    ev = sibling_evidence("cma-sibling")
    if ev.values.get("result") != "ok":
        pytest.skip(f"CMA does not work between siblings here: {ev.values}")


class StubProbe:
    """A probe that is always usable, measures nothing and advises nothing: the base of the
    test probes that only override what a test is about (``verify``, a name)."""

    name = "stub"
    description = "test probe"

    def check(self, facts):
        from advisor.probe import Applicability

        return Applicability(usable=True)

    def measure(self, ctx):
        return []

    def recommend(self, evidence, facts):
        from advisor.models import Advice

        return Advice()


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


def project_venv(venv: Path, packages: list[str], tools: tuple[str, ...], imports: str,
                 label: str) -> Path:
    """The ``bin/`` folder of a cached venv at ``venv`` holding ``packages`` (pip requirement
    strings, e.g. ``mpich==4.3.2``) and this project (editable, with the dependencies its
    pyproject.toml declares, so the list is never kept twice), built once under a file lock
    and rebuilt when one of ``tools`` is missing from ``bin/`` or ``python -c "import
    <imports>"`` fails there.  The check runs without PYTHONPATH: a test run's PYTHONPATH would
    make an uninstalled checkout importable and hide a venv without this project in it.  Skips
    the test, with pip's reason, when the venv cannot be built (no package index reachable)."""
    import os
    import subprocess

    from filelock import FileLock

    py = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(venv) + ".lock"):
        clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        ok = all((venv / "bin" / t).exists() for t in tools) and subprocess.run(
            [str(py), "-c", f"import {imports}"], capture_output=True, env=clean).returncode == 0
        if not ok:
            steps = [[sys.executable, "-m", "venv", str(venv)],
                     [str(py), "-m", "pip", "install", "-q", *packages, "-e", str(REPO)]]
            for step in steps:
                done = subprocess.run(step, capture_output=True, text=True, timeout=900)
                if done.returncode != 0:
                    pytest.skip(f"cannot build the {label} venv ({' '.join(step[:4])}): "
                                f"{done.stderr.strip()[-300:]}")
    return venv / "bin"


def evidence_with(evidence, ev_id: str, *, notes=None, values=None) -> list:
    """``evidence`` with the record ``ev_id``'s condition notes and values updated (constructed
    evidence for the artefact-veto tests: a recorded sweep made to carry a planted label)."""
    out = []
    for e in evidence:
        if e.id == ev_id:
            cond = e.conditions.model_copy(update={"notes": {**e.conditions.notes,
                                                             **(notes or {})}})
            e = e.model_copy(update={"conditions": cond, "values": {**e.values, **(values or {})}})
        out.append(e)
    return out
