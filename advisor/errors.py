"""Exceptions and exit codes.  The CLI is the one place that turns them into messages.

Exit codes (documented in ``advisor --help`` and the README):

==== ===================================================================
0    ok
1    findings: lint found errors, verify found a regression or a joint reversal
2    usage or bad input (malformed profile, unknown option, bad value)
3    partial or failed probe: at least one probe failed; the profile holds the rest
4    internal error (a bug, or a plugin/library that called ``sys.exit``)
130  interrupted (SIGINT: 128 + signal 2, the shells' convention)
==== ===================================================================
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit statuses of ``advisor`` (table above); an ``int``, so ``sys.exit`` and
    ``typer.Exit`` take it as is."""

    OK = 0
    FINDINGS = 1
    BAD_INPUT = 2
    PARTIAL = 3
    INTERNAL = 4
    INTERRUPTED = 130


class AdvisorError(Exception):
    """Base of every error the CLI reports as one line (no traceback).

    ``details``: further lines (e.g. every validation error of a file, where the message names
    the first); the CLI prints them with ``ADVISOR_DEBUG=1``.
    """

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, *args: object, details: tuple[str, ...] = ()) -> None:
        super().__init__(*args)
        self.details = tuple(details)


class BadInputError(AdvisorError):
    """A file or value given by the user is wrong.  The message names the file and key."""


class ProfileError(BadInputError):
    """A profile cannot be read, validated or written."""


class EmitError(BadInputError):
    """A value cannot be written safely in the asked format (names the setting)."""


class PluginContractError(AdvisorError):
    """A plugin registered something that breaks a hook contract."""


class ProbeFailed(AdvisorError):
    exit_code = ExitCode.PARTIAL


def did_you_mean(word: str, choices, aliases=None):
    """The known name a mistyped ``word`` most likely meant, or None.

    ``aliases`` (word -> name) comes first: it holds the words a field uses for a format whose
    name differs (``lua`` for ``lmod``), which no spelling distance finds; an alias whose name is
    not among ``choices`` (a plugin not loaded) is ignored.  Otherwise the nearest choice by
    :func:`difflib.get_close_matches` (its default cutoff, 0.6 of the Ratcliff/Obershelp
    similarity), compared case-insensitively.

    :param choices: the valid names (iterable of str).
    :return: one name of ``choices``, or None when nothing is close.
    """
    import difflib

    known = {c.lower(): c for c in choices}
    target = (aliases or {}).get(word.lower())
    if target is not None and target.lower() in known:
        return known[target.lower()]
    near = difflib.get_close_matches(word.lower(), list(known), n=1)
    return known[near[0]] if near else None
