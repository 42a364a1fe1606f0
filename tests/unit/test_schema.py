"""The committed JSON schema is fresh, and the example profiles validate (or fail) as labelled."""

from __future__ import annotations

import pytest

from advisor.errors import ProfileError
from advisor.profile import load_profile
from advisor.schema import profile_json_schema
from support import REPO

EXAMPLES = REPO / "profiles" / "examples"


def test_committed_schema_is_fresh():
    committed = (REPO / "docs" / "profile.schema.json").read_text()
    assert committed == profile_json_schema(), (
        "docs/profile.schema.json is stale: run 'advisor schema > docs/profile.schema.json'")


@pytest.mark.parametrize("path", sorted((EXAMPLES / "valid").glob("*.toml")), ids=lambda p: p.name)
def test_valid_examples_load(path):
    prof = load_profile(path)
    assert prof.results


@pytest.mark.parametrize("path", sorted((EXAMPLES / "invalid").glob("*.toml")), ids=lambda p: p.name)
def test_invalid_examples_are_refused_naming_the_key(path):
    expected = path.read_text(errors="replace").splitlines()[0]
    assert expected.startswith("# expect: "), f"{path} must start with '# expect: <text>'"
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert str(path) in str(info.value)
    assert expected[len("# expect: "):] in str(info.value)


def test_shipped_profiles_validate():
    shipped = sorted((REPO / "profiles").glob("*.toml"))
    for path in shipped:
        prof = load_profile(path)
        assert prof.provenance.command and prof.provenance.created
