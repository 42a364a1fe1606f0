"""``advisor lint``: check env files and the live environment against what the libraries read.

MPICH, glibc and most HPC libraries silently ignore an environment variable they do not know, and
some abort at init on a value they cannot parse.  This module reads assignments from files (or the
live environment), and reports, per assignment, with its file and line:

* ``unknown-name``: a name in a known family (``MPIR_CVAR_``/``MPIR_PARAM_``/``MPICH_`` for MPICH,
  ``GLIBC_TUNABLES`` items, ``DLAF_``, ``CUPY_``, ``OMPI_MCA_``) that the installed library does not
  list, with near-miss suggestions (``difflib``);
* ``outdated-name`` / ``wrong-version``: a knob record says the name was renamed or is not read by
  the detected library version;
* ``flavour-mismatch``: a name of another flavour of the library (HPE Cray MPICH vs upstream);
* ``invalid-value``: a value the library cannot parse or rejects (type, unit suffix, enum, range);
* ``duplicate`` (the same setting assigned twice, or through two aliases) and ``not-exported`` (a
  sourced sh file that assigns without ``export``);
* whatever each registered probe's optional ``lint(env, facts)`` adds (inert, blocked here,
  overridden by the library's init).

Names come from the installed library's own list when it can be asked (``mpivars`` for MPICH,
``ld.so --list-tunables`` for glibc >= 2.33), else from the knob records plugins register.  The
lists are read once per process (cached by tool path).

Input formats (``detect_format``): POSIX sh (``NAME=value``, ``export NAME=value``, the list-merge
``if`` lines ``advisor emit -f env`` writes; Docker/systemd env files are the same syntax), csh
(``setenv``), fish (``set -gx``), Tcl modulefiles (``setenv``, ``append-path``), Lmod
(``setenv("N", "v")``, ``append_path``), Spack ``env_vars`` YAML (``set``, ``append_path``,
``prepend_path``; top level or under ``spack:``), EasyBuild easyconfigs (the ``modextravars``
dict), a JSON object of names to values, and the project's JSON/TOML outputs (``advisor emit -f
json|toml``) and profiles.  Words are split with ``shlex`` (POSIX rules); an expansion of the same
variable at the start of a value (``"${N}":item``) is read as an append; other expansions make the
value unknown (its checks are skipped).

Findings are ``LintFinding`` objects: the frozen schema's ``Finding`` (id, severity, message,
remedy) plus ``path``, ``line`` (1-based; None for the live environment) and ``name``.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from advisor.errors import BadInputError
from advisor.glibc import find_ld_so, parse_list_tunables, parse_number
from advisor.knobs import Knob, version_in
from advisor.models import Facts, Finding

ENV_PATH = "<environment>"

#: Seconds allowed for ``mpivars`` / ``ld.so --list-tunables`` (each ~0.03 s here).
TOOL_TIMEOUT_S = 10.0

#: Largest env file read (a site env file is a few KiB; this keeps a wrong file out of memory).
MAX_FILE_BYTES = 4 * 1024 * 1024

#: ``difflib.SequenceMatcher.ratio`` of the name's suffix (family prefix removed) above which a
#: listed name is offered as "did you mean".  Measured on the cvar-typos case against the 465
#: CVARs of MPICH 5.0.2: the intended names score 0.89 (OFI_ENABLE_TAGGED -> CH4_OFI_ENABLE_TAGGED)
#: to 0.98 (TRESHOLD -> THRESHOLD); unrelated names such as FOO_BAR score below 0.6.
SUGGEST_CUTOFF = 0.8

#: Similarity from which a name outside every family is reported as a slip of a registered
#: knob's name (``difflib`` ratio, same first ``_`` word).  Measured against the knob records
#: of the built-in plugins: slips score 0.96-0.99 (GLIBC_TUNABLE, CUPY_GPU_MEMORY_LIMITS,
#: VENDOR_COPY_MOD for a plugin's VENDOR_COPY_MODE); this machine's environment and common HPC
#: variables (SLURM_*, OMP_*, CUDA_*, CUPY_CACHE_DIR, UCX_TLS, ...) score 0.46 at most.
NEAR_KNOB_CUTOFF = 0.9
MAX_SUGGESTIONS = 3

#: MPICH reads every control variable under three prefixes (MPICH's generated mpir_cvars.c;
#: background.md section 3).
MPICH_PREFIXES = ("MPIR_CVAR_", "MPIR_PARAM_", "MPICH_")

#: Words MPL_env2bool accepts for a boolean CVAR, compared case-sensitively (MPICH
#: src/mpl/src/str/mpl_env.c).  Measured on MPICH 5.0.2: ``MPIR_CVAR_CH4_CMA_ENABLE=yes`` and
#: ``=true`` pass MPI_Init, ``=Yes``, ``=maybe``, ``=2`` and ``= 1`` abort it, and an integer CVAR
#: (``MPIR_CVAR_ENABLE_GPU=yes``) aborts with "Invalid character y".
MPL_BOOL_WORDS = ("YES", "yes", "TRUE", "true", "ON", "on", "1",
                  "NO", "no", "FALSE", "false", "OFF", "off", "0")
_MPL_BOOL_TEXT = "1/0, yes/no, true/false or on/off, all lower or all upper case, no blanks"

#: MPL_env2int: optional blanks, optional sign, decimal digits, nothing after (mpl_env.c);
#: measured: ``16k`` and ``0x10`` abort MPI_Init ("Invalid character").
_MPL_INT = re.compile(r"^[ \t\n\v\f\r]*[-+]?[0-9]*$")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KkMmGgTt])(i?[Bb])?\s*$")
_SIZE_FACTOR = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


@dataclass(frozen=True)
class Family:
    """A naming family: variables with these prefixes belong to ``library``."""

    library: str
    prefixes: tuple[str, ...]
    #: True when the installed library's own list (a catalogue) is complete for the family, so a
    #: name outside it is certainly ignored.
    listed_by: Optional[str] = None


#: Families lint knows.  MPICH: mpivars; glibc: tunables inside GLIBC_TUNABLES (glibc manual,
#: "Tunables"); DLA-Future reads ``DLAF_<NAME>`` (eth-cscs/DLA-Future src/init.cpp); CuPy reads
#: ``CUPY_*`` (docs.cupy.dev, "Environment variables"); Open MPI reads MCA parameters as
#: ``OMPI_MCA_<name>`` (Open MPI docs, "Setting MCA parameter values").
FAMILIES: tuple[Family, ...] = (
    Family("mpich", MPICH_PREFIXES, listed_by="mpivars"),
    Family("dla-future", ("DLAF_",)),
    Family("cupy", ("CUPY_",)),
    Family("openmpi", ("OMPI_MCA_",)),
)
GLIBC_TUNABLES = "GLIBC_TUNABLES"


#: Open MPI knob records lint carries itself (no built-in plugin covers Open MPI yet).  Source:
#: docs.open-mpi.org v5.0.x "Shared Memory" (the vader BTL was renamed sm in 5.0.0; vader_
#: parameters are only aliases in 5.0.x, "will likely disappear"; single copy moved to the smsc
#: framework: xpmem, cma, knem) and background.md section 3.
_OMPI_SM_DOC = ("docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/shared-memory.html; "
                "Open MPI v5.0.0 release notes")
OPENMPI_KNOBS: tuple[Knob, ...] = (
    Knob(library="openmpi", name="OMPI_MCA_btl_vader_single_copy_mechanism", type="enum",
         allowed=["cma", "xpmem", "knem", "none"], versions="<5", renamed_to="OMPI_MCA_smsc",
         description="Open MPI <= 4.1 single-copy mechanism of the vader BTL; 5.x selects it "
                     "with the smsc framework (OMPI_MCA_smsc=cma|xpmem|knem)",
         source=_OMPI_SM_DOC),
    Knob(library="openmpi", name="OMPI_MCA_smsc", type="str", versions=">=5",
         description="Open MPI 5 single-copy framework selection (cma, xpmem, knem; ^name "
                     "excludes)", source=_OMPI_SM_DOC),
)
#: Open MPI 5.0 renamed every ``btl_vader_*`` parameter to ``btl_sm_*`` (same source).
OPENMPI_RENAMED_PREFIXES = (("OMPI_MCA_btl_vader_", "OMPI_MCA_btl_sm_", "5"),)


# --------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class EnvEntry:
    """One assignment read from a file or the environment.

    ``value`` is None when it is not known statically (a shell expansion).  ``append``: the value
    is items added to an existing list value (``"${N}":item``, ``append-path``).  ``line`` is
    1-based, None for the live environment.
    """

    name: str
    value: Optional[str]
    path: str
    line: Optional[int]
    exported: bool = True
    append: bool = False
    separator: Optional[str] = None
    problem: Optional[str] = None  # the line could not be read as a setting: why
    prepend: bool = False  # added in front of the existing list value (with ``append``)


def _unreadable(path: str, line: int, why: str) -> EnvEntry:
    return EnvEntry(name="", value=None, path=path, line=line, problem=why)


@dataclass(frozen=True)
class LintFinding:
    """A ``Finding`` with where it was found (the schema's ``Finding`` has no location)."""

    finding: Finding
    path: Optional[str] = None
    line: Optional[int] = None
    name: Optional[str] = None

    @property
    def severity(self) -> str:
        return self.finding.severity

    @property
    def location(self) -> str:
        """``path:line`` (files), ``<environment>:NAME`` (live environment) or ``-``."""
        if self.path is None:
            return "-"
        if self.line is None:
            return f"{self.path}:{self.name}" if self.name else self.path
        return f"{self.path}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "line": self.line, "name": self.name}
        d.update(self.finding.model_dump(mode="json", exclude_none=True))
        return d


# --------------------------------------------------------------------------- parsing


_SH_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "{", "}", "!", "end", "begin",
                "endif", "command", "builtin", "while", "until", "(", ")"}
_SEP_TOKENS = {";", "&&", "||", "|", "&", ";;", "(", ")"}


#: The formats ``parse_env_text`` reads (``--format`` values besides ``auto``).
FORMATS = ("sh", "csh", "fish", "tcl", "lmod", "spack", "easybuild", "json", "toml")


def detect_format(text: str, path: str = "") -> str:
    """One of ``FORMATS`` from the file name and text (``sh`` when nothing else fits)."""
    suffix = Path(path).suffix.lower()
    by_suffix = {".csh": "csh", ".tcsh": "csh", ".fish": "fish", ".lua": "lmod", ".tcl": "tcl",
                 ".json": "json", ".toml": "toml", ".sh": "sh", ".bash": "sh", ".zsh": "sh",
                 ".ksh": "sh", ".env": "sh", ".yaml": "spack", ".yml": "spack",
                 ".eb": "easybuild"}
    if suffix in by_suffix:
        return by_suffix[suffix]
    head = text.lstrip()
    if head.startswith("#%Module"):
        return "tcl"
    if re.search(r"^(spack|env_vars):", text, re.M):
        return "spack"
    if re.search(r"^modextravars\s*=", text, re.M):
        return "easybuild"
    if head.startswith("{") or head.startswith("["):
        try:
            json.loads(text)
            return "json"
        except ValueError:
            pass
    if re.search(r"^\s*(setenv|pushenv|append_path|prepend_path)\s*\(", text, re.M):
        return "lmod"
    if re.search(r"^\s*\[\[?[A-Za-z_.]+\]\]?\s*$", text, re.M) or re.search(
            r"^\s*schema_version\s*=", text, re.M):
        return "toml"
    return "sh"


def _sh_complete(text: str) -> bool:
    """Whether ``text`` closes every quote it opens (POSIX rules, ``shlex``)."""
    try:
        shlex.split(text, comments=True)
        return True
    except ValueError:
        return False


def _logical_lines(text: str, complete: Callable[[str], bool] = _sh_complete, *,
                   keep_backslash: bool = False) -> Iterable[tuple[int, str]]:
    """Yield ``(first line number, text)`` of complete commands: physical lines joined while
    ``complete`` says the command goes on (an open quote or brace) or a line ends with a
    backslash (removed, unless ``keep_backslash``: Tcl's word splitting reads it)."""
    buf: list[str] = []
    start = 0
    for no, line in enumerate(text.split("\n"), 1):  # the shell ends lines at \n only
        if not buf:
            start = no
        buf.append(line)
        joined = "\n".join(buf)
        if joined.endswith("\\") and not joined.endswith("\\\\"):
            if not keep_backslash:
                buf[-1] = line[:-1]
            continue
        if not complete(joined):
            continue
        yield start, joined
        buf = []
    if buf and "\n".join(buf).strip():
        yield start, "\n".join(buf)  # never closed: the word splitter reports it unreadable


def _words(command: str) -> list[list[str]]:
    """Split a command line into simple commands (at ``;``, ``&&``, ``||``, ``|``), as words."""
    lex = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
    lex.whitespace_split = True
    lex.commenters = "#"
    out: list[list[str]] = [[]]
    try:
        for tok in lex:
            if tok in _SEP_TOKENS:
                out.append([])
            else:
                out[-1].append(tok)
    except ValueError:
        return []
    return [w for w in out if w]


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


def _tcl_complete(text: str) -> bool:
    """Whether ``text`` is a complete Tcl command (``info complete``); True for text Tcl cannot
    take at all (NUL bytes, lone surrogates), which ``_tcl_words`` then reports unreadable."""
    try:
        return bool(_tcl().call("info", "complete", text))
    except Exception:
        return True


def _tcl_words(command: str) -> list[list[str]]:
    """A Tcl command line as commands (split at ``;``) of words, comments dropped; [] when it
    does not parse.  Substitutions stay literal (``$x``, ``[cmd]``): lint reads them as values
    it cannot know."""
    try:
        words = _tcl().splitlist(command)
    except Exception:  # TclError (unbalanced), TypeError (NUL), UnicodeError (surrogates)
        return []
    out: list[Optional[list[str]]] = [[]]
    for w in words:
        ends = w.endswith(";") and w != ";"
        if w.startswith(";"):  # "8192" ;# note -> ... ";#" "note"
            out.append([])
            w = w[1:]
        if ends:
            w = w[:-1]
        if not w:
            continue
        if out[-1] is None:
            continue  # inside a comment, which runs to the line's end
        if not out[-1] and w.startswith("#"):
            out[-1] = None
            continue
        out[-1].append(w)
        if ends:
            out.append([])
    return [c for c in out if c]


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


def _parse_shell(text: str, path: str, *, tcl: bool = False) -> list[EnvEntry]:
    """sh, csh and fish files (POSIX word rules, ``shlex``); Tcl modulefiles with ``tcl`` (Tcl's
    own word rules when tkinter is there, else the POSIX ones)."""
    entries: list[EnvEntry] = []
    exported_names: set[str] = set()
    tcl = tcl and _tcl() is not None
    lines = (_logical_lines(text, _tcl_complete, keep_backslash=True) if tcl
             else _logical_lines(text))
    words_of = _tcl_words if tcl else _words
    for line, command in lines:
        split = words_of(command)
        if not split and command.strip() and not command.lstrip().startswith("#"):
            entries.append(_unreadable(path, line, "a quote is never closed"))
        for words in split:
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
                    if not _NAME.match(n):
                        entries.append(_unreadable(path, line, f"{n!r} is not a variable name; "
                                                   f"{head} refuses it"))
                        continue
                    exported_names.add(n)
                    if eq:
                        entries.append(_entry(n, v, path, line, exported=True))
                continue
            if head == "setenv" and len(words) >= 2 and _NAME.match(words[1]):  # csh, Tcl
                entries.append(_entry(words[1], " ".join(words[2:]), path, line, exported=True))
                continue
            if head == "set" and len(words) >= 3 and any(
                    w.startswith("-") and ("x" in w or w == "--export") for w in words[1:]):
                rest = [w for w in words[1:] if not w.startswith("-")]  # fish: set -gx N v...
                if rest and _NAME.match(rest[0]):
                    entries.append(_entry(rest[0], " ".join(rest[1:]), path, line, exported=True))
                continue
            if head in ("append-path", "prepend-path", "pushenv"):  # Tcl modulefiles
                sep = ":"
                rest: list[str] = []
                it = iter(words[1:])
                for w in it:
                    if w in ("-d", "--delim"):
                        sep = next(it, sep)
                    elif w.startswith("--delim="):
                        sep = w.split("=", 1)[1]
                    elif not w.startswith("-"):
                        rest.append(w)
                if len(rest) >= 2 and _NAME.match(rest[0]):
                    entries.append(EnvEntry(rest[0], sep.join(rest[1:]), path, line, True,
                                            append=head != "pushenv",
                                            separator=sep if head != "pushenv" else None,
                                            prepend=head == "prepend-path"))
                continue
            # leading NAME=value words: assignments (for the shell, or for one command)
            for i, w in enumerate(words):
                n, eq, v = w.partition("=")
                if eq and not _NAME.match(n) and i == 0 and len(words) == 1:
                    entries.append(_unreadable(path, line, f"{n!r} is not a variable name: the "
                                               "shell runs this line as a command"))
                if not eq or not _NAME.match(n):
                    break
                entries.append(_entry(n, v, path, line, exported=len(words) > 1))
    if not exported_names and not any(e.exported for e in entries):
        # KEY=value lines only: an env file (Docker --env-file, systemd EnvironmentFile, .env)
        # whose every line reaches the program
        exported_names = {e.name for e in entries}
    return [e if e.exported or e.name not in exported_names else
            EnvEntry(e.name, e.value, e.path, e.line, True, e.append, e.separator)
            for e in entries]


_LMOD = re.compile(r"^\s*(setenv|pushenv|append_path|prepend_path)\s*\((.*)\)\s*;?\s*(?:--.*)?$",
                   re.S)
_LMOD_START = re.compile(r"^\s*(setenv|pushenv|append_path|prepend_path)\s*\(")
#: Lines one Lmod call may span (its arguments one per line, with room for comments).
LMOD_CALL_MAX_LINES = 20


def _lmod_calls(text: str) -> Iterable[tuple[int, str, Optional[re.Match]]]:
    """``(line, text, match)`` of each Lmod call, joining the lines of a call whose arguments
    continue on the next lines (match None: not closed within ``LMOD_CALL_MAX_LINES``)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not _LMOD_START.match(lines[i]):
            i += 1
            continue
        for j in range(i, min(len(lines), i + LMOD_CALL_MAX_LINES)):
            joined = "\n".join(lines[i:j + 1])
            m = _LMOD.match(joined)
            if m:
                yield i + 1, joined, m
                i = j + 1
                break
        else:
            yield i + 1, lines[i], None
            i += 1


def _parse_lmod(text: str, path: str) -> list[EnvEntry]:
    entries: list[EnvEntry] = []
    for no, _call, m in _lmod_calls(text):
        if m is None:
            entries.append(_unreadable(path, no, "an Lmod call whose parentheses are not closed"))
            continue
        lex = shlex.shlex(m.group(2), posix=True, punctuation_chars=",")
        lex.whitespace_split = True
        try:
            args = [t for t in lex if t != ","]
        except ValueError:
            continue
        if len(args) < 2 or not _NAME.match(args[0]):
            continue
        fn = m.group(1)
        if fn in ("append_path", "prepend_path"):
            entries.append(EnvEntry(args[0], args[1], path, no, True, append=True,
                                    separator=args[2] if len(args) > 2 else ":",
                                    prepend=fn == "prepend_path"))
        else:
            entries.append(EnvEntry(args[0], args[1], path, no, True))
    return entries


def _line_of(lines: list[str], pattern: re.Pattern, start: int) -> tuple[Optional[int], int]:
    for i in range(start, len(lines)):
        if pattern.search(lines[i]):
            return i + 1, i + 1
    return None, start


def _parse_structured(text: str, path: str, fmt: str) -> list[EnvEntry]:
    if fmt == "json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise BadInputError(f"{path}: malformed JSON: {exc}") from None
    else:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise BadInputError(f"{path}: malformed TOML: {exc}") from None
    items: list[tuple[str, str, Optional[str]]] = []
    if isinstance(data, dict) and isinstance(data.get("settings"), list):  # advisor emit json/toml
        for s in data["settings"]:
            if isinstance(s, dict) and s.get("kind", "env") == "env" and isinstance(s.get("name"), str):
                v = s.get("env_value", s.get("value"))
                items.append((s["name"], _scalar_text(v), s.get("separator")
                              if s.get("merge") == "append" else None))
    elif isinstance(data, dict) and "schema_version" in data:  # a profile
        from advisor.profile import profile_from_mapping

        prof = profile_from_mapping(data, source=path)
        for _res, _rec, s in prof.settings(include_defaults=True):
            items.append((s.name, _scalar_text(s.value), s.separator))
    elif fmt == "json" and isinstance(data, dict) and data and "settings" not in data:
        bad = next((k for k, v in data.items() if not _is_scalar(v)), None)
        if bad is not None:  # {"NAME": value, ...} with a value no variable can hold
            raise BadInputError(f"{path}: key {bad!r}: {json.dumps(data[bad])[:40]} is not a "
                                "value an environment variable can hold (string, number, "
                                "boolean)")
        lines = text.splitlines()
        out, pos = [], 0
        for name, value in data.items():
            line, pos = _line_of(lines, re.compile(r'"' + re.escape(json.dumps(name)[1:-1])
                                                   + r'"\s*:'), pos)
            out.append(_entry_or_problem(str(name), _scalar_text(value), path, line))
        return out
    else:
        raise BadInputError(f"{path}: {fmt.upper()} file is neither an 'advisor emit' output "
                            "(key 'settings'), a profile (key 'schema_version')"
                            + (" nor an object of names to values" if fmt == "json" else ""))
    lines = text.splitlines()
    pos = 0
    out = []
    for name, value, sep in items:
        pat = re.compile(r"[\"']?name[\"']?\s*[:=]\s*[\"']" + re.escape(name) + r"[\"']")
        line, pos = _line_of(lines, pat, pos)
        out.append(EnvEntry(name, value, path, line, True, append=sep is not None, separator=sep))
    return out


def _is_scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool))


def _entry_or_problem(name: str, value: Optional[str], path: str, line: Optional[int], *,
                      append: bool = False, separator: Optional[str] = None) -> EnvEntry:
    if not _NAME.match(name):
        return _unreadable(path, line or 0, f"{name!r} is not an environment variable name")
    return EnvEntry(name, value, path, line, True, append=append, separator=separator)


#: Spack's list separator for ``append_path``/``prepend_path`` (``os.pathsep``; Spack
#: documentation, "Environment Variable Settings (env_vars.yaml)").
_SPACK_SEPARATOR = ":"


def _parse_spack(text: str, path: str) -> list[EnvEntry]:
    """A Spack ``env_vars.yaml`` (or a ``spack.yaml`` with ``spack: env_vars:``).  ``set`` is an
    assignment, ``append_path``/``prepend_path`` add one item; ``unset`` and ``remove_path``
    assign nothing and are skipped."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BadInputError(f"{where}: malformed YAML: {' '.join(str(what).split())}") from None

    def child(node: Any, key: str) -> Any:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == key:
                    return v
        return None

    section = child(root, "env_vars") or child(child(root, "spack"), "env_vars")
    if section is None:
        raise BadInputError(f"{path}: YAML file has no 'env_vars' (Spack environment) mapping")
    if not isinstance(section, yaml.MappingNode):
        raise BadInputError(f"{path}:{section.start_mark.line + 1}: key 'env_vars': must be a "
                            "mapping of actions (set, append_path, ...)")
    out: list[EnvEntry] = []
    for action in ("set", "append_path", "prepend_path"):
        node = child(section, action)
        if node is None:
            continue
        if not isinstance(node, yaml.MappingNode):
            raise BadInputError(f"{path}:{node.start_mark.line + 1}: key 'env_vars.{action}': "
                                "must be a mapping of variable names to values")
        for k, v in node.value:
            line = k.start_mark.line + 1
            if not isinstance(v, yaml.ScalarNode):
                out.append(_unreadable(path, line, f"{action}: {k.value}: value is not a scalar"))
                continue
            value = yaml.safe_load(yaml.serialize(v))
            appended = action != "set"
            entry = _entry_or_problem(str(k.value), _scalar_text(value), path, line,
                                      append=appended,
                                      separator=_SPACK_SEPARATOR if appended else None)
            if action == "prepend_path" and entry.problem is None:
                entry = dataclasses.replace(entry, prepend=True)
            out.append(entry)
    return out


def _parse_easybuild(text: str, path: str) -> list[EnvEntry]:
    """The ``modextravars`` dict of an easyconfig (``NAME: value`` or ``NAME: {'value': v,
    ...}``, EasyBuild 5), read with ``ast.literal_eval``: nothing in the file is run."""
    import ast

    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise BadInputError(f"{path}: not Python (easyconfig) syntax: line {exc.lineno}: "
                            f"{exc.msg}") from None
    out: list[EnvEntry] = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "modextravars" for t in node.targets)):
            if any(isinstance(n, ast.Name) and n.id == "modextravars" for n in ast.walk(node)):
                # modextravars.update({...}), modextravars['N'] = v, +=: changed, not read
                out.append(_unreadable(path, node.lineno, "changes modextravars in a way lint "
                                       "does not read (only 'modextravars = {...}' is read)"))
            continue
        if not isinstance(node.value, ast.Dict):
            out.append(_unreadable(path, node.lineno, "modextravars is not a dict literal"))
            continue
        for k, v in zip(node.value.keys, node.value.values):
            line = (k or v).lineno
            try:
                name, value = ast.literal_eval(k), ast.literal_eval(v)
            except (ValueError, TypeError, SyntaxError):
                out.append(_unreadable(path, line, "modextravars entry is not a literal"))
                continue
            if isinstance(value, dict):
                value = value.get("value")
            if not isinstance(name, str) or not _is_scalar(value):
                out.append(_unreadable(path, line, "modextravars entry is not NAME: value"))
                continue
            out.append(_entry_or_problem(name, _scalar_text(value), path, line))
    return out


def _scalar_text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def parse_env_text(text: str, *, path: str = "<text>", fmt: str = "auto") -> list[EnvEntry]:
    """Assignments in ``text`` (one of the formats in the module docstring), in file order.

    :param fmt: ``auto`` (``detect_format``) or a format name.
    :raises BadInputError: unknown ``fmt``; malformed JSON/TOML.
    """
    if fmt == "auto":
        fmt = detect_format(text, path)
    if fmt in ("sh", "env", "csh", "fish", "tcl"):
        return _parse_shell(text, path, tcl=fmt == "tcl")
    if fmt == "lmod":
        return _parse_lmod(text, path)
    if fmt in ("json", "toml"):
        return _parse_structured(text, path, fmt)
    if fmt == "spack":
        return _parse_spack(text, path)
    if fmt == "easybuild":
        return _parse_easybuild(text, path)
    raise BadInputError(f"--format {fmt!r}: not one of auto, {', '.join(FORMATS)}")


#: The path lint reports for text read from standard input (``advisor lint -``).
STDIN_PATH = "<stdin>"


def read_env_text(text: str, path: str, fmt: str = "auto") -> list[EnvEntry]:
    """``parse_env_text``, plus one unreadable entry when nothing in a non-empty line-based text
    (sh, csh, fish, Tcl, Lmod) reads as a setting: a clean report on text lint cannot read would
    be a false all-clear.  The structured formats refuse what they cannot read instead, and an
    easyconfig without ``modextravars`` truly sets nothing."""
    if fmt == "auto":
        fmt = detect_format(text, path)
    entries = parse_env_text(text, path=path, fmt=fmt)
    if fmt in ("spack", "easybuild", "json", "toml"):
        return entries
    substantive = [i for i, ln in enumerate(text.splitlines(), 1)
                   if ln.strip() and not ln.lstrip().startswith(("#", "--", "//"))]
    if not entries and substantive:
        entries = [_unreadable(path, substantive[0], "no line of this file reads as a setting "
                               "in the forms lint knows (sh, csh, fish, Tcl, Lmod, Spack YAML, "
                               "EasyBuild, JSON, TOML)")]
    return entries


def read_env_file(path: Path | str, fmt: str = "auto") -> list[EnvEntry]:
    """Read and parse one file (``-``: standard input, reported as ``<stdin>``).

    :raises BadInputError: missing, unreadable, binary or too large; malformed JSON, TOML,
        YAML or easyconfig syntax.
    """
    from advisor.textfile import read_text_file, read_text_stream

    if str(path) == "-":
        text = read_text_stream(sys.stdin.buffer, STDIN_PATH, kind="env file",
                                max_bytes=MAX_FILE_BYTES)
        return read_env_text(text, STDIN_PATH, fmt)
    p = Path(path)
    text = read_text_file(p, kind="env file", max_bytes=MAX_FILE_BYTES)
    return read_env_text(text, str(p), fmt)


def live_env_entries(environ: Optional[Mapping[str, str]] = None) -> list[EnvEntry]:
    """The live environment (``os.environ`` by default) as entries without line numbers."""
    env = os.environ if environ is None else environ
    return [EnvEntry(n, v, ENV_PATH, None, True) for n, v in sorted(env.items())]


def resolve_env(entries: Sequence[EnvEntry], base: Optional[Mapping[str, str]] = None
                ) -> dict[str, str]:
    """The environment the entries produce, in order (later wins; appends join with their
    separator).  Entries with an unknown value are left out; ``base`` is the starting env."""
    env: dict[str, str] = dict(base or {})
    for e in entries:
        if e.value is None or not e.exported:
            continue
        if e.append and env.get(e.name):
            env[e.name] = env[e.name] + (e.separator or ":") + e.value
        else:
            env[e.name] = e.value
    return env


# --------------------------------------------------------------------------- catalogues


@dataclass(frozen=True)
class CatalogueEntry:
    """One name of a library's own list.  ``type``: the library's type word (``MPI_INT``,
    ``MPI_CHAR``, ``number``, ``string``); ``choices``: enum values listed with it."""

    name: str
    type: Optional[str] = None
    default: Optional[str] = None
    choices: tuple[str, ...] = ()
    minimum: Optional[int] = None
    maximum: Optional[int] = None


@dataclass
class Catalogue:
    """The names a library installed here says it reads, from its own tool (``source``)."""

    library: str
    source: str
    entries: dict[str, CatalogueEntry] = field(default_factory=dict)


_MPIVARS_VAR = re.compile(r"^\s+(MPIR_CVAR_[A-Z0-9_]+)\s*=([^\t]*)\t[^\t]*\t[^\t]*\t(MPI_[A-Z_]+)")
_MPIVARS_CHOICE = re.compile(r"^([A-Za-z0-9_]+)\s+-\s")


def parse_mpivars(text: str, source: str = "mpivars") -> Catalogue:
    """``mpivars`` output -> catalogue of CVARs with default, MPI type and enum choices (the
    ``choice - description`` lines that follow a variable)."""
    cat = Catalogue("mpich", source)
    current: Optional[str] = None
    choices: list[str] = []

    def flush() -> None:
        if current is not None and choices:
            e = cat.entries[current]
            cat.entries[current] = CatalogueEntry(e.name, e.type, e.default, tuple(choices))

    for line in text.splitlines():
        m = _MPIVARS_VAR.match(line)
        if m:
            flush()
            name = m.group(1)
            choices = []
            if name in cat.entries:  # the trailing summary repeats names
                current = None
                continue
            cat.entries[name] = CatalogueEntry(name, m.group(3), m.group(2).strip())
            current = name
            continue
        if line.startswith(("\t", " ")):
            flush()
            current, choices = None, []
            continue
        c = _MPIVARS_CHOICE.match(line)
        if c and current is not None:
            choices.append(c.group(1))
    flush()
    return cat


def parse_glibc_tunables(text: str, source: str = "ld.so --list-tunables") -> Catalogue:
    """``ld.so --list-tunables`` output (glibc >= 2.33) -> catalogue with min/max
    (``advisor.glibc.parse_list_tunables``)."""
    cat = Catalogue("glibc", source)
    for name, t in parse_list_tunables(text).items():
        numeric = t.min is not None
        cat.entries[name] = CatalogueEntry(name, "number" if numeric else "string",
                                           t.text, (), t.min, t.max)
    return cat


def find_mpivars(python: Optional[str] = None) -> Optional[str]:
    """``mpivars`` next to the interpreter (a venv with the ``mpich`` wheel), else on PATH."""
    cand = Path(python or sys.executable).parent / "mpivars"
    if cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    return shutil.which("mpivars")


@functools.lru_cache(maxsize=None)
def _run_tool(argv: tuple[str, ...]) -> Optional[str]:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.stdout.strip() else None


def installed_catalogues(facts: Optional[Facts] = None) -> dict[str, Catalogue]:
    """The catalogues of the libraries installed here (cached per process): ``mpich`` from
    ``mpivars`` when the detected MPI is MPICH (or unknown), ``glibc`` from ``ld.so
    --list-tunables``.  A tool that is missing or fails leaves its library out."""
    out: dict[str, Catalogue] = {}
    impl = facts.mpi.implementation if facts is not None else None
    mv = find_mpivars()
    if mv and impl in (None, "mpich"):
        text = _run_tool((mv,))
        if text:
            cat = parse_mpivars(text, source=mv)
            if cat.entries:
                out["mpich"] = cat
    ld = find_ld_so()
    if ld:
        text = _run_tool((ld, "--list-tunables"))
        if text:
            cat = parse_glibc_tunables(text, source=f"{ld} --list-tunables")
            if cat.entries:
                out["glibc"] = cat
    return out


# --------------------------------------------------------------------------- checks


def library_version(facts: Optional[Facts], library: str) -> Optional[str]:
    """The detected version of ``library`` (mpich/openmpi from the MPI facts, glibc from the
    kernel facts, others from ``Facts.python_packages``), or None when unknown."""
    if facts is None:
        return None
    if library in ("mpich", "openmpi", "intelmpi"):
        return facts.mpi.version if facts.mpi.implementation == library else None
    if library == "glibc":
        return facts.kernel.glibc_version
    return facts.python_packages.get(library)


def _family(name: str) -> Optional[Family]:
    for fam in FAMILIES:
        if name.startswith(fam.prefixes):
            return fam
    return None


def _mpich_canonical(name: str) -> str:
    for p in MPICH_PREFIXES:
        if name.startswith(p):
            return "MPIR_CVAR_" + name[len(p):]
    return name


def _suggest(name: str, candidates: Iterable[str], prefix: str = "") -> list[str]:
    """Near misses of ``name`` among ``candidates`` compared without the shared ``prefix``."""
    strip = len(prefix) if prefix and name.startswith(prefix) else 0
    key = name[strip:]
    pool = {}
    for c in candidates:
        if c == name:
            continue
        pool[c[len(prefix):] if prefix and c.startswith(prefix) else c] = c
    got = difflib.get_close_matches(key, list(pool), n=MAX_SUGGESTIONS, cutoff=SUGGEST_CUTOFF)
    return [pool[g] for g in got]


def _size_bytes(text: str) -> Optional[int]:
    m = _SIZE.match(text)
    if not m:
        return None
    return int(float(m.group(1)) * _SIZE_FACTOR[m.group(2).lower()])


def _short(value: str, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters with the full length said (a 200 kB value
    must not become a 200 kB finding)."""
    r = repr(value)
    return r if len(r) <= limit else f"{r[:limit - 3]}...' ({len(value)} characters)"


def _as_number(text: str, typ: str, library: str = "") -> Optional[float]:
    """The number ``text`` means to ``library``: glibc reads tunables with ``strtoul(..., 0)``
    (decimal, 0x hex, 0 octal; glibc manual "Tunables"), others plain decimal integers."""
    t = text.strip()
    try:
        if typ in ("int", "bytes"):
            if library == "glibc":
                return float(int(t, 0)) if not t.startswith(("0o", "0b")) else None
            return float(int(t, 10))
        return float(t)
    except ValueError:
        return None


class _Checker:
    def __init__(self, facts: Optional[Facts], knobs: Sequence[Knob],
                 catalogues: Mapping[str, Catalogue]) -> None:
        self.facts = facts
        self.catalogues = catalogues
        self.by_name: dict[str, list[Knob]] = {}
        for k in knobs:
            if k.kind != "env" and k.separator is None:
                continue
            for n in [k.name, *k.aliases]:
                self.by_name.setdefault(n, []).append(k)
        self.out: list[LintFinding] = []

    # ---- helpers
    def add(self, e: EnvEntry, fid: str, severity: str, message: str,
            remedy: Optional[str] = None, name: Optional[str] = None) -> None:
        self.out.append(LintFinding(Finding(id=fid, severity=severity, message=message,
                                            remedy=remedy), e.path, e.line, name or e.name))

    def knob_for(self, name: str, library: Optional[str] = None) -> Optional[Knob]:
        cands = self.by_name.get(name, [])
        if library:
            cands = [k for k in cands if k.library == library] or cands
        flav = self.facts.mpi.flavour if self.facts is not None else None
        for k in cands:
            if k.flavour is None or flav is None or k.flavour == flav:
                return k
        return cands[0] if cands else None

    def near_knob(self, e: EnvEntry) -> None:
        """A name outside every known family that is one slip away from a registered knob
        (a plugin's own ``VENDOR_`` knobs have no family): a warning with the suggestion.
        Strict, since any variable may stand here: same first ``_`` word, and a similarity of
        at least ``NEAR_KNOB_CUTOFF``."""
        head = e.name.split("_", 1)[0]
        pool = [n for n, ks in self.by_name.items()
                if n.split("_", 1)[0] == head and n != e.name and any(k.kind == "env" for k in ks)]
        near = difflib.get_close_matches(e.name, pool, n=1, cutoff=NEAR_KNOB_CUTOFF)
        if near:
            k = self.by_name[near[0]][0]
            self.add(e, "unknown-name", "warning",
                     f"{e.name}: no library reads this name; did you mean {near[0]} "
                     f"({k.library})?", f"rename to {near[0]}")

    def names_of(self, library: str) -> set[str]:
        out = {n for n, ks in self.by_name.items() if any(k.library == library for k in ks)}
        cat = self.catalogues.get(library)
        if cat is not None:
            out |= set(cat.entries)
        return out

    # ---- per entry
    def entry(self, e: EnvEntry) -> None:
        if e.problem is not None:
            self.add(e, "unreadable-line", "error", f"cannot read this line as a setting: "
                     f"{e.problem}; nothing on it is checked",
                     "rewrite the line in a form lint reads, or remove it", name=None)
            return
        fam = _family(e.name)
        knob = self.knob_for(e.name)
        if e.value is None and e.path != ENV_PATH and (
                e.name == GLIBC_TUNABLES or fam is not None or knob is not None):
            self.add(e, "value-unknown", "info",
                     f"{e.name}: the value comes from an expansion or substitution lint cannot "
                     "follow, so it is not checked", "write the value literally to have it "
                     "checked")
        if e.name == GLIBC_TUNABLES:
            self.glibc(e)
            return
        if fam is None and knob is None:
            self.near_knob(e)
            return
        library = knob.library if knob is not None else fam.library  # type: ignore[union-attr]
        if library == "openmpi" and knob is None and self.openmpi_prefix(e):
            return
        if library == "mpich":
            self.mpich(e, knob)
            return
        if knob is None:
            self.unknown(e, library, listed=False)
            return
        if self.name_ok(e, knob, library) and e.value is not None:
            self.value_by_knob(e, e.value, knob)

    def unknown(self, e: EnvEntry, library: str, *, listed: bool, prefix: str = "",
                name: Optional[str] = None, severity: Optional[str] = None) -> None:
        name = name or e.name
        cands = self.names_of(library)
        fam = _family(name)
        if library == "mpich":
            # compare canonical MPIR_CVAR_ forms, answer in the prefix the file used
            used = next((p for p in MPICH_PREFIXES if name.startswith(p)), "MPIR_CVAR_")
            canon = {_mpich_canonical(c) for c in cands}
            sugg = [used + s[len("MPIR_CVAR_"):]
                    for s in _suggest(_mpich_canonical(name), canon, "MPIR_CVAR_")]
        else:
            if not prefix and fam is not None:
                prefix = next(p for p in fam.prefixes if name.startswith(p))
            sugg = _suggest(name, cands, prefix)
        cat = self.catalogues.get(library)
        version = library_version(self.facts, library)
        where = (f"the installed {library}{' ' + version if version else ''} "
                 f"({cat.source})" if listed and cat is not None else
                 "the knob records of the loaded plugins")
        if not sugg and not listed:
            return  # not in our partial records and no near miss: nothing to say
        shown = name if name.strip() == name and name.isprintable() else repr(name)
        msg = f"{shown}: unknown name, not listed by {where}"
        if name.strip() != name:
            msg += " (mind the blank: the library compares names exactly)"
        if listed:
            msg += " (outdated or misspelt: the library ignores it)"
        if sugg:
            msg += f"; did you mean {' or '.join(sugg)}?"
            rem = f"rename to {sugg[0]}"
        else:
            rem = f"remove it, or find the current name in the library's list ({cat.source})"  # type: ignore[union-attr]
        sev = severity or ("error" if listed else "warning")
        self.add(e, "unknown-name", sev, msg, rem, name=name)

    def openmpi_prefix(self, e: EnvEntry) -> bool:
        version = library_version(self.facts, "openmpi")
        for old, new, since in OPENMPI_RENAMED_PREFIXES:
            if e.name.startswith(old):
                newname = new + e.name[len(old):]
                if version is not None and version_in(version, f"<{since}"):
                    return True
                self.add(e, "outdated-name", "warning",
                         f"{e.name}: Open MPI {since}.0 renamed the vader BTL to sm; this name is "
                         f"only an alias in 5.0.x"
                         + (f" (installed: {version})" if version else " (version not detected)"),
                         f"rename to {newname} (source: {_OMPI_SM_DOC})")
                return True
        return False

    def name_ok(self, e: EnvEntry, knob: Knob, library: str, name: Optional[str] = None) -> bool:
        """Version, rename and flavour checks of a name with a knob record; False if the value
        should not be checked further."""
        name = name or e.name
        version = library_version(self.facts, library)
        flav = self.facts.mpi.flavour if (self.facts is not None and library == "mpich") else None
        if knob.flavour and flav and knob.flavour != flav:
            self.add(e, "flavour-mismatch", "warning",
                     f"{name} is read by the {knob.flavour} flavour of {library}; the installed "
                     f"{library} is {flav} and ignores it", f"remove it here, or use the {flav} "
                     f"equivalent (source: {knob.source})", name=name)
            return False
        if knob.renamed_to:
            if version is not None and not knob.valid_for(version):
                self.add(e, "outdated-name", "error",
                         f"{name}: outdated name, not read by {library} {version}; it was renamed "
                         f"to {knob.renamed_to}", f"rename to {knob.renamed_to} "
                         f"(source: {knob.source})", name=name)
                return False
            if version is None:
                self.add(e, "outdated-name", "warning",
                         f"{name}: read only by {library} {knob.versions or '(old versions)'}; "
                         f"later versions call it {knob.renamed_to} (the installed version is "
                         f"unknown)", f"use {knob.renamed_to} for newer {library} "
                         f"(source: {knob.source})", name=name)
                return True
        elif version is not None and not knob.valid_for(version):
            self.add(e, "wrong-version", "error",
                     f"{name} is read by {library} {knob.versions}, not by the installed "
                     f"{version}", f"remove it or upgrade {library} (source: {knob.source})",
                     name=name)
            return False
        return True

    def value_by_knob(self, e: EnvEntry, value: str, knob: Knob, name: Optional[str] = None
                      ) -> None:
        name = name or e.name
        typ = knob.type
        v = value.strip()
        bad: Optional[str] = None
        remedy: Optional[str] = None
        num: Optional[float] = None
        if typ in ("int", "bytes", "float"):
            num = _as_number(v, typ, knob.library)
            if num is None:
                size = _size_bytes(v) if typ in ("int", "bytes") else None
                if size is not None:
                    bad = f"{_short(value)} has a unit suffix; the value must be a plain integer number of bytes"
                    remedy = f"write {name}={size}"
                else:
                    bad = f"{_short(value)} is not {'a number' if typ == 'float' else 'an integer'}"
        elif typ == "bool":
            if knob.library == "mpich":
                self.mpich_bool(e, value)
                return
            if v.lower() not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
                bad = f"{_short(value)} is not a boolean (0/1)"
                remedy = f"write {name}=1 or {name}=0"
        if bad is None and knob.allowed is not None and typ != "bool":
            allowed = [_scalar_text(a) for a in knob.allowed]
            if v not in allowed:
                near = [a for a in allowed if a.lower() == v.lower()]
                bad = f"{_short(value)} is not one of {', '.join(allowed)}"
                remedy = f"write {name}={near[0]}" if near else f"use one of {', '.join(allowed)}"
        if bad is None and num is not None:
            if knob.minimum is not None and num < knob.minimum:
                bad = f"{_short(value)} is below the minimum {knob.minimum:g}"
            elif knob.maximum is not None and num > knob.maximum:
                bad = f"{_short(value)} is above the maximum {knob.maximum:g}"
        if bad:
            self.add(e, "invalid-value", "error", f"{name}: {bad}",
                     remedy or f"see {knob.source}", name=name)

    # ---- MPICH
    def mpich(self, e: EnvEntry, knob: Optional[Knob]) -> None:
        cat = self.catalogues.get("mpich")
        canon = _mpich_canonical(e.name)
        centry = cat.entries.get(canon) if cat is not None else None
        if knob is None:
            knob = self.knob_for(canon, "mpich")
        if centry is None and knob is None:
            if cat is not None:
                self.unknown(e, "mpich", listed=True,
                             severity="warning" if e.name.startswith("MPICH_") else "error")
            else:
                self.unknown(e, "mpich", listed=False)
            return
        if knob is not None and centry is None:
            if not self.name_ok(e, knob, "mpich"):
                return
            if cat is not None and knob.flavour in (None, "upstream") and (
                    self.facts is None or self.facts.mpi.flavour in (None, "upstream")):
                self.add(e, "unknown-name", "error",
                         f"{e.name}: not a control variable of the installed MPICH "
                         f"({cat.source}), although a knob record names it", "check the "
                         "library version; the installed library ignores it")
                return
        elif knob is not None and not self.name_ok(e, knob, "mpich"):
            return
        if e.value is None:
            return
        if centry is not None:
            self.mpich_value(e, centry, knob)
        elif knob is not None:
            self.value_by_knob(e, e.value, knob)

    def mpich_bool(self, e: EnvEntry, value: str) -> None:
        """A boolean CVAR: MPL_env2bool takes only ``MPL_BOOL_WORDS``, exactly."""
        if value not in MPL_BOOL_WORDS:
            self.add(e, "invalid-value", "error",
                     f"{e.name}: {value!r} is not a boolean MPICH reads ({_MPL_BOOL_TEXT}); "
                     "MPI_Init aborts", f"write {e.name}=1 or {e.name}=0")

    def mpich_value(self, e: EnvEntry, c: CatalogueEntry, knob: Optional[Knob]) -> None:
        value = e.value or ""
        src = self.catalogues["mpich"].source
        if knob is not None and knob.type == "bool" and not c.choices:
            self.mpich_bool(e, value)
            return
        if c.choices:
            if value not in c.choices:
                near = _suggest(value, c.choices) or [x for x in c.choices if x.lower() == value.lower()]
                self.add(e, "invalid-value", "error",
                         f"{e.name}: {value!r} is not one of the values the installed MPICH "
                         f"accepts ({', '.join(c.choices)}); MPI_Init aborts",
                         f"write {e.name}={near[0]}" if near else f"use one of {', '.join(c.choices)}")
            return
        if c.type == "MPI_INT":
            if value == "":
                self.add(e, "invalid-value", "warning", f"{e.name}: empty value, read as 0",
                         "remove the line or give a value")
                return
            if not _MPL_INT.match(value):
                size = _size_bytes(value)
                if value in MPL_BOOL_WORDS:
                    kt = knob.type if knob is not None else None
                    if kt == "bool":
                        return
                    self.add(e, "invalid-value", "warning",
                             f"{e.name}: {value!r} is accepted only if this control variable is a "
                             f"boolean (MPICH's MPL_env2bool); the installed MPICH lists it as "
                             f"MPI_INT, and an integer variable aborts MPI_Init on it",
                             f"write {e.name}={1 if value.lower() in ('yes', 'true', 'on') else 0}, "
                             "which both parsers accept")
                elif size is not None:
                    self.add(e, "invalid-value", "error",
                             f"{e.name}: {value!r}: the value must be a plain integer number of "
                             "bytes; MPICH reads no unit suffix and MPI_Init aborts "
                             "(\"Invalid character\")", f"write {e.name}={size}")
                else:
                    self.add(e, "invalid-value", "error",
                             f"{e.name}: {value!r} is not an integer the installed MPICH accepts "
                             "(decimal digits only); MPI_Init aborts",
                             f"give a decimal integer (default {c.default or '?'}; {src})")
                return
        if knob is not None:
            self.value_by_knob(e, value, knob)

    # ---- glibc tunables
    def glibc(self, e: EnvEntry) -> None:
        if e.prepend:
            self.add(e, "list-order", "warning",
                     f"{GLIBC_TUNABLES} is prepended to: an item already in the variable comes "
                     "later and wins (glibc reads the items in order; the last one counts)",
                     "append instead (append_path / append-path)")
        if e.value is None:
            return
        cat = self.catalogues.get("glibc")
        seen: dict[str, str] = {}
        for item in e.value.split(":"):
            if not item.strip():
                continue
            tname, eq, tval = item.partition("=")
            if not eq:
                self.add(e, "invalid-value", "error",
                         f"{GLIBC_TUNABLES}: item {item!r} has no '=value'; glibc ignores it",
                         "write name=value items separated by ':'", name=GLIBC_TUNABLES)
                continue
            if tname in seen:
                self.add(e, "duplicate", "warning",
                         f"{GLIBC_TUNABLES}: {tname} is given twice ({seen[tname]!r}, {tval!r})",
                         "give each tunable once", name=tname)
            seen[tname] = tval
            knob = self.knob_for(tname, "glibc")
            centry = cat.entries.get(tname) if cat is not None else None
            if knob is not None and not self.name_ok(e, knob, "glibc", name=tname):
                continue
            if centry is None and knob is None:
                if cat is not None or tname.startswith("glibc."):
                    self.unknown(e, "glibc", listed=cat is not None, prefix="glibc.", name=tname)
                continue
            if centry is None and cat is not None:
                version = library_version(self.facts, "glibc")
                self.add(e, "unknown-name", "error",
                         f"{tname}: not a tunable of the installed glibc"
                         f"{' ' + version if version else ''} ({cat.source}); glibc ignores it",
                         "remove it", name=tname)
                continue
            if centry is not None and centry.type == "number":
                n = parse_number(tval)
                if n is None:
                    size = _size_bytes(tval)
                    self.add(e, "invalid-value", "error",
                             f"{tname}: {tval!r} is not a number glibc reads (decimal, 0x hex, "
                             "0 octal)",
                             f"write {tname}={size}" if size is not None else "give an integer",
                             name=tname)
                    continue
                if (centry.minimum is not None and n < centry.minimum) or (
                        centry.maximum is not None and n > centry.maximum):
                    self.add(e, "invalid-value", "error",
                             f"{tname}: {tval} is outside [{centry.minimum}, {centry.maximum}] "
                             f"listed by the installed glibc; glibc ignores it", "give a value "
                             "inside the range", name=tname)
                    continue
            if knob is not None:
                self.value_by_knob(e, tval, knob, name=tname)


def _duplicates(entries: Sequence[EnvEntry], checker: _Checker) -> None:
    """The same setting assigned twice (or via two aliases) in one source: the later wins."""
    by_path: dict[str, dict[str, EnvEntry]] = {}
    for e in entries:
        if e.append or e.value is None:
            continue
        fam = _family(e.name)
        key = e.name
        if fam is not None and fam.library == "mpich":
            key = _mpich_canonical(e.name)
        else:
            k = checker.knob_for(e.name)
            if k is not None:
                key = k.name
        seen = by_path.setdefault(e.path, {})
        prev = seen.get(key)
        if prev is not None and prev.name == e.name and prev.value == e.value:
            pass  # the same value again (e.g. both branches of a csh if/else): nothing changes
        elif prev is not None and (fam is not None or checker.knob_for(e.name) is not None):
            where = f" (line {prev.line})" if prev.line is not None else ""
            if prev.name == e.name:
                msg = (f"{e.name} is set again (first{where} to {prev.value!r}); the later "
                       f"value {e.value!r} wins")
            else:
                msg = (f"{e.name} and {prev.name}{where} are two names of one setting; which "
                       "one the library takes is easy to get wrong")
            checker.add(e, "duplicate", "warning", msg, "set it once")
        seen[key] = e


def _not_exported(entries: Sequence[EnvEntry], checker: _Checker) -> None:
    """sh files that mix ``export`` with bare ``NAME=value`` lines: the bare ones do not reach
    programs started from the sourcing shell (POSIX: only exported variables go to the
    environment of commands)."""
    by_path: dict[str, list[EnvEntry]] = {}
    for e in entries:
        by_path.setdefault(e.path, []).append(e)
    for es in by_path.values():
        for e in es:
            if not e.exported and (_family(e.name) is not None or checker.knob_for(e.name)
                                   or e.name == GLIBC_TUNABLES):
                checker.add(e, "not-exported", "warning",
                            f"{e.name} is assigned without export while the file exports other "
                            "names: a sourced file passes it to programs only if it is already "
                            "exported", f"export {e.name}")


def _locate(f: Finding, entries: Sequence[EnvEntry]) -> tuple[Optional[str], Optional[int],
                                                               Optional[str]]:
    """File and line of the first env name a plugin finding mentions (its last assignment)."""
    last: dict[str, EnvEntry] = {}
    for e in entries:
        last[e.name] = e
    best: Optional[tuple[int, EnvEntry]] = None
    for name, e in last.items():
        m = re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", f.message)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), e)
    if best is None:
        return None, None, None
    e = best[1]
    return e.path, e.line, e.name


def lint_entries(entries: Sequence[EnvEntry], *, facts: Optional[Facts] = None,
                 knobs: Sequence[Knob] = (), catalogues: Optional[Mapping[str, Catalogue]] = None,
                 probes: Optional[Mapping[str, Any]] = None) -> list[LintFinding]:
    """All findings for ``entries``: generic checks, then each probe's ``lint(env, facts)``.

    :param facts: machine facts (library versions, flavour, security); None: unknown.
    :param knobs: knob records (``Registry.knobs``).
    :param catalogues: the libraries' own lists (``installed_catalogues``); None: none.
    :param probes: registered probes; those with a callable ``lint`` are called once per source
        (each file, or the environment) with the environment that source produces.  A probe whose
        ``lint`` raises gives a ``plugin-lint-failed`` warning instead.
    :return: findings in source order, then plugin findings.
    """
    own = {(k.library, k.name) for k in knobs}
    knobs = list(knobs) + [k for k in OPENMPI_KNOBS if (k.library, k.name) not in own]
    checker = _Checker(facts, knobs, catalogues or {})
    for e in entries:
        checker.entry(e)
    _duplicates(entries, checker)
    _not_exported(entries, checker)
    if probes:
        sources: dict[str, list[EnvEntry]] = {}
        for e in entries:
            sources.setdefault(e.path, []).append(e)
        for path, es in sources.items():
            env = resolve_env(es)
            for pname, probe in probes.items():
                fn = getattr(probe, "lint", None)
                if not callable(fn):
                    continue
                try:
                    found = list(fn(dict(env), facts if facts is not None else Facts()) or [])
                    bad = [type(x).__name__ for x in found if not isinstance(x, Finding)]
                    if bad:
                        raise TypeError(f"lint() returned non-Finding items: {', '.join(bad)}")
                except Exception as exc:
                    checker.out.append(LintFinding(Finding(
                        id="plugin-lint-failed", severity="warning",
                        message=f"probe {pname}: lint failed: {type(exc).__name__}: {exc}"),
                        path, None, None))
                    continue
                for f in found:
                    p, line, name = _locate(f, es)
                    checker.out.append(LintFinding(f, p or path, line, name))
    order = {id(f): i for i, f in enumerate(checker.out)}
    return sorted(checker.out, key=lambda f: (f.path or "", f.line if f.line is not None else 1 << 30,
                                              order[id(f)]))


def has_errors(findings: Iterable[LintFinding]) -> bool:
    """True when a finding has severity ``error`` (``advisor lint`` then exits 1)."""
    return any(f.severity == "error" for f in findings)


def format_text(findings: Sequence[LintFinding]) -> str:
    """Compiler-style lines: ``path:line: severity: message [id]`` and an indented remedy."""
    lines = []
    for f in findings:
        lines.append(f"{f.location}: {f.severity}: {f.finding.message} [{f.finding.id}]")
        if f.finding.remedy:
            lines.append(f"    remedy: {f.finding.remedy}")
    return "".join(line + "\n" for line in lines)


def format_json(findings: Sequence[LintFinding]) -> str:
    """JSON array of findings (path, line, name, id, severity, message, remedy)."""
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"


__all__ = [
    "EnvEntry", "LintFinding", "Catalogue", "CatalogueEntry", "FAMILIES", "detect_format",
    "parse_env_text", "read_env_file", "live_env_entries", "resolve_env", "parse_mpivars",
    "parse_glibc_tunables", "installed_catalogues", "library_version", "lint_entries",
    "has_errors", "format_text", "format_json",
]
