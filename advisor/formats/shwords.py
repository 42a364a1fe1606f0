"""Shell words in one pass: the sh, csh and fish text of a file as logical lines of commands.

One scan over the whole text, its state (inside a quote, after a backslash, in a comment) kept
from line to line, so a file is read in time linear in its size: a quote left open is not
re-read from where it opened at every following line.  ``shlex`` would fit the rules but reads
one character per Python call (about 0.5 s per MB here, measured on a 1.4 MB env file), over the
2 s a 10 MB file may take (``bench/bench_lint.py``); the same rules are regular expressions
here, so each word is matched in one call.

The rules are POSIX.1-2017 XCU 2.2 (quoting) and 2.3 (tokens), as ``shlex`` in POSIX mode with
``punctuation_chars=";&|()"`` reads them: words split at unquoted blanks; ``;``, ``&``, ``|``,
``(`` and ``)`` runs separate commands; ``'...'`` is literal; in ``"..."`` a backslash escapes
``"``, ``\\``, ``$``, a backquote and a newline only (fish: ``"``, ``\\``, ``$`` and a newline;
in fish's ``'...'`` it escapes ``'`` and ``\\``: fish documentation, "Quotes"); a backslash
before a newline outside single quotes joins the lines; ``#`` outside quotes starts a comment to
the end of the line (also inside a word, as ``shlex`` reads it).
"""

from __future__ import annotations

import re
from typing import Iterator, Union

#: Stands for a ``$`` the shell takes literally (single-quoted or backslash-escaped) while words
#: are read, so that only a ``$`` the shell expands makes a value unknown.  U+FDD0 is a
#: noncharacter, "permanently reserved for internal use" (The Unicode Standard, section 23.7),
#: so no text means it; the readers put it back as ``$`` in the entries.
LITERAL_DOLLAR = "\ufdd0"

#: A logical line: ``(line, "words", [[word, ...], ...])`` (its commands), ``(line,
#: "directive", text)`` (a comment line starting ``#SBATCH``) or ``(line, "problem", why)``.
Logical = tuple[int, str, Union[list[list[str]], str]]

_PLAIN = r"[^ \t\r\n;&|()#'\"\\]+"


#: A word whose quotes close on its line, unrolled (a first piece, then runs of plain
#: characters between quoted strings) so that a line that is not all such words fails
#: without backtracking more than its own length.
_LINE_QUOTED = {fish: (r"'[^'\\\n]*(?:\\[^\n][^'\\\n]*)*'" if fish else r"'[^'\n]*'")
                + r'|"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"|\\[^\n]' for fish in (False, True)}
_P = r"[^ \t\r\n;&|()#'\"\\]"
_LINE_WORD = {fish: rf"(?:{_P}|{q}){_P}*(?:(?:{q}){_P}*)*" for fish, q in _LINE_QUOTED.items()}
_LINE_WORDS = {fish: re.compile(w) for fish, w in _LINE_WORD.items()}


def _quoted(fish: bool, named: bool) -> str:
    """Quoted strings and escapes, as alternatives.  Each may run to the end of the text
    (end of text): a quote never closed is then one match, not a failed one that backtracks over
    all the text after it; :func:`_unclosed` finds it by its empty closing group (``named``:
    groups ``sq``, ``dq``, ``esc`` hold the closing quote or the escaped character)."""
    def group(name: str, body: str) -> str:
        return f"(?P<{name}>{body})" if named else f"(?:{body})"

    sq = (r"'[^'\\]*(?:\\(?:.|\Z)[^'\\]*)*" if fish  # fish: \' and \\ in '...'
          else r"'[^']*") + group("sq", r"'|\Z")
    dq = r'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*' + group("dq", r'"|\Z')
    return rf"{sq}|{dq}|\\" + group("esc", r".|\Z")


def _token_re(fish: bool) -> re.Pattern:
    word = rf"(?:{_PLAIN}|{_quoted(fish, False)})+"
    # plain: the rest of the line is words whose quotes close on it (most lines of an env
    # file), one match; its words are then found by _LINE_WORD
    plain = rf"(?:{_LINE_WORD[fish]}(?:[ \t\r]+|(?=\n|\Z)))+(?:\n|\Z)"
    return re.compile(rf"(?:[ \t\r]|\\\n)*(?:(?P<plain>{plain})|(?P<word>{word})|(?P<nl>\n)"
                      rf"|(?P<sep>[;&|()]+)|(?P<comment>#[^\n]*)|\Z)", re.S)


_TOKEN = {fish: _token_re(fish) for fish in (False, True)}
_PIECE = {fish: re.compile(rf"[^'\"\\]+|{_quoted(fish, True)}", re.S) for fish in (False, True)}
_ESCAPED = re.compile(r"\\(.)", re.S)
#: The characters a backslash escapes inside double quotes (POSIX XCU 2.2.3; fish: no backquote).
_DQ_ESCAPES = {False: '"\\$`\n', True: '"\\$\n'}


def _unclosed(word: str, fish: bool) -> int:
    """The offset in ``word`` (a word that runs to the end of the text) of the quote never
    closed or of a backslash at the very end; -1 when there is none."""
    for m in _PIECE[fish].finditer(word):
        closer = m.group("sq") if m.group("sq") is not None else m.group("dq")
        if closer is None:
            closer = m.group("esc")
        if closer == "":
            return m.start()
    return -1


def _double_quoted(body: str, fish: bool) -> str:
    def one(m: re.Match) -> str:
        ch = m.group(1)
        if ch not in _DQ_ESCAPES[fish]:
            return "\\" + ch
        return {"\n": "", "$": LITERAL_DOLLAR}.get(ch, ch)

    return _ESCAPED.sub(one, body)


def _single_quoted(body: str, fish: bool) -> str:
    body = body.replace("$", LITERAL_DOLLAR)
    if not fish:
        return body
    return _ESCAPED.sub(lambda m: m.group(1) if m.group(1) in "'\\" else m.group(0), body)


def _unquote(word: str, fish: bool) -> str:
    """The word the shell makes of ``word`` (quotes removed, escapes applied)."""
    if '"' not in word and "\\" not in word:
        if "'" not in word:
            return word
        if word.count("'") == 2:  # NAME='value', the form emit writes: one quoted string
            head, body, tail = word.split("'")
            return head + body.replace("$", LITERAL_DOLLAR) + tail
    out = []
    for m in _PIECE[fish].finditer(word):
        p = m.group()
        if p[0] == "'":
            out.append(_single_quoted(p[1:-1], fish))
        elif p[0] == '"':
            out.append(_double_quoted(p[1:-1], fish))
        elif p[0] == "\\":
            out.append({"\n": "", "$": LITERAL_DOLLAR}.get(p[1], p[1]))
        else:
            out.append(p)
    return "".join(out)


def logical_lines(text: str, *, fish: bool = False) -> Iterator[Logical]:
    """The logical lines of shell ``text`` that hold commands, in order (see :data:`Logical`;
    ``line`` is the 1-based line of the first word).  A quote never closed is one ``problem``
    at the line that opened it; that logical line is dropped and reading goes on from the next
    line.  A backslash at the very end is a ``problem`` too.  Time and memory: linear in
    ``len(text)`` (each unclosed quote re-reads what follows it once; the text that follows
    holds no closing quote, so at most two such re-reads reach the end)."""
    token = _TOKEN[fish]
    counted, line = 0, 1  # text[:counted] holds line - 1 newlines

    def line_at(pos: int) -> int:
        nonlocal counted, line
        line += text.count("\n", counted, pos)
        counted = pos
        return line

    commands: list[list[str]] = [[]]
    start = 0
    pos, end = 0, len(text)
    while pos < end:
        m = token.match(text, pos)
        pos = m.end()
        kind = m.lastgroup
        if kind == "plain":
            got = m.group(kind)
            words = _LINE_WORDS[fish].findall(got)
            if "'" in got or '"' in got or "\\" in got:
                words = [_unquote(w, fish) for w in words]
            if not any(commands):  # the whole logical line (most lines of an env file)
                yield line_at(m.start(kind)), "words", [words]
                continue
            commands[-1].extend(words)
            kind = "nl"
        elif kind == "word":
            word = m.group(kind)
            bad = _unclosed(word, fish) if pos >= end else -1
            if bad >= 0:  # only a word that runs to the end of the text can be unclosed
                at = m.start(kind) + bad
                why = ("the text ends after a backslash" if text[at] == "\\"
                       else "a quote is never closed (opened on this line)")
                yield line_at(at), "problem", why
                commands = [[]]
                nl = text.find("\n", at)
                pos = end if nl < 0 else nl + 1
                continue
            if not any(commands):
                start = line_at(m.start(kind))
            commands[-1].append(_unquote(word, fish))
        elif kind == "sep":
            if commands[-1]:
                commands.append([])
        elif kind == "comment":
            if not any(commands) and m.group(kind).startswith("#SBATCH"):
                yield line_at(m.start(kind)), "directive", m.group(kind)
        if kind in ("nl", None) or pos >= end:  # None: only blanks were left (\Z)
            if any(commands):
                yield start, "words", [c for c in commands if c]
            commands = [[]]
            if kind is None:
                break
