"""Reading settings for lint: env files in every format and the live environment, as ``EnvEntry`` records."""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import sys
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from advisor.errors import BadInputError

ENV_PATH = "<environment>"

#: Largest env file read (a site env file is a few KiB; this keeps a wrong file out of memory).
MAX_FILE_BYTES = 4 * 1024 * 1024

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

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
