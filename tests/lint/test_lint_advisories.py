"""lint reports known bad combinations (issue 28, part 7) among the settings of a file, for the
facts of this machine or of a profile given with ``--profile``.

The facts are the shipped Open MPI profile's (Open MPI 5.0.11 in Docker with CAP_SYS_PTRACE),
changed to an Open MPI 4.0.1 without the capability where a match is wanted."""

from __future__ import annotations

import json
import subprocess
import sys

from support import BUILTIN_LIBRARIES, REPO

from advisor import lint
from advisor.libraries import ucx
from advisor.profile import load_profile
from advisor.save import save_profile

SHIPPED = REPO / "advisor" / "shipped" / "x86_64-icelake-2core-vm-openmpi.toml"
LIBRARIES = {**BUILTIN_LIBRARIES, ucx.NAME: ucx.record()}
TEXT = ("export OMPI_MCA_pml=ob1\n"
        "export OMPI_MCA_btl_vader_single_copy_mechanism=cma\n")
ID = "advisory:ompi-vader-cma-no-ptrace-cap"


def _profile(version: str, cap: bool):
    prof = load_profile(SHIPPED)
    f = prof.facts
    facts = f.model_copy(update={
        "mpi": f.mpi.model_copy(update={"version": version}),
        "extra": {**f.extra, "openmpi": {**f.extra["openmpi"], "ompi_version": version}},
        "security": f.security.model_copy(update={"cap_sys_ptrace": cap})})
    return prof.model_copy(update={"facts": facts})


def test_a_matching_setting_is_reported_at_its_line_with_its_source():
    facts = _profile("4.0.1", cap=False).facts
    found = lint.lint_entries(lint.parse_env_text(TEXT, path="ompi.env"), facts=facts,
                              libraries=LIBRARIES)
    hits = [f for f in found if f.finding.id == ID]
    assert len(hits) == 1, [f.finding.id for f in found]
    assert hits[0].line == 2 and hits[0].name == "OMPI_MCA_btl_vader_single_copy_mechanism"
    assert "openmpi 4.0.1 with OMPI_MCA_btl_vader_single_copy_mechanism=cma" in hits[0].finding.message
    assert "issues/4948" in hits[0].finding.message and hits[0].finding.remedy


def test_no_finding_where_the_facts_or_the_value_do_not_match():
    for version, cap in (("5.0.11", False), ("4.0.1", True)):
        facts = _profile(version, cap).facts
        found = lint.lint_entries(lint.parse_env_text(TEXT, path="ompi.env"), facts=facts,
                                  libraries=LIBRARIES)
        assert not [f for f in found if f.finding.id.startswith("advisory:")], (version, cap)
    facts = _profile("4.0.1", cap=False).facts
    none = TEXT.replace("=cma", "=none")
    found = lint.lint_entries(lint.parse_env_text(none, path="ompi.env"), facts=facts,
                              libraries=LIBRARIES)
    assert not [f for f in found if f.finding.id.startswith("advisory:")]
    # the library default is not a setting of the file: lint says nothing about it
    only_pml = lint.parse_env_text("export OMPI_MCA_pml=ob1\n", path="ompi.env")
    assert not [f for f in lint.lint_entries(only_pml, facts=facts, libraries=LIBRARIES)
                if f.finding.id.startswith("advisory:")]


def test_lint_with_a_profile_judges_for_that_machine(tmp_path):
    env = tmp_path / "ompi.env"
    env.write_text(TEXT)
    for (version, cap), want in ((("4.0.1", False), True), (("5.0.11", True), False)):
        prof = tmp_path / f"p-{version}.toml"
        save_profile(_profile(version, cap), prof)
        done = subprocess.run([sys.executable, "-m", "advisor", "lint", "--json", str(env),
                               "--profile", str(prof)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode in (0, 1), done.stderr
        ids = [f["id"] for f in json.loads(done.stdout)]
        assert (ID in ids) is want, (version, ids, done.stderr)
