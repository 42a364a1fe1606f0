"""The shell-word reader behind the sh, csh, fish and Tcl parsers.

Commands are split into words with POSIX rules in one pass over the text
(:mod:`advisor.formats.shwords`) or, for Tcl modulefiles, with Tcl's own parser (``tkinter.Tcl``,
no Tk).  Read: ``NAME=value`` (with or without ``export``), csh
``setenv``, fish ``set -gx``, Tcl ``setenv`` / ``append-path`` / ``prepend-path`` / ``pushenv``,
the list-merge ``if`` lines ``advisor emit`` writes, and settings passed on a launch line
(``srun --export``, ``mpiexec -genv``, ``mpirun -x``, ``env A=B cmd``:
:mod:`advisor.formats.launch`).  An expansion of the same variable at the start or end of a value
(``"${N}":item``) is read as an append; any other expansion makes the value unknown (None).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Callable, Iterable, Iterator, Optional

from advisor.specs.entry import NAME_RE, EnvEntry, unreadable
from advisor.formats.launch import launch_settings, sbatch_directive
from advisor.formats.shwords import LITERAL_DOLLAR, Logical, logical_lines

_SH_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "{", "}", "!", "end", "begin",
                "endif", "command", "builtin", "while", "until", "(", ")",
                "time", "exec", "nohup"}  # prefixes of a launch line (bash(1) time; nohup(1))


#: The first line that is not blank and not a comment.
_FIRST_COMMAND = re.compile(r"^[ \t]*([^\s#][^\n]*)", re.M)


def shell_sniff(text: str, shells: str, commands: str) -> bool:
    """Whether ``text`` is a file of one shell family: a ``#!`` first line running one of
    ``shells`` (a regular expression of program names), or a first command matching
    ``commands`` (a regular expression: the assignments that family's files start with)."""
    first = text[:text.find("\n")] if "\n" in text else text
    if first.startswith("#!"):
        return re.match(rf"#!\s*\S*?(?:/|\benv\s+)(?:{shells})(?:\s|$)", first) is not None
    m = _FIRST_COMMAND.search(text)
    return m is not None and re.match(commands, m.group(1)) is not None


#: A command that is a comment: ``#`` after blanks (Tcl(n) rule 10).
_COMMENT_START = re.compile(r"\s*#")


def _odd_backslashes(text: str, end: int) -> bool:
    """Whether an odd run of backslashes ends just before ``text[end]`` (the character there is
    escaped); reads back over the run alone, not the whole prefix."""
    i = end
    while i > 0 and text[i - 1] == "\\":
        i -= 1
    return (end - i) % 2 == 1


class _Completion:
    """Whether the text fed so far is a complete Tcl command, as ``complete`` (Tcl's ``info
    complete``) says, asking it only where the answer can have changed, so that reading a
    command that stays open over many lines is linear in its length, not quadratic (each call
    of ``complete`` reads the whole text; a modulefile whose first brace is never closed made
    every later line one such call).

    After an answer "incomplete" the open state is found, with ``complete`` too:

    - inside braces (a braced word at command level is the outermost open construct): the
      fewest `` }`` appended that complete it is the brace depth (a surplus `` }`` is a bare
      word after the braced word closes; each ``}`` follows a blank, so none is the error
      "extra characters after close-brace", which ``info complete`` calls complete, and
      inside an open quote or command substitution none completes anything).  Inside
      braces only ``{`` and ``}`` count, a backslash escaping the next character (Tcl(n) rule
      6), so later text is followed by that depth alone and ``complete`` is asked again only
      where the depth reaches 0;
    - otherwise (an open quote or command substitution, or braces inside one): ``complete``
      is asked again only when new text holds a character that can close one (``"``, ``]``
      or ``}``);
    - after a backslash-newline at the end (the command continues): at the next question.
    """

    def __init__(self, complete: Callable[[str], bool]) -> None:
        self._complete = complete
        self._text: list[str] = []
        self._pending = ""      # fed since ``complete`` last answered
        self._depth: Optional[int] = None  # open braces, when braces alone are open
        self._known = False     # ``complete`` answered "incomplete" for the text before pending

    def feed(self, chunk: str) -> None:
        self._text.append(chunk)
        self._pending += chunk

    def text(self) -> str:
        return "".join(self._text)

    def _still_open(self) -> bool:
        """True when the pending text cannot have completed the command (no call to Tcl)."""
        if not self._known:
            return False
        pending, self._pending = self._pending, ""  # read once: only new text is read again
        if self._depth is None:
            if any(c in pending for c in '"]}'):
                self._pending = pending
                return False
            return True
        depth, i, n = self._depth, 0, len(pending)
        while i < n:
            c = pending[i]
            if c == "\\":
                i += 2
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return False
            i += 1
        self._depth = depth
        return True

    def is_complete(self) -> bool:
        """Whether the text fed so far is a complete command (``complete`` of it, or what
        the state after its last "incomplete" implies)."""
        if self._still_open():
            return False
        text = self.text()
        self._pending = ""
        if self._complete(text):
            return True
        # a backslash-newline (or a backslash) at the end continues the command: any text
        # after it may complete it, so Tcl is asked again next time
        n = len(text) - 1 if text.endswith("\n") else len(text)
        self._known = not _odd_backslashes(text, n)
        if not self._known:
            return False
        # the brace depth: the fewest ' }' that complete the text, by bisection (at most one
        # per '{' written); none: something other than braces is open outermost
        lo, hi = 1, text.count("{")
        if hi == 0 or not self._complete(text + " }" * hi):
            self._depth = None
            return False
        while lo < hi:
            mid = (lo + hi) // 2
            if self._complete(text + " }" * mid):
                hi = mid
            else:
                lo = mid + 1
        self._depth = lo
        return False


def _logical_lines(text: str, complete: Callable[[str], bool]) -> Iterable[tuple[int, str]]:
    """Yield ``(first line number, text)`` of complete Tcl commands: physical lines joined
    while ``complete`` says the command goes on (an open quote, brace or bracket) or a line ends
    with an unescaped backslash (kept: Tcl's word splitting reads it).  ``complete`` is asked
    only where the answer can change (:class:`_Completion`)."""
    acc: Optional[_Completion] = None
    start = 0
    for no, line in enumerate(text.split("\n"), 1):  # Tcl ends lines at \n only
        if acc is None:
            start, acc = no, _Completion(complete)
            acc.feed(line)
        else:
            acc.feed("\n" + line)
        if _odd_backslashes(line, len(line)):
            continue
        if not acc.is_complete():
            continue
        yield start, acc.text()
        acc = None
    if acc is not None and acc.text().strip():
        yield start, acc.text()  # never closed: the word splitter reports it unreadable


def _tcl_literal_dollars(command: str) -> str:
    """``command`` with each backslash-escaped ``\\$`` (an odd run of backslashes before it)
    written as ``\\`` + :data:`LITERAL_DOLLAR`, which Tcl's backslash substitution turns into
    the marker alone (Tcl(n) rule 9: a backslash before an ordinary character is dropped)."""
    return re.sub(r"(?<!\\)((?:\\\\)*)\\\$", lambda m: m.group(1) + "\\" + LITERAL_DOLLAR,
                  command)


@functools.lru_cache(maxsize=1)
def _tcl():
    """A Tcl interpreter (``tkinter.Tcl()``, no Tk), or None where Python has no tkinter: Tcl's
    own parser reads modulefile words (braces, quotes, backslashes) exactly as the module
    command will."""
    try:
        import tkinter

        return tkinter.Tcl()
    except Exception:  # ImportError, or TclError where the Tcl library is missing
        return None


def _tcl_complete(text: str, label: str = "Tcl text") -> bool:
    """Whether ``text`` is a complete Tcl command (``info complete``); True for text Tcl cannot
    take at all (NUL bytes, lone surrogates), which ``_tcl_words`` then reports unreadable.

    :raises BadInputError: more ``[`` than Tcl's parser is given (``advisor.nesting.check_tcl``:
        it recurses in C per nested ``[``), naming ``label``.
    """
    from advisor.nesting import check_tcl

    check_tcl(text, label)
    try:
        return bool(_tcl().call("info", "complete", text))
    except Exception:
        return True


def _tcl_commands(command: str) -> list[str]:
    """``command`` split at each ``;`` that Tcl reads as a command separator: one that is not
    backslash-escaped and ends a complete command (``info complete``: not inside quotes,
    braces or brackets, asked only where the answer can change: :class:`_Completion`); a
    comment (a command starting with ``#``) runs to the line's end."""
    out: list[str] = []
    start = prev = 0
    acc = _Completion(_tcl_complete)
    for m in re.finditer(";", command):
        i = m.start()
        if _odd_backslashes(command, i):
            continue
        if _COMMENT_START.match(command, start):
            break  # the rest of the line belongs to the comment
        acc.feed(command[prev:i])
        prev = i
        if acc.is_complete():
            out.append(command[start:i])
            start = prev = i + 1
            acc = _Completion(_tcl_complete)
    out.append(command[start:])
    return out


def _tcl_words(command: str) -> list[list[str]]:
    """A Tcl command line as commands (split at ``;``) of words, comments dropped; [] when it
    does not parse.  Substitutions stay literal (``$x``, ``[cmd]``): lint reads them as values
    it cannot know."""
    out: list[list[str]] = []
    for part in _tcl_commands(command):
        if part.lstrip().startswith("#"):
            continue
        try:
            words = _tcl().splitlist(_tcl_literal_dollars(part))
        except Exception:  # TclError (unbalanced), TypeError (NUL), UnicodeError (surrogates)
            return []
        if words:
            out.append(list(words))
    return out


def _split_value(name: str, value: str, sep_hint: Optional[str] = None
                 ) -> tuple[Optional[str], bool, Optional[str]]:
    """Interpret expansions: ``${N}<sep>items`` / ``$N:q<sep>items`` -> (items, append, sep);
    another ``$`` -> (None, False, None) (unknown); plain text -> (value, False, None)."""
    if "$" not in value:
        return value, False, None
    m = re.match(r"^\$(?:\{" + re.escape(name) + r"(?:-[^}]*)?\}|" + re.escape(name)
                 + r"(?::q)?)(.)(.*)$", value, re.S)
    if m and "$" not in m.group(2):
        return m.group(2), True, m.group(1)
    m = re.match(r"^(.*?)(.)\$(?:\{" + re.escape(name) + r"(?:-[^}]*)?\}|" + re.escape(name)
                 + r"(?::q)?)$", value, re.S)
    if m and "$" not in m.group(1):
        return m.group(1), True, m.group(2)
    return None, False, None


def _entry(name: str, raw: str, path: str, line: int, *, exported: bool,
           sep: Optional[str] = None, append: bool = False) -> EnvEntry:
    value, app, found_sep = _split_value(name, raw)
    return EnvEntry(name=name, value=value, path=path, line=line, exported=exported,
                    append=append or app, separator=sep or found_sep)


def _tcl_logical(text: str, path: str = "Tcl text") -> Iterator[Logical]:
    """The commands of a Tcl modulefile as :data:`advisor.formats.shwords.Logical` lines
    (``path`` names the file when its brackets nest too deep: ``advisor.nesting.check_tcl``)."""
    for line, command in _logical_lines(text, functools.partial(_tcl_complete, label=path)):
        split = _tcl_words(command)
        if split:
            yield line, "words", split
        elif command.strip() and not command.lstrip().startswith("#"):
            yield line, "problem", "a quote or brace is never closed"


def parse_shell(text: str, path: str, *, tcl: bool = False, fish: bool = False
                ) -> list[EnvEntry]:
    """sh and csh files (POSIX word rules, :mod:`advisor.formats.shwords`); fish files with
    ``fish`` (fish's single quotes); Tcl modulefiles with ``tcl`` (Tcl's own word rules when
    tkinter is there, else the POSIX ones)."""
    entries: list[EnvEntry] = []
    exported_names: set[str] = set()
    tcl = tcl and _tcl() is not None
    lines = _tcl_logical(text, path) if tcl else logical_lines(text, fish=fish)
    for line, kind, got in lines:
        if kind == "problem":
            entries.append(unreadable(path, line, str(got)))
            continue
        directive = sbatch_directive(str(got)) if kind == "directive" else None
        if directive is not None:
            # the job's environment: every step of the script inherits it (sbatch(1) --export)
            entries.extend(dataclasses.replace(e, launch=False)
                           for e in _launched(directive, path, line))
        if kind != "words":
            continue
        for words in got:
            while words and words[0] in _SH_KEYWORDS:
                words = words[1:]
            if not words:
                continue
            head = words[0]
            if head in ("export", "declare", "typeset") and (
                    head == "export" or any(w.startswith("-") and "x" in w for w in words[1:])):
                for w in words[1:]:
                    if w.startswith("-"):
                        continue
                    n, eq, v = w.partition("=")
                    if not NAME_RE.match(n):
                        entries.append(unreadable(path, line, f"{n!r} is not a variable name; "
                                                   f"{head} refuses it"))
                        continue
                    exported_names.add(n)
                    if eq:
                        entries.append(_entry(n, v, path, line, exported=True))
                continue
            if head == "setenv" and len(words) >= 2 and NAME_RE.match(words[1]):  # csh, Tcl
                entries.append(_entry(words[1], " ".join(words[2:]), path, line, exported=True))
                continue
            if head == "set" and len(words) >= 3 and any(
                    w.startswith("-") and ("x" in w or w == "--export") for w in words[1:]):
                first = next((i for i, w in enumerate(words[1:], 1) if not w.startswith("-")),
                             len(words))  # fish: set -gx N v...; options only before the name
                rest = words[first:]
                if rest and NAME_RE.match(rest[0]):
                    entries.append(_entry(rest[0], " ".join(rest[1:]), path, line, exported=True))
                continue
            if head in ("append-path", "prepend-path", "pushenv"):  # Tcl modulefiles
                sep = ":"
                rest: list[str] = []
                it = iter(words[1:])
                for w in it:  # options only before the variable name (modulefile(5))
                    if rest:
                        rest.append(w)  # a value, even one that starts with "-"
                    elif w in ("-d", "--delim"):
                        sep = next(it, sep)
                    elif w.startswith("--delim="):
                        sep = w.split("=", 1)[1]
                    elif not w.startswith("-"):
                        rest.append(w)
                if len(rest) >= 2 and NAME_RE.match(rest[0]):
                    entries.append(EnvEntry(rest[0], sep.join(rest[1:]), path, line, True,
                                            append=head != "pushenv",
                                            separator=sep if head != "pushenv" else None,
                                            prepend=head == "prepend-path"))
                continue
            # leading NAME=value words: assignments (for the shell, or for one command)
            i = 0
            prefix: list[EnvEntry] = []
            for i, w in enumerate(words):
                n, eq, v = w.partition("=")
                if eq and not NAME_RE.match(n) and i == 0 and len(words) == 1:
                    entries.append(unreadable(path, line, f"{n!r} is not a variable name: the "
                                               "shell runs this line as a command"))
                if not eq or not NAME_RE.match(n):
                    break
                prefix.append(_entry(n, v, path, line, exported=len(words) > 1))
            else:
                entries.extend(prefix)
                continue
            # NAME=value words before a command reach that command only
            entries.extend(dataclasses.replace(e, launch=True) for e in prefix)
            entries.extend(_launched(words[i:], path, line))
    if not exported_names and not any(e.exported for e in entries):
        # KEY=value lines only: an env file (Docker --env-file, systemd EnvironmentFile, .env)
        # whose every line reaches the program
        exported_names = {e.name for e in entries}
    return [_literal(e if e.exported or e.name not in exported_names else
                     dataclasses.replace(e, exported=True)) for e in entries]


def _literal(e: EnvEntry) -> EnvEntry:
    """``e`` with each :data:`LITERAL_DOLLAR` written back as ``$``."""
    if e.value is None or LITERAL_DOLLAR not in e.value:
        return e
    return dataclasses.replace(e, value=e.value.replace(LITERAL_DOLLAR, "$"))


def _launched(words: list[str], path: str, line: int) -> list[EnvEntry]:
    """Entries for the settings a launch line passes (:func:`advisor.formats.launch.
    launch_settings`); a value the caller supplies, or one with an expansion, is unknown."""
    return [EnvEntry(n, None, path, line, True, launch=True) if raw is None
            else dataclasses.replace(_entry(n, raw, path, line, exported=True), launch=True)
            for n, raw in launch_settings(words)]

