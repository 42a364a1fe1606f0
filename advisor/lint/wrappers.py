"""Lint of what a launch line's wrapper does to the settings its ranks get.

For each launch line whose ranks start in a wrapper (``advisor.formats.wrappers.Wrapped``), the
settings in effect for that line (the file's exported settings above it, then the line's own)
are checked against it:

* ``isolated-ranks``: a setting whose knob ``needs`` the ranks to share what the wrapper takes
  away (``advisor.knobs.Need``: CMA single copy needs ptrace access and the same PID
  namespace; a shared-memory transport the same IPC namespace).  An error when the wrapper's
  options say so, a warning when it depends on the installation (an Apptainer without setuid,
  rootless Podman, ``oci.conf``).
* ``wrapper-drops-env``: a warning for each setting a wrapper that starts the ranks with a fresh
  environment (sudo's ``env_reset``, a container's own environment, ``env -i``, a login shell)
  does not pass on, unless the wrapper's own words set it again.

``advisor verify --app`` runs the same check on the user's command with the environment B it
tests (:func:`command_findings`): a verdict on settings the ranks never get, or on a path the
wrapper breaks, would measure something else.

Public API: :func:`check_wrapped`, :func:`command_findings`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from advisor.formats.wrappers import Wrapped, wrapper_of
from advisor.lint.context import LintContext
from advisor.lint.report import LintFinding
from advisor.specs.entry import EnvEntry

__all__ = ["check_wrapped", "command_findings"]

#: The path findings about a command line (``verify --app -- CMD``) carry.
COMMAND_PATH = "<command>"

#: What each shared thing means for the ranks, for the message.
SHARED_TEXT = {
    "ptrace": "ptrace each other (one user namespace)",
    "pid": "see each other's PIDs (one PID namespace)",
    "ipc": "share /dev/shm and System V IPC (one IPC namespace)",
}


def _in_effect(entries: Sequence[EnvEntry], w: Wrapped) -> dict[str, EnvEntry]:
    """The settings the ranks of line ``w.line`` get, by name: the file's exported settings
    above the line, then the line's own (the last assignment wins)."""
    env: dict[str, EnvEntry] = {}
    for e in entries:
        if e.path != w.path or e.problem is not None or not e.name or e.line is None:
            continue
        if (e.launch and e.line == w.line) or (not e.launch and e.exported and e.line < w.line):
            env[e.name] = e
    return env


def _at(e: EnvEntry, w: Wrapped) -> EnvEntry:
    return dataclasses.replace(e, line=w.line)


def check_wrapped(ctx: LintContext, entries: Sequence[EnvEntry],
                  launches: Sequence[Wrapped]) -> None:
    """Add the findings of every wrapped launch line (module docstring) to ``ctx``, each at
    the launch line and naming the setting."""
    for w in launches:
        line = "the command" if w.path == COMMAND_PATH else f"line {w.line}"
        for name, e in _in_effect(entries, w).items():
            if w.drops_env and name not in w.kept:
                ctx.add(_at(e, w), "wrapper-drops-env", "warning",
                        f"{name} does not reach the ranks of {line}: {w.wrapper} starts "
                        f"them with a fresh environment"
                        + (f" (set on line {e.line})" if e.line != w.line else ""),
                        remedy=f"pass it through the wrapper ({_pass_on(w)})")
                continue
            for knob in ctx.by_name.get(name, []):
                for need in sorted(knob.needs, key=lambda n: not n.certain):  # errors first
                    lost = sorted(set(need.shares) & w.takes)
                    if not lost or not need.applies(e.value):
                        continue
                    what = " and ".join(SHARED_TEXT[s] for s in lost)
                    shown = name if e.value is None else f"{name}={e.value}"
                    sure = w.certain and need.certain
                    ctx.add(_at(e, w), "isolated-ranks", "error" if sure else "warning",
                            f"{shown} {'selects' if need.certain else 'may select'} "
                            f"{need.why}, which needs the ranks to {what}; "
                            f"{w.wrapper} on {line} "
                            + ("starts each rank without that" if w.certain else
                               "may start each rank without that (it depends on the "
                               "installation)")
                            + ("" if need.certain else " (the library may choose another "
                               "transport for such a peer)"),
                            remedy="start the ranks in one namespace (the launcher inside one "
                                   "wrapper, or the wrapper's options that keep the host's: "
                                   "--pid=host --ipc=host, no --userns/--containall), or do not "
                                   "select this path for this line")
                    break


def _pass_on(w: Wrapped) -> str:
    if w.wrapper.startswith("sudo"):
        return "sudo --preserve-env=NAME, or sudo NAME=value"
    if w.wrapper.startswith(("docker", "podman")):
        return "-e NAME or -e NAME=value"
    if w.wrapper.startswith("srun"):
        return "srun --export=ALL,NAME, or NAME in the --export list"
    if w.wrapper.startswith(("apptainer", "singularity")):
        return "--env NAME=value, or APPTAINERENV_NAME"
    return "set it after the wrapper: env NAME=value"


def command_findings(words: Sequence[str], env: Mapping[str, str], *, knobs: Sequence[Any],
                     libraries: Mapping[str, Any]) -> list[LintFinding]:
    """The findings of :func:`check_wrapped` for one command (``words``, as run) given the
    settings ``env`` (name -> value) on its line; [] when its ranks start in no wrapper.

    :param knobs: ``Registry.knobs``; the library records' own knobs are added.
    :param libraries: ``Registry.libraries``.
    """
    found = wrapper_of(words)
    if found is None or not (found.takes or found.drops_env):
        return []
    own = {(k.library, k.name) for k in knobs}
    extra = [k for lib in libraries.values() for k in lib.knobs if (k.library, k.name) not in own]
    ctx = LintContext(None, list(knobs) + extra, {}, libraries)
    w = Wrapped(COMMAND_PATH, 1, found.wrapper, found.takes, found.certain, found.drops_env,
                found.kept)
    entries = [EnvEntry(n, v, COMMAND_PATH, 1, True, launch=True) for n, v in env.items()]
    check_wrapped(ctx, entries, [w])
    return ctx.out
