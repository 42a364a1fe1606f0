"""The checks every output path of the CLI passes before anything is written: ``emit -o``,
``report -o``, ``probe -o`` and ``fleet probe --out``.

The rule is ``mkdir``'s, not ``mkdir -p``'s: advisor creates the one thing the option names
(the file; for ``report -f png|svg`` and ``fleet probe --out``, the directory itself) but no
missing directory above it unless ``--mkdir`` is given, so a mistyped path
(``/scratch/usr/...``) or a colon-separated list pasted as one path
(``emit -o $MODULEPATH/advisor/cpu.lua`` with two entries) is refused in a second instead of
silently growing a directory tree nobody asked for.  The configuration files and the default
profile store (``$ADVISOR_HOME``) are advisor's own places and keep being created.

A path with ``:`` in a directory component, or ``:/`` anywhere, looks like such a list
(``MODULEPATH``, ``PATH`` and ``LD_LIBRARY_PATH`` are colon-separated): it gets a warning; and
``--mkdir`` never creates a directory whose name holds ``:`` (exit 2) - whoever really wants
one creates it with ``mkdir`` and advisor then writes into it, with the warning.  A colon only
in the file name (``report-12:00.html``, a timestamp) is not warned about.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from advisor.cli.boundary import warn
from advisor.errors import BadInputError

__all__ = ["MkdirOpt", "check_output", "colon_hint", "missing_directories"]

MkdirOpt = typer.Option(False, "--mkdir", help="Create the missing directories above the "
                        "output path (default: refuse, like mkdir without -p).")


def colon_hint(path: Path) -> Optional[str]:
    """Why ``path`` looks like a colon-separated list pasted as one path (``$MODULEPATH``),
    as a clause naming MODULEPATH; None when it holds no ``:`` outside its file name."""
    text = str(path)
    if ":" not in str(path.parent) and ":/" not in text:
        return None
    first = text.split(":", 1)[0] or "/"
    return (f"':' in the path - a colon-separated list such as $MODULEPATH pasted as one "
            f"path? Name one of its directories (e.g. {first})")


def missing_directories(path: Path) -> list[Path]:
    """The directories above ``path`` that do not exist, outermost first; empty when its
    parent exists.  A parent that exists but is not a directory is not "missing" (the write
    itself then fails, saying so)."""
    missing = []
    parent = path.parent
    while not parent.exists() and not parent.is_symlink() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    return missing[::-1]


def check_output(path: Path, *, mkdir: bool, flag: str = "-o") -> None:
    """Let ``path`` be written: warn when it looks like a pasted ``$MODULEPATH``; create the
    missing directories above it when ``mkdir``.  Writes nothing else.

    :param flag: the option as the messages name it (``-o``, ``--out``).
    :raises BadInputError: a directory above ``path`` is missing and ``mkdir`` is false (the
        message names the outermost missing directory and ``--mkdir``); ``mkdir`` would create
        a directory whose name holds ``:``; or it cannot be created.
    """
    hint = colon_hint(path)
    missing = missing_directories(path)
    if missing and not mkdir:
        raise BadInputError(f"{flag} {path}: no directory {missing[0]}"
                            + (f"; {hint}" if hint else "; --mkdir creates it"))
    if missing:
        colon = next((d for d in missing if ":" in d.name), None)
        if colon is not None:
            raise BadInputError(f"{flag} {path}: --mkdir creates no directory named "
                                f"{colon.name!r}; {hint}; if you mean the ':', create the "
                                "directory with mkdir first")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInputError(f"{flag} {path}: cannot create {path.parent} "
                                f"({exc.strerror or exc})") from None
    if hint:
        warn(f"{flag} {path}: {hint}")
