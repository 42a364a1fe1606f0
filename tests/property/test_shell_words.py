"""Property: the one-pass shell reader (``advisor.formats.shwords``) splits words as ``shlex``
does in POSIX mode (the rules it was written from), and reports a quote ``shlex`` finds never
closed (each at its own line, reading going on from the next).  The alphabet leaves out what
the reader reads as the shell does and ``shlex`` does not (``$`` and a backquote after a
backslash in double quotes, a backslash before a newline) and the separators, which
``shlex.split`` does not know."""

from __future__ import annotations

import shlex
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.formats.shwords import logical_lines

#: Per-example time bound (Hypothesis ``deadline``): a few dozen characters are read in well
#: under a millisecond; far above that so a loaded machine does not trip it.
DEADLINE = timedelta(seconds=1)
PIECES = st.sampled_from(list("ab=x #'\"\\\t\n") + ["\\\\", '\\"', "\\'", "'x y'", '"y z"', "\r"])
TEXTS = st.lists(PIECES, max_size=30).map("".join).filter(
    lambda t: "\\\n" not in t and not t.endswith("\\"))


def _shlex(text: str, fish: bool) -> list[str]:
    lex = shlex.shlex(text, posix=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    if fish:
        lex.escapedquotes = "'\""
    return list(lex)


@settings(max_examples=3000, deadline=DEADLINE)
@given(text=TEXTS, fish=st.booleans())
def test_words_are_shlex_words(text, fish):
    got = list(logical_lines(text, fish=fish))
    try:
        want = _shlex(text, fish)
    except ValueError:  # a quote never closed (reading goes on: a later one is found too)
        assert "problem" in [k for _line, k, _ in got], (text, got)
        return
    assert [w for _line, k, cmds in got if k == "words" for c in cmds for w in c] == want
    assert all(k == "words" for _line, k, _ in got)
