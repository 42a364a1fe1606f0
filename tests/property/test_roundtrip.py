"""Property: Profile -> TOML -> Profile is the identity, for any profile the schema admits; and
loading arbitrary bytes or a mutated profile raises only ProfileError (never a traceback)."""

from __future__ import annotations

import math
import tomllib

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from advisor.errors import ProfileError
from advisor.profile import load_profile, profile_from_mapping, profile_to_toml
from advisor.save import save_profile
from strategies import FLOATS, SCALARS, TEXT, profiles
from support import DATA

#: Examples per property: sized so this file runs in a few seconds on the 2-core reference box.
EXAMPLES = 300


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profiles())
def test_roundtrip_profile_toml_profile(prof):
    text = profile_to_toml(prof)
    back = profile_from_mapping(tomllib.loads(text), source="<roundtrip>")
    assert back == prof
    assert profile_to_toml(back) == text  # and the bytes are stable


def test_roundtrip_through_file_nan_and_extremes(tmp_path):
    """NaN, infinities, -0.0, the smallest subnormal and 64-bit extremes survive a file trip."""
    from support import sample_profile

    prof = sample_profile()
    res = prof.results[0]
    ev = res.evidence[0]
    pt = ev.series[0].points[0].model_copy(update={
        "samples": [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308]})
    ev = ev.model_copy(update={"series": [ev.series[0].model_copy(update={"points": [pt]})],
                               "values": {"max": 2 ** 63 - 1, "min": -(2 ** 63)}})
    prof = prof.model_copy(update={"results": [res.model_copy(update={"evidence": [ev]})]})
    back = load_profile(save_profile(prof, tmp_path / "p.toml"))
    got = back.results[0].evidence[0].series[0].points[0].samples
    assert math.isnan(got[0]) and got[1:] == pt.samples[1:]
    assert math.copysign(1.0, got[3]) == -1.0
    assert back.results[0].evidence[0].values == ev.values


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.binary(max_size=2000))
def test_roundtrip_arbitrary_bytes_only_profile_error(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("blob") / "p.toml"
    path.write_bytes(blob)
    with pytest.raises(ProfileError):
        load_profile(path)
    assert path.read_bytes() == blob


BASE = tomllib.loads((DATA / "bad" / "base.toml").read_text())


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


PATHS = [p for p in _paths(BASE) if p]
VALUES = st.one_of(SCALARS, st.none(), st.lists(SCALARS, max_size=3),
                   st.dictionaries(TEXT, SCALARS, max_size=2), FLOATS)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(st.sampled_from(PATHS), VALUES, st.booleans())
# found by Hypothesis under `make test-loaded`: a key holding a newline broke the one-line error
@example(("provenance",), {"\n": False}, False)
def test_roundtrip_mutated_profile_loads_or_names_key(path, value, delete):
    """Any one key of a valid profile replaced (or deleted): it loads, or ProfileError names a
    key on the mutated path."""
    import copy

    data = copy.deepcopy(BASE)
    node = data
    for k in path[:-1]:
        node = node[k]
    if delete or value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    try:
        profile_from_mapping(data, source="<mutated>")
    except ProfileError as exc:
        msg = str(exc)
        assert msg.startswith("<mutated>: ") and "\n" not in msg
        assert "key '" in msg or "not a table" in msg
