"""advisor lint with the mpich-cma plugin's checks: the cray-xpmem-gpu case and a real blocked-CMA
condition (the seccomp filter of ``advisor.measure.mpi.deny_cma``)."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys

import pytest
from support import BUILTIN_LIBRARIES, case

from advisor import lint
from advisor.models import Facts


def _registry():
    from advisor.plugins import load

    reg = load()
    probe = reg.probes.get("mpich-cma")
    if probe is None or not callable(getattr(probe, "lint", None)):
        pytest.skip("the mpich-cma probe exposes no lint() in this checkout")
    return reg


def _cray_facts(c: dict) -> Facts:
    f = c["facts"]
    mpi = {k: f["mpi"][k] for k in ("implementation", "flavour", "version") if k in f["mpi"]}
    extra = {"mpich-cma": {"xpmem_device": bool(f["xpmem_device_present"])}}
    return Facts.model_validate({"mpi": mpi, "extra": extra})


def test_cray_xpmem_gpu_env_file_gives_inert_xpmem():
    reg = _registry()
    c = case("cray-xpmem-gpu")
    text = c["env_file"]["text"]
    entries = lint.parse_env_text(text, path="cray.env")
    facts = _cray_facts(c)
    findings = lint.lint_entries(entries, facts=facts, knobs=reg.knobs, probes=reg.probes,
                                 libraries=BUILTIN_LIBRARIES)
    statement = c["expect"]["finding_1"].split(":")[0]  # "... XPMEM is inert when ...=1"
    inert = [f for f in findings if statement in f.finding.message]
    assert inert, [f.finding.message for f in findings]
    mode_line = next(i for i, line in enumerate(text.splitlines(), 1)
                     if line.startswith("MPICH_SMP_SINGLE_COPY_MODE"))
    assert inert[0].line == mode_line and inert[0].finding.remedy
    # finding_2: without the xpmem device, XPMEM cannot work at all
    assert any("xpmem" in f.finding.message.lower() and "device" in f.finding.message
               and f.severity == "error" for f in findings)
    # values are valid for the Cray knobs (valid_mode_values from the case)
    assert "XPMEM" in c["expect"]["valid_mode_values"]
    assert not [f for f in findings if f.finding.id == "invalid-value"]


def test_cray_xpmem_gpu_upstream_names_are_the_wrong_family():
    reg = _registry()
    c = case("cray-xpmem-gpu")
    assert "never MPIR_CVAR_CH4_CMA_" in c["expect"]["settings_family"]
    entries = lint.parse_env_text("MPIR_CVAR_CH4_CMA_ENABLE=1\n", path="cray.env")
    findings = lint.lint_entries(entries, facts=_cray_facts(c), knobs=reg.knobs, probes=reg.probes,
                                 libraries=BUILTIN_LIBRARIES)
    assert any(f.finding.id in ("flavour-mismatch", "cma-wrong-family") for f in findings)


def _seccomp_available() -> None:
    if ctypes.util.find_library("seccomp"):
        return
    try:
        import seccomp  # noqa: F401
    except ImportError:
        pytest.skip("libseccomp not installed (apt-get install libseccomp2 python3-seccomp)")


def _lint_env(extra_env: dict, *, deny: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(lint.MPICH_PREFIXES)}
    env.update(extra_env)
    argv = [sys.executable, "-m", "advisor", "lint", "--env", "--json"]
    if deny:
        argv = [sys.executable, "-m", "advisor.measure.mpi.deny_cma", "--"] + argv
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


def test_lint_env_under_seccomp_flags_explicit_cma_enable(advisor_home):
    _registry()
    _seccomp_available()
    done = _lint_env({"MPIR_CVAR_CH4_CMA_ENABLE": "1"}, deny=True)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    hit = [d for d in data if d["id"] == "cma-enable-blocked"]
    assert hit and hit[0]["severity"] == "error", data
    assert hit[0]["name"] == "MPIR_CVAR_CH4_CMA_ENABLE" and hit[0]["path"] == lint.ENV_PATH
    assert "seccomp" in hit[0]["message"] and hit[0]["remedy"]
    # the same environment without the filter: CMA works here, so no such finding
    free = _lint_env({"MPIR_CVAR_CH4_CMA_ENABLE": "1"}, deny=False)
    from advisor.measure.mpi.sibling import sibling_probe

    if sibling_probe().get("result") == "ok":
        assert not [d for d in json.loads(free.stdout) if d["id"] == "cma-enable-blocked"]
        assert free.returncode == 0, free.stdout


@pytest.mark.parametrize("text, flavour, off_line", [
    ("export MPIR_CVAR_CH4_CMA_ENABLE=0\nexport MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=8192\n",
     "upstream", 2),
    ("MPICH_SMP_SINGLE_COPY_SIZE=8192\nMPICH_SMP_SINGLE_COPY_MODE=NONE\n", "cray", 1),
])
def test_threshold_with_single_copy_off_is_inert(text, flavour, off_line):
    """Found by a new-user walkthrough: a threshold beside the switch that turns single copy off
    does nothing, and lint said nothing about it."""
    reg = _registry()
    facts = Facts.model_validate({"mpi": {"implementation": "mpich", "flavour": flavour,
                                          "version": "5.0.2" if flavour == "upstream" else "8.1.30"}})
    entries = lint.parse_env_text(text, path="site.env")
    findings = lint.lint_entries(entries, facts=facts, knobs=reg.knobs, probes=reg.probes,
                                 libraries=BUILTIN_LIBRARIES)
    (inert,) = [f for f in findings if f.finding.id == "cma-threshold-inert"]
    assert inert.severity == "warning" and "does nothing" in inert.finding.message
    assert inert.line == off_line  # the threshold's own line
    on = text.replace("=0\n", "=1\n").replace("=NONE\n", "=CMA\n")
    findings = lint.lint_entries(lint.parse_env_text(on, path="site.env"), facts=facts,
                                 knobs=reg.knobs, probes=reg.probes, libraries=BUILTIN_LIBRARIES)
    assert not [f for f in findings if f.finding.id == "cma-threshold-inert"]
