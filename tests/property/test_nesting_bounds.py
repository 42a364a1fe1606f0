"""Properties of the depth bound (advisor.nesting): the measure is exact for JSON and never fooled
by brackets in strings or comments, every bounded loader returns what the library returns for a
text within the bound, and refuses one past it in one line, never a RecursionError.  The CLI's
entry paths with the hostile corpus are in tests/reliability/test_deep_input.py."""

from __future__ import annotations

import json
import tomllib

import pytest
import tomli_w
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.errors import BadInputError
from advisor.nesting import (MAX_DEPTH, MAX_TCL_SUBSTITUTIONS, check_tcl, compose_yaml,
                             data_depth, load_json, load_toml, nesting_depth)

#: Examples per property: sized so this file runs in a few seconds here.
EXAMPLES = 200

#: Strings made of what the scanners must skip: brackets, quotes, escapes, comment marks.
NASTY = st.text(alphabet='[]{}"\'\\#.=,\n abc', max_size=12)
SCALARS = st.one_of(st.integers(), st.booleans(), NASTY)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(NASTY, inner, max_size=4)), max_leaves=30)


@settings(max_examples=EXAMPLES)
@given(VALUES)
def test_json_depth_is_exact(value):
    """The JSON measure is the data's depth, whatever the strings hold."""
    for text in (json.dumps(value), json.dumps(value, indent=1, ensure_ascii=False)):
        assert nesting_depth(text, "json") == data_depth(value)
        assert load_json(text, "t.json") == value


TOML_DOCS = st.dictionaries(st.text(alphabet="abc_", min_size=1, max_size=3), VALUES, max_size=4)


@settings(max_examples=EXAMPLES)
@given(TOML_DOCS)
def test_toml_within_the_bound_loads_as_tomllib(doc):
    """A TOML text within the bound (strings of brackets, quotes and comment marks included)
    loads as tomllib loads it."""
    text = tomli_w.dumps(doc)
    assert load_toml(text, "t.toml") == tomllib.loads(text)


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 5000])
def test_the_bound_is_the_limit(depth):
    """Exactly ``MAX_DEPTH`` levels load; one more is refused naming the file and the limit."""
    cases = [(load_json, "[" * depth + "]" * depth), (load_json, '{"a":' * depth + "1" + "}" * depth),
             (load_toml, "x = " + "[" * depth + "]" * depth),
             (load_toml, "x = " + "{a = " * depth + "1" + "}" * depth),
             (compose_yaml, "[" * depth + "]" * depth)]
    for load, text in cases:
        if depth <= MAX_DEPTH:
            load(text, "f")
            continue
        with pytest.raises(BadInputError, match=rf"^f: .* more than {MAX_DEPTH} levels deep"):
            load(text, "f")


@pytest.mark.parametrize("n", [5000, 100_000])
def test_closers_in_strings_do_not_hide_depth(n):
    """Each level closes a bracket inside a string: the parser nests ``n`` deep, so must the
    measure (a scan that counted the quoted closers would see depth 1)."""
    assert nesting_depth('["]",' * n + "1" + "]" * n, "json") == n
    assert nesting_depth('x = ["]", ' * n + "1" + "]" * n, "toml") == n
    assert nesting_depth("x = [']', # ]]]\n" * n + "1" + "]" * n, "toml") == n
    with pytest.raises(BadInputError):
        check_tcl('setenv X [a "]" {]} \\[ ' * n, "m")


def test_tcl_bound_counts_unescaped_brackets():
    """``\\[`` is no substitution; up to the bound a command passes."""
    check_tcl("setenv X " + "\\[" * 5000, "m")
    check_tcl("x " + "[" * MAX_TCL_SUBSTITUTIONS + "]" * MAX_TCL_SUBSTITUTIONS, "m")
    with pytest.raises(BadInputError, match=r"^m: 1001 Tcl command substitutions"):
        check_tcl("x " + "[" * (MAX_TCL_SUBSTITUTIONS + 1), "m")


def test_dotted_keys_and_headers_count():
    """A dotted key or a table header nests without brackets; both are bounded."""
    for text in (".".join(["a"] * 5000) + " = 1\n", "[" + ".".join(["a"] * 5000) + "]\n",
                 "[" + ".".join(["a"] * 60) + "]\n" + ".".join(["b"] * 60) + " = 1\n"):
        with pytest.raises(BadInputError, match="levels deep"):
            load_toml(text, "f")


def _laughs(levels: int) -> str:
    text = 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, levels + 1):
        text += f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n"
    return text


def test_yaml_aliases_bounded_by_what_they_expand_to():
    """A few aliases load; 10 levels of 9 (about 10^9 nodes) are refused before composing."""
    node = compose_yaml(_laughs(3), "f")
    assert isinstance(node, yaml.MappingNode)
    with pytest.raises(BadInputError, match=r"^f: YAML aliases expand to more than"):
        compose_yaml(_laughs(9), "f")


@settings(max_examples=EXAMPLES)
@given(VALUES)
def test_yaml_within_the_bound_composes_as_pyyaml(value):
    """A YAML text within the bound composes to the node tree PyYAML composes."""
    text = yaml.safe_dump(value)
    assert yaml.serialize(compose_yaml(text, "f.yaml")) == yaml.serialize(
        yaml.compose(text, Loader=yaml.SafeLoader))
