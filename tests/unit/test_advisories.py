"""Advisories (issue 28, part 7): the shipped records are well-formed and cited, and a recorded
machine that matches one gets it as a probe finding, one that does not gets none.

The facts are those of the shipped Open MPI profile (``advisor/shipped/
x86_64-icelake-2core-vm-openmpi.toml``: Open MPI 5.0.11 with UCX 1.20.1, in Docker with
CAP_SYS_PTRACE), with the version or security facts changed as each test says."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import BUILTIN_LIBRARIES, REPO

from advisor.libraries import ucx
from advisor.libraries.advisories import (AdvisoryError, check_against, leading_version, load,
                                          matches, read)
from advisor.models import Facts
from advisor.profile import load_profile
from advisor.runner import advisory_result, run_probes

SHIPPED = REPO / "advisor" / "shipped" / "x86_64-icelake-2core-vm-openmpi.toml"
LIBRARIES = {**BUILTIN_LIBRARIES, ucx.NAME: ucx.record()}


def shipped_facts(**changes) -> Facts:
    """The shipped profile's facts; ``changes`` maps ``section`` -> {field: value}."""
    facts = load_profile(SHIPPED).facts
    update = {k: getattr(facts, k).model_copy(update=v) for k, v in changes.items()
              if k != "extra"}
    if "extra" in changes:
        update["extra"] = {**facts.extra, **changes["extra"]}
    return facts.model_copy(update=update)


def test_the_shipped_records_are_well_formed_and_cited():
    records = load()
    assert len(records) >= 10
    assert check_against(records, LIBRARIES) == []
    for a in records:
        assert a.source and all(u.startswith("https://") for u in a.source)
        assert a.summary and a.symptom and a.fix


def test_the_script_checks_the_shipped_file_and_lists_every_record():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "plugins")])}
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "check-advisories.py")],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == len(load())


GOOD = '''[[advisory]]
id = "x-one"
library = "openmpi"
versions = [">=4.0"]
setting = { name = "OMPI_MCA_pml", value = "ucx" }
severity = "warning"
symptom = "s"
fix = "f"
source = ["https://github.com/open-mpi/ompi/issues/1"]
summary = "in our words"
'''


@pytest.mark.parametrize("old,new,key", [
    ('versions = [">=4.0"]', 'versions = [">=four"]', "versions"),
    ('versions = [">=4.0"]', "versions = []", "versions"),
    ('source = ["https://github.com/open-mpi/ompi/issues/1"]', 'source = ["github.com/x"]',
     "source"),
    ('severity = "warning"', 'severity = "fatal"', "severity"),
    ('summary = "in our words"\n', "", "summary"),
    ('id = "x-one"', 'id = "X One"', "id"),
    ('value = "ucx"', 'value = "(ucx"', "setting.value"),
    ('severity = "warning"', 'severity = "warning"\nwhen = { ptrace_scope = 1 }',
     "when.ptrace_scope"),
    ('severity = "warning"', 'severity = "warning"\nwhen = { kernel = "5.x" }', "when.kernel"),
])
def test_a_malformed_record_is_one_error_naming_the_record_and_key(tmp_path, old, new, key):
    path = tmp_path / "adv.toml"
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(AdvisoryError) as err:
        read(path)
    assert str(path) in str(err.value) and ": advisory " in str(err.value)
    assert f": {key}:" in str(err.value)


def test_a_repeated_id_and_a_setting_outside_the_family_are_refused(tmp_path):
    path = tmp_path / "adv.toml"
    path.write_text(GOOD + GOOD)
    with pytest.raises(AdvisoryError, match="given twice"):
        read(path)
    path.write_text(GOOD.replace("OMPI_MCA_pml", "UCX_TLS"))
    assert "not in the openmpi family" in check_against(read(path), LIBRARIES)[0]
    path.write_text(GOOD.replace('library = "openmpi"', 'library = "nosuchlib"'))
    assert "not a known library" in check_against(read(path), LIBRARIES)[0]


def test_versions_are_read_from_their_leading_numbers():
    assert str(leading_version("6.18.44-fc-v769")) == "6.18.44"
    assert str(leading_version("5.0.0rc1")) == "5.0.0"
    assert leading_version("unknown") is None and leading_version(None) is None


def test_recorded_facts_that_match_give_the_probe_finding():
    facts = shipped_facts(mpi={"version": "4.0.1"}, extra={"openmpi": {"ompi_version": "4.0.1"}},
                          security={"cap_sys_ptrace": False})
    res = advisory_result(facts, LIBRARIES, [])
    assert res is not None and res.probe == "advisories" and res.status == "ok"
    ids = [f.id for f in res.findings]
    assert "advisory:ompi-vader-cma-no-ptrace-cap" in ids
    f = res.findings[ids.index("advisory:ompi-vader-cma-no-ptrace-cap")]
    assert "openmpi 4.0.1" in f.message and "at its default" in f.message
    assert "https://github.com/open-mpi/ompi/issues/4948" in f.message and f.remedy


def test_the_runner_adds_the_result_only_when_something_matches():
    facts = shipped_facts(extra={"openmpi": {"ompi_version": "5.0.11", "ucx_version": "1.14.0"}},
                          security={"cap_sys_ptrace": False})
    prof = run_probes({}, {}, facts, time_budget_s=5, libraries=LIBRARIES)
    assert [r.probe for r in prof.results] == ["advisories"]
    assert [f.id for f in prof.results[0].findings] == ["advisory:ucx-cma-container-no-ptrace"]
    unchanged = run_probes({}, {}, shipped_facts(), time_budget_s=5, libraries=LIBRARIES)
    assert unchanged.results == []


def test_recorded_facts_that_do_not_match_give_none():
    assert advisory_result(shipped_facts(), LIBRARIES, []) is None
    # the version matches but the machine lets ranks ptrace each other
    facts = shipped_facts(mpi={"version": "4.0.1"}, extra={"openmpi": {"ompi_version": "4.0.1"}})
    assert advisory_result(facts, LIBRARIES, []) is None
    # an unknown fact never matches
    unknown = facts.model_copy(update={"security": facts.security.model_copy(
        update={"cap_sys_ptrace": None})})
    assert advisory_result(unknown, LIBRARIES, []) is None


def test_a_setting_needs_its_value_and_a_written_only_check_ignores_defaults():
    facts = Facts(mpi={"implementation": "mpich", "flavour": "upstream", "version": "4.3.2"},
                  security={"ptrace_scope": 1})
    hit = matches(facts, LIBRARIES, {"MPIR_CVAR_CH4_CMA_ENABLE": "1"}, written_only=True)
    assert [a.id for a, _, _ in hit] == ["mpich-cma-ptrace-scope"]
    assert matches(facts, LIBRARIES, {"MPIR_CVAR_CH4_CMA_ENABLE": "0"}, written_only=True) == []
    assert matches(facts, LIBRARIES, {}, written_only=False) == []  # default off: no match
    cray = Facts(mpi={"implementation": "mpich", "flavour": "cray", "version": "8.1.30"})
    env = {"MPICH_GPU_SUPPORT_ENABLED": "1"}
    assert [a.id for a, _, _ in matches(cray, LIBRARIES, env, written_only=True)] == [
        "cray-mpich-gpu-support-needs-gtl"]
    upstream = cray.model_copy(update={"mpi": cray.mpi.model_copy(update={"flavour": "upstream"})})
    assert matches(upstream, LIBRARIES, env, written_only=True) == []


def test_a_facts_only_record_matches_the_kernel_range():
    facts = Facts(cpu={"arch": "aarch64"}, kernel={"release": "5.15.0-100-generic",
                                                   "glibc_version": "2.35"})
    got = [a.id for a, _, _ in matches(facts, LIBRARIES, {}, written_only=False)]
    assert got == ["glibc-aarch64-sve-memcpy-old-kernel"]
    for release in ("5.14.21", "6.8.0", "4.14.1"):
        other = facts.model_copy(update={"kernel": facts.kernel.model_copy(
            update={"release": release})})
        assert matches(other, LIBRARIES, {}, written_only=False) == [], release
    assert matches(facts, LIBRARIES, {}, written_only=True) == []  # lint needs a setting
