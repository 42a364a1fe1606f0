"""Quoting and escaping shared by the output formats: one function per target language, each
writing ``text`` as one literal word or string that its reader gives back unchanged.

Control characters never reach these functions (``advisor.specs.writing.check_value`` refuses
them first).  Round trips are tested in tests/formats (each format's own parser) and by the real
consumers in tests/emit (bash, dash, zsh, tcsh, fish, Lmod, Environment Modules).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Optional


def sh_quote(text: str) -> str:
    """``text`` as one POSIX shell word: single quotes, each ``'`` written as ``'\\''``
    (POSIX.1-2017 XCU 2.2.2: inside single quotes no character is special)."""
    return "'" + text.replace("'", "'\\''") + "'"


def csh_quote(text: str) -> str:
    """``text`` as one csh word: runs of ordinary characters in single quotes; ``'`` and ``!``
    (history substitution happens even inside single quotes) written outside the quotes as
    ``\\'`` and ``\\!``.  Inside csh single quotes ``$``, backticks, ``"`` and backslashes are
    literal (csh(1), "Lexical structure")."""
    if not text:
        return "''"
    parts = re.split(r"(['!])", text)
    return "".join("\\" + p if p in ("'", "!") else f"'{p}'" for p in parts if p)


def fish_quote(text: str) -> str:
    """``text`` as one fish word: single quotes, where only ``\\'`` and ``\\\\`` are escapes
    (fish documentation, "Quotes")."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def lua_quote(text: str) -> str:
    """``text`` as a Lua double-quoted string literal: ``\\`` and ``"`` escaped; every other
    character is written as its UTF-8 bytes (Lua strings are byte strings; Lua 5.1 reference
    manual, section 2.1)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def tcl_quote(text: str) -> str:
    """``text`` as one Tcl word in double quotes with ``\\ " $ [ ]`` backslash-escaped
    (Tcl(n) rules 4, 6-8: inside double quotes only command, variable and backslash
    substitution happen; braces and ``;`` are literal)."""
    return '"' + "".join("\\" + ch if ch in '\\"$[]' else ch for ch in text) + '"'


#: Characters a YAML 1.1/1.2 reader accepts literally besides printable ASCII (PyYAML
#: ``Reader.NON_PRINTABLE``, YAML 1.2 section 5.1 c-printable) minus those YAML treats as line
#: breaks (U+0085, U+2028, U+2029) or a byte-order mark (U+FEFF): those are escaped.
_YAML_ESCAPE_ALWAYS = {0x85, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF}


def yaml_quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar: ``\\`` and ``"`` escaped, non-printable and
    line-breaking code points as ``\\uXXXX`` / ``\\UXXXXXXXX`` (YAML 1.2, section 5.7)."""
    out = ['"']
    for ch in text:
        cp = ord(ch)
        if ch in '\\"':
            out.append("\\" + ch)
        elif 0x20 <= cp < 0x7F:
            out.append(ch)
        elif cp < 0xA0 or cp in _YAML_ESCAPE_ALWAYS or unicodedata.category(ch) in ("Cs", "Co", "Cn"):
            out.append(f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def python_quote(text: str) -> str:
    """``text`` as a Python string literal that ``ast.literal_eval`` reads back unchanged."""
    return repr(text)


#: What a module tool (Lmod 8.6, Environment Modules 5) does to a value on its way from the
#: modulefile into the loading shell, found by loading one-value modulefiles in tcsh, bash, zsh
#: and fish through both tools (tests/formats/test_module_consumers.py keeps checking it):
#: the modulefile is written correctly, but the shell code the tool prints for the user's shell
#: is not quoted for every character.  Each pattern gives the first offending match.
MODULE_MANGLED: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"!"), "Lmod writes '!' for tcsh with one backslash too many"),
    (re.compile(r"[{}]"), "tcsh reads a brace in the code both tools print as a brace "
                          "expansion ('Missing }')"),
    (re.compile(r"[\[\]]"), "Environment Modules leaves '[...]' unquoted for tcsh, which "
                            "globs it ('No match')"),
    (re.compile(r"~"), "Environment Modules leaves '~' unquoted: the shell expands it to a "
                       "home directory"),
    (re.compile(r"(?:^|:)="), "zsh expands '=word' at the start or after ':' to the path of a "
                              "command (EQUALS)"),
    (re.compile("[\u2028\u2029]"), "fish drops a line or paragraph separator (seen with a value "
                                     "of U+2028 alone)"),
)


def module_unsafe(value: str) -> Optional[str]:
    """Why a module tool would not deliver ``value`` unchanged to every shell it serves
    (:data:`MODULE_MANGLED`), or None when it would."""
    for pattern, why in MODULE_MANGLED:
        m = pattern.search(value)
        if m:
            return f"holds {m.group()!r}: {why}"
    return None
