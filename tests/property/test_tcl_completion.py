"""Property: the Tcl reader's command splitting asks Tcl's ``info complete`` only where the answer
can change (``advisor.formats.shellread._Completion``), and splits every text exactly as asking it
after every line, and at every ``;``, does (the reader before that change, written out here as the
reference).  Texts mix the characters that open, close and escape Tcl's words."""

from __future__ import annotations

import functools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.formats import shellread

pytest.importorskip("tkinter", reason="Tcl's parser comes with tkinter")
if shellread._tcl() is None:  # pragma: no cover
    pytest.skip("tkinter has no Tcl library here", allow_module_level=True)

#: Examples per property: each is a few dozen characters, read in milliseconds.
EXAMPLES = 2000

PIECES = st.sampled_from(["{", "}", '"', "[", "]", "\\", ";", "#", "\n", " ", "x", "setenv A ",
                          "\\\n", "\\\n  ", "\\{", "\\}", "\\\\", "{}", '"{"', "$y", "\t"])
TEXTS = st.lists(PIECES, max_size=40).map("".join)


def complete(text: str) -> bool:
    return shellread._tcl_complete(text)


def naive_lines(text: str) -> list[tuple[int, str]]:
    """Physical lines joined while ``info complete`` of everything so far says no (or a line
    ends in an odd backslash run): Tcl asked after every line."""
    out, buf, start = [], [], 0
    for no, line in enumerate(text.split("\n"), 1):
        if not buf:
            start = no
        buf.append(line)
        if (len(line) - len(line.rstrip("\\"))) % 2:
            continue
        if complete("\n".join(buf)):
            out.append((start, "\n".join(buf)))
            buf = []
    if buf and "\n".join(buf).strip():
        out.append((start, "\n".join(buf)))
    return out


def naive_commands(command: str) -> list[str]:
    """Split at every unescaped ``;`` whose prefix ``info complete`` calls complete."""
    out, start = [], 0
    for i, ch in enumerate(command):
        if ch != ";" or (len(command[:i]) - len(command[:i].rstrip("\\"))) % 2:
            continue
        if command[start:i].lstrip().startswith("#"):
            break
        if complete(command[start:i]):
            out.append(command[start:i])
            start = i + 1
    out.append(command[start:])
    return out


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(TEXTS)
def test_logical_lines_split_as_asking_tcl_after_every_line(text):
    assert list(shellread._logical_lines(text, complete)) == naive_lines(text)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(TEXTS)
def test_commands_split_as_asking_tcl_at_every_semicolon(text):
    assert shellread._tcl_commands(text) == naive_commands(text)


def test_an_unclosed_brace_asks_tcl_a_bounded_number_of_times():
    """A brace opened on the first line and never closed, then 2000 lines that each open and
    close one: the reader asks Tcl for the first line (and the bisection of its depth), not
    once per line (what made a 0.5 MB modulefile take 16 s to lint)."""
    calls = []

    def counted(text: str) -> bool:
        calls.append(len(text))
        return complete(text)

    text = "setenv A {never closed\n" + "\n".join(f"setenv B{i} {{{i}}}" for i in range(2000))
    got = list(shellread._logical_lines(text, counted))
    assert got == [(1, text)]
    assert len(calls) <= 4


def test_depth_follows_escaped_braces():
    """``\\{`` and ``\\}`` inside braces do not count (Tcl(n) rule 6); the command ends where
    the unescaped braces balance."""
    text = "setenv A {x \\{\n y \\} z\n}\nsetenv B 1"
    assert [n for n, _ in shellread._logical_lines(text, complete)] == [1, 4]


@functools.lru_cache(maxsize=None)
def _semicolons(n: int) -> str:
    return "setenv A {" + ";".join("x" * 3 for _ in range(n)) + "}; setenv B 1"


def test_many_semicolons_inside_braces_split_once():
    text = _semicolons(5000)
    parts = shellread._tcl_commands(text)
    assert len(parts) == 2 and re.fullmatch(r" setenv B 1", parts[1])
