"""The shell reader (advisor.formats.shwords) keeps its state from line to line: a quote left
open is one finding at the line that opened it and reading goes on from the next line; a large
file with an open quote is read once, not again at every line (issue 28; the times are in
bench/bench_lint.py)."""

from __future__ import annotations

import pytest
from support import BUILTIN_LIBRARIES

from advisor import lint
from advisor.formats.shellread import parse_shell

OPEN = {"sh": 'export B="never closed\n', "csh": "setenv B 'never closed\n",
        "fish": "set -gx B 'never closed\n"}
LINE = {"sh": "export {n}={v}\n", "csh": "setenv {n} {v}\n", "fish": "set -gx {n} {v}\n"}


@pytest.mark.parametrize("shell", sorted(OPEN))
def test_unclosed_quote_is_one_finding_and_reading_goes_on(shell):
    text = (LINE[shell].format(n="A", v="'1'") + OPEN[shell] + LINE[shell].format(n="C", v="3")
            + LINE[shell].format(n="D", v="4"))
    entries = parse_shell(text, f"site.{shell}", fish=shell == "fish")
    assert [(e.name, e.value, e.line) for e in entries if not e.problem] == [
        ("A", "1", 1), ("C", "3", 3), ("D", "4", 4)]
    (bad,) = [e for e in entries if e.problem]
    assert bad.line == 2 and "never closed" in bad.problem


def test_700_kb_file_with_an_open_quote_gives_one_finding(tmp_path):
    """The issue's file: 700 KB whose second line opens a quote never closed.  One finding, at
    that line, and every other line read (the reader that re-split the joined lines took 7.5
    CPU-minutes on it; bench/bench_lint.py prints the time now)."""
    line = "export SITE_SETTING_{i}=value{i}\n"
    body = [line.format(i=i) for i in range(40_000)]
    text = body[0] + "export OPENED='here\n" + "".join(body[1:])
    assert len(text.encode()) > 700_000
    path = tmp_path / "site.env"
    path.write_text(text)
    entries = lint.read_env_file(path)
    assert len([e for e in entries if not e.problem]) == len(body)
    assert entries[-1].name == "SITE_SETTING_39999" and entries[-1].line == len(body) + 1
    findings = lint.lint_entries(entries, libraries=BUILTIN_LIBRARIES)
    (unread,) = [f for f in findings if f.finding.id == "unreadable-line"]
    assert unread.line == 2 and "never closed" in unread.finding.message


def test_backslash_newline_and_double_quote_escapes_follow_posix():
    """POSIX.1-2017 XCU 2.2.1: a backslash before a newline joins the lines, outside single
    quotes; 2.2.3: inside double quotes a backslash escapes $, `, ", \\ and a newline only."""
    text = ('A="a\\\nb"\nB=x\\\ny\nC="\\$HOME \\q"\nD=\'\\\n\'\nexport A B C D\n')
    got = {e.name: (e.value, e.line) for e in parse_shell(text, "x.sh")}
    assert got == {"A": ("ab", 1), "B": ("xy", 3), "C": ("$HOME \\q", 5), "D": ("\\\n", 6)}


def test_backslash_at_the_very_end_is_a_finding():
    entries = parse_shell("export A=1\nexport B=2\\", "x.sh")
    assert [(e.name, e.line) for e in entries if not e.problem] == [("A", 1)]
    assert [e.line for e in entries if e.problem] == [2]


def test_sbatch_directives_and_launch_lines_keep_their_lines():
    text = ("#!/bin/bash\n#SBATCH --export=ALL,FOO=1\nexport BAR='2'; echo \"x;y\"\n"
            "srun --export=ALL,BAZ=3 ./app # a comment with ' in it\n")
    got = [(e.name, e.value, e.line, e.launch) for e in parse_shell(text, "job.sh")]
    assert got == [("FOO", "1", 2, False), ("BAR", "2", 3, False), ("BAZ", "3", 4, True)]
