"""The field cases are the project's own (tests/cases): present in every clone, each one used."""

from support import CASES, REPO, case


def test_cases_folder_is_found():
    assert CASES.is_dir(), CASES
    assert case("warmup-first-call")


def test_every_case_is_a_test_and_keeps_its_source():
    """Each case file names its public source, and at least one test loads it by id."""
    ids = sorted(p.stem for p in CASES.glob("*.toml"))
    assert len(ids) >= 16, ids
    test_text = "\n".join(p.read_text() for p in (REPO / "tests").rglob("test_*.py"))
    for cid in ids:
        c = case(cid)
        assert c["case"]["id"] == cid
        assert c["case"]["source"].strip(), cid
        assert f'"{cid}"' in test_text, f"no test loads the case {cid}"
