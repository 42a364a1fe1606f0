"""What the node health check formats share (``nhc``, ``slurm-healthcheck``): the
``advisor check`` command line they run, from the class profile and the site's ``[check]``
configuration (docs/config.md), and the class's nodes.

The command is ``COMMAND check --profile PROFILES/<class>.toml [--quick-s S | --facts-only]``: ``COMMAND`` is
``[check] command`` (default: this advisor's console script by its absolute path, else
``python -m advisor`` of this interpreter), ``PROFILES`` is ``[check] profiles`` (default
:data:`DEFAULT_PROFILES`), ``<class>`` the class id the profile records (``[fleet] class_id``,
the file name ``advisor fleet report`` gave it).  Every word must be a plain word
(:data:`PLAIN_WORD`): NHC splits its check line on blanks and ``eval``s it (``nhc``,
``nhcmain_run_checks``), so a word with a blank, a quote, ``$`` or a glob character would be
re-read as shell; the same words are single-quoted in the Slurm script all the same.

Public API: :func:`check_argv`, :func:`class_of`, :func:`site`, :data:`DEFAULT_PROFILES`,
:data:`DEFAULT_TIMEOUT_S`, :data:`PLAIN_WORD`.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any

from advisor.errors import EmitError

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Profile

__all__ = ["DEFAULT_PROFILES", "DEFAULT_TIMEOUT_S", "PLAIN_WORD", "site", "class_of",
           "check_argv"]

#: Where class profiles are installed on the nodes when ``[check] profiles`` is not set.
DEFAULT_PROFILES = "/etc/advisor/classes"
#: NHC's ``check_cmd_output -t`` when ``[check] timeout_s`` is not set: NHC's own ``TIMEOUT``
#: for a whole run is 30 s (``nhc``, ``TIMEOUT=30``) and ``check_cmd_output`` refuses a larger
#: one; ``advisor check`` takes 2-5 s on the 2-core VM (bench/bench_check.py) and its
#: measurement is bounded at 8 s, so 20 s leaves NHC's other checks 10 s.
DEFAULT_TIMEOUT_S = 20
#: A word NHC and POSIX sh read back unchanged without quotes.
PLAIN_WORD = re.compile(r"^[A-Za-z0-9_./:@%+=,-]+$")


def site() -> Any:
    """The merged ``[check]`` section of the configuration scopes
    (``advisor.config.schema.CheckSection``).

    :raises BadInputError: a scope file is malformed (as every command that reads them)."""
    from advisor.config.scopes import load_config

    return load_config().model.check


def class_of(profile: "Profile", fmt: str) -> Any:
    """The profile's ``[fleet]`` record (``advisor.models_fleet.FleetClass``).

    :raises EmitError: the profile is not a class profile of ``advisor fleet report``."""
    if profile.fleet is None:
        raise EmitError(f"-f {fmt} needs a class profile (DIR/classes/<class>.toml of 'advisor "
                        "fleet report', which records the class's headline bands); this "
                        "profile has no [fleet] table")
    return profile.fleet


def _default_command() -> list[str]:
    exe = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(exe) == "advisor" and os.access(exe, os.X_OK):
        return [exe]
    return [sys.executable, "-m", "advisor"]


def _plain(words: list[str], key: str) -> list[str]:
    for w in words:
        if not PLAIN_WORD.match(w):
            raise EmitError(f"[check] {key}: {w!r} is not a plain word (letters, digits and "
                            "_./:@%+=,- only): NHC re-reads its check line as shell")
    return words


def check_argv(profile: "Profile", fmt: str, conf: Any = None) -> list[str]:
    """The ``advisor check`` command of the module docstring, as words.

    :param conf: the ``[check]`` section (default: :func:`site`).
    :raises EmitError: not a class profile; a word that is not plain (naming the key)."""
    fleet = class_of(profile, fmt)
    conf = site() if conf is None else conf
    command = conf.command.split() if conf.command else _default_command()
    if not command:
        raise EmitError("[check] command: empty")
    profiles = (conf.profiles or DEFAULT_PROFILES).rstrip("/") or "/"
    argv = _plain(command, "command") + ["check", "--profile"]
    argv += _plain([f"{profiles}/{fleet.class_id}.toml"], "profiles")
    if conf.facts_only:
        argv += ["--facts-only"]
    elif conf.quick_s is not None:
        argv += ["--quick-s", f"{conf.quick_s:g}"]
    return argv
