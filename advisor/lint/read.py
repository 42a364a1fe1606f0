"""Reading settings for lint: env files in every registered format, launch lines and the live
environment, as ``EnvEntry`` records.

This module dispatches: it detects a file's format and calls that format's ``parse`` (the
built-in ones live in :mod:`advisor.formats`, a third-party format registers its ``parse``
with the emitter hook).  Without a registry (``emitters=None``) the built-in formats are used.
``EnvEntry`` is defined in :mod:`advisor.specs.entry`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

from advisor.errors import AdvisorError, BadInputError
from advisor.formats import is_structured
from advisor.specs.entry import EnvEntry, nothing_read, unreadable

if TYPE_CHECKING:  # pragma: no cover
    from advisor.plugins import Emitter

__all__ = ["ENV_PATH", "FORMATS", "MAX_FILE_BYTES", "STDIN_PATH", "detect_format",
           "live_env_entries", "parse_env_text", "parsers", "read_env_file", "read_env_source",
           "read_env_text", "resolve_env"]

ENV_PATH = "<environment>"

#: Largest env file read (a site env file is a few KiB; this keeps a wrong file out of memory).
#: Above the 10 MB a file must be read in (issue 28; ``bench/bench_lint.py`` measures it).
MAX_FILE_BYTES = 16 * 1024 * 1024

#: The path lint reports for text read from standard input (``advisor lint -``).
STDIN_PATH = "<stdin>"

#: The built-in formats ``parse_env_text`` reads (``--format`` values besides ``auto``; ``env``
#: is the same as ``sh``).
FORMATS = ("sh", "csh", "fish", "tcl", "lmod", "spack", "easybuild", "json", "toml")

Parser = Callable[[str, str], list]


def parsers(emitters: Optional[Mapping[str, "Emitter"]] = None) -> dict[str, tuple[Parser, str]]:
    """Format name -> ``(parse, plugin)`` of every format that can be read back: those of
    ``emitters`` (``Registry.emitters``) with a ``parse``, or the built-in ones when None."""
    if emitters is None:
        from advisor.formats import builtin_parsers

        return {n: (p, "advisor.emit.builtin") for n, p in builtin_parsers().items()}
    return {n: (e.parse, e.plugin) for n, e in emitters.items() if e.parse is not None}


def detect_format(text: str, path: str = "",
                  emitters: Optional[Mapping[str, "Emitter"]] = None) -> Optional[str]:
    """A format name from the file name and text, as each format module claims it (its
    ``SUFFIXES`` and ``sniff``, :mod:`advisor.formats`): a shape that decides over the suffix,
    then a built-in suffix, then a registered third-party format whose ``extension`` is the
    suffix, then the first built-in ``sniff`` that claims the text.  None when no format
    claims it."""
    from advisor.formats import by_suffix, sniff_content, sniff_shape

    suffix = Path(path).suffix.lower()
    # the built-in suffixes come before the plugins': a plugin cannot take them over
    found = sniff_shape(text) or by_suffix(suffix)
    if found:
        return found
    for name, e in sorted((emitters or {}).items()):
        if e.parse is not None and e.extension and suffix == "." + e.extension.lower():
            return name
    return sniff_content(text)


def _claimed(text: str, path: str, emitters: Optional[Mapping[str, "Emitter"]]) -> str:
    """:func:`detect_format`, after refusing a write-only format's output.

    :raises BadInputError: a write-only format's output, or no format claims the text (the
        formats lint reads listed, one line)."""
    _refuse_write_only(text, path)
    fmt = detect_format(text, path, emitters)
    if fmt is None:
        names = sorted(n for n in parsers(emitters) if n != "env")
        raise BadInputError(f"{path}: no format claims this file (neither its suffix nor its "
                            f"text is one lint reads); give --format, one of: "
                            f"{', '.join(names)}")
    return fmt


def _refuse_write_only(text: str, path: str) -> None:
    """Raise ``BadInputError`` (one line naming the format) when ``text`` is the output of a
    write-only format (``advisor.formats.SNIFF_WRITE_ONLY``): read as a shell file it would
    only give an "unreadable line" error that hides what the file is."""
    from advisor.formats import sniff_write_only

    written = sniff_write_only(text)
    if written:
        raise BadInputError(f"{path}: a {written} file (advisor emit --format {written}), which "
                            "lint does not read; lint a form that sets the environment (env, "
                            "csh, fish, lmod, tcl, spack, easybuild, toml, json, ...)")


def parse_env_text(text: str, *, path: str = "<text>", fmt: str = "auto",
                   emitters: Optional[Mapping[str, "Emitter"]] = None) -> list[EnvEntry]:
    """Assignments in ``text``, in file order, read by the parser of format ``fmt``.

    :param fmt: ``auto`` (``detect_format``) or a format name (``env`` and ``sh`` are the same).
    :param emitters: the registry's formats (``Registry.emitters``); None: the built-in ones.
    :raises BadInputError: unknown ``fmt``, a format without a parser, text the format's parser
        refuses (malformed JSON, TOML, YAML, easyconfig), or a third-party parser that failed
        (the format and plugin named).
    """
    if fmt == "auto":
        fmt = _claimed(text, path, emitters)
    table = parsers(emitters)
    if fmt not in table:
        if emitters is not None and fmt in emitters:
            raise BadInputError(f"--format {fmt!r}: the format (from {emitters[fmt].plugin}) has "
                                "no parser; lint cannot read it")
        raise BadInputError(f"--format {fmt!r}: not one of auto, {', '.join(sorted(table))}")
    parse, plugin = table[fmt]
    try:
        entries = parse(text, path)
    except AdvisorError:
        raise
    except Exception as exc:  # a broken third-party parser is reported, not a traceback
        raise BadInputError(f"{path}: format {fmt!r} (from {plugin}) failed to read it: "
                            f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(entries, list) or not all(isinstance(e, EnvEntry) for e in entries):
        raise BadInputError(f"format {fmt!r} (from {plugin}): parse must return a list of "
                            "EnvEntry")
    return entries


def read_env_text(text: str, path: str, fmt: str = "auto",
                  emitters: Optional[Mapping[str, "Emitter"]] = None) -> list[EnvEntry]:
    """``parse_env_text``, plus one unreadable entry when nothing in a non-empty line-based text
    (sh, csh, fish, Tcl, Lmod, third-party formats) reads as a setting: a clean report on text
    lint cannot read would be a false all-clear.  The structured formats (``STRUCTURED``)
    refuse what they cannot read instead, and an easyconfig without ``modextravars`` truly sets
    nothing.  An input with nothing but blanks is one ``nothing_read`` entry, whatever the
    format."""
    if not text.strip():
        return [nothing_read(path)]
    if fmt == "auto":
        fmt = _claimed(text, path, emitters)
    entries = parse_env_text(text, path=path, fmt=fmt, emitters=emitters)
    if is_structured(fmt):
        return entries
    substantive = [i for i, ln in enumerate(text.splitlines(), 1)
                   if ln.strip() and not ln.lstrip().startswith(("#", "--", "//"))]
    if not entries and substantive:
        entries = [unreadable(path, substantive[0], "no line of this file reads as a setting "
                              f"in the forms lint knows (sh, csh, fish, Tcl, Lmod, Spack YAML, "
                              f"EasyBuild, JSON, TOML; read as {fmt})")]
    return entries


def read_env_file(path: Path | str, fmt: str = "auto",
                  emitters: Optional[Mapping[str, "Emitter"]] = None) -> list[EnvEntry]:
    """Read and parse one file (``-``: standard input, reported as ``<stdin>``).

    :raises BadInputError: missing, unreadable, binary or too large; what ``parse_env_text``
        raises.
    """
    return read_env_source(path, fmt, emitters)[2]


def read_env_source(path: Path | str, fmt: str = "auto",
                    emitters: Optional[Mapping[str, "Emitter"]] = None
                    ) -> tuple[str, str, list[EnvEntry]]:
    """``read_env_file`` with what it read: ``(path as reported, text, entries)``, for checks
    that read the text itself (the launch lines' wrappers, ``advisor.formats.wrappers``)."""
    from advisor.textfile import read_text_file, read_text_stream

    if str(path) == "-":
        text = read_text_stream(sys.stdin.buffer, STDIN_PATH, kind="env file",
                                max_bytes=MAX_FILE_BYTES)
        return STDIN_PATH, text, read_env_text(text, STDIN_PATH, fmt, emitters)
    p = Path(path)
    text = read_text_file(p, kind="env file", max_bytes=MAX_FILE_BYTES)
    return str(p), text, read_env_text(text, str(p), fmt, emitters)


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


