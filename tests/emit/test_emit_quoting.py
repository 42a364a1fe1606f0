"""Property tests of the quoting functions against reference parsers: Python's POSIX ``shlex``
for sh, PyYAML for Spack, ``ast.literal_eval`` for EasyBuild and the real Tcl interpreter (via
tkinter) for Environment Modules.  Text without control characters (those are refused before
quoting) must come back unchanged."""

from __future__ import annotations

import ast
import functools
import shlex

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from advisor.formats.quoting import tcl_quote
from advisor.formats.quoting import python_quote, yaml_quote
from advisor.formats.quoting import csh_quote, sh_quote

#: any code point except control characters (Cc) and lone surrogates (Cs): what emit accepts
TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=40)


@given(TEXT)
def test_sh_quote_is_one_literal_word(text):
    assert shlex.split(sh_quote(text), posix=True) == [text]


@given(TEXT)
def test_yaml_quote_round_trips(text):
    assert yaml.safe_load("v: " + yaml_quote(text)) == {"v": text}


@given(TEXT)
def test_python_quote_round_trips(text):
    assert ast.literal_eval(python_quote(text)) == text


@given(TEXT)
def test_csh_quote_has_no_unescaped_bang_or_newline(text):
    word = csh_quote(text)
    assert "\n" not in word
    assert all(word[i - 1] == "\\" for i, ch in enumerate(word) if ch == "!")


@functools.lru_cache(maxsize=1)
def _tcl():
    tkinter = pytest.importorskip("tkinter")
    try:
        return tkinter.Tcl()
    except tkinter.TclError as exc:  # pragma: no cover
        pytest.skip(f"no Tcl interpreter: {exc}")


@settings(max_examples=200)
@given(st.text(st.characters(blacklist_categories=("Cc", "Cs"), max_codepoint=0xFFFF),
               max_size=40))
def test_tcl_quote_round_trips_in_real_tcl(text):
    tcl = _tcl()
    assert tcl.eval(f"set v {tcl_quote(text)}") == text
