"""Property tests of the env-file reader: it never raises on arbitrary text, and a value written
the way ``advisor emit -f env`` quotes it (POSIX single quotes) is read back exactly."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from advisor import lint
from advisor.formats.quoting import sh_quote

NAMES = st.from_regex(r"[A-Z_][A-Z0-9_]{0,20}", fullmatch=True)
# '$' is left out: after shlex removes the quotes, lint treats '$' as an expansion (value unknown)
#: Per-example time bound (Hypothesis ``deadline``): texts of 300 characters at most are read in
#: milliseconds; far above that so a loaded machine does not trip it, only a reader whose time
#: explodes does.
DEADLINE = timedelta(seconds=1)
VALUES = st.text(st.characters(blacklist_characters="$\x00", blacklist_categories=("Cs",)),
                 max_size=40)


@settings(max_examples=200, deadline=DEADLINE)
@given(st.text(max_size=300))
def test_reader_never_raises(text):
    for fmt in ("sh", "lmod", "auto"):
        try:
            lint.parse_env_text(text, path="x", fmt=fmt)
        except lint.BadInputError:  # malformed JSON/TOML picked by 'auto' is a clean error
            pass


@settings(max_examples=200, deadline=DEADLINE)
@given(NAMES, VALUES)
@example("A", "\\\n")  # found by CI: a backslash before a newline inside '...' is literal
def test_single_quoted_values_round_trip(name, value):
    text = f"{name}={sh_quote(value)}; export {name}\n"
    entries = lint.parse_env_text(text, path="x.sh")
    assert [(e.name, e.value, e.line) for e in entries] == [(name, value, 1)]
