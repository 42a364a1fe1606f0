"""What a launch line's wrapper does to the ranks it starts: namespaces, containers, another user.

A job script often starts each rank inside a wrapper: ``srun apptainer exec img.sif ./app``,
``mpirun -n 64 podman run ... ./app``, ``srun unshare --user ./app``.  Such a wrapper can take
away what the settings of the line assume the ranks share: a rank in its own user namespace
cannot ptrace its peers (so CMA single copy, process_vm_readv(2), fails), one in its own PID
namespace does not see their PIDs, one in its own IPC namespace has its own /dev/shm.  A wrapper
that changes the user may also reset the environment (sudo's ``env_reset``), so the line's
settings never reach the ranks.  This module recognises such wrappers; ``advisor lint`` flags the
settings that need what they take away (``advisor.knobs.Need``).

Each wrapper and option is read as its documentation describes it:

- Apptainer / SingularityCE ``exec|run|shell|test`` (``apptainer exec --help``; Apptainer user
  guide, "Security options" and "User namespaces"): ``-u/--userns`` and ``-f/--fakeroot`` a new
  user namespace, ``-p/--pid`` a new PID namespace, ``-i/--ipc`` a new IPC namespace,
  ``-C/--containall`` both (and a private /dev/shm); without them an installation without setuid
  (the default since Apptainer 1.1) still runs each instance in its own user namespace, so that
  case is reported as possible, not certain;
- ``docker run`` / ``podman run`` (Docker run reference, ``--pid`` and ``--ipc``: a new PID and
  IPC namespace unless ``host``); rootless Podman also a user namespace (podman-run(1),
  ``--userns``), reported as possible;
- Charliecloud ``ch-run`` (ch-run(1): always an unprivileged user namespace);
- ``enroot start`` and Slurm's ``srun --container-image`` (pyxis, which runs enroot): an
  unprivileged user namespace (enroot README, "unprivileged");
- Slurm ``srun --container=BUNDLE`` (Slurm "Containers Guide": the namespaces ``oci.conf``
  configures), reported as possible;
- util-linux ``unshare`` (unshare(1)): ``-U/--user``, ``-r/--map-root-user``, ``-p/--pid``,
  ``-i/--ipc``;
- ``sudo`` (sudoers(5) ``env_reset``, on by default: the environment is reset unless ``-E`` /
  ``--preserve-env``), ``su -``/``su -l``/``--login`` and ``runuser -l`` (a login shell's fresh
  environment), and ``env -i`` after the launcher (env(1));
- Slurm ``srun --export=NONE`` or ``--export=`` a list without ``ALL`` (srun(1), ``--export``:
  only the names listed, and ``SLURM_*``, reach the task), and a script's ``#SBATCH
  --export=...`` without ``ALL``, which sbatch passes on to the script's ``srun`` lines (as
  ``SLURM_EXPORT_ENV``) unless a line gives its own ``--export``: shown with the real Slurm
  22.05 in tests/slurm/test_export_lint.py.

Public API: :class:`Wrapped`, :func:`wrapped_launches`, :func:`wrapper_of`.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Sequence

from advisor.formats.launch import (LAUNCHERS, SLURM, launch_settings, program_index,
                                    sbatch_directive, slurm_export)
from advisor.specs.entry import NAME_RE

__all__ = ["Found", "Wrapped", "wrapped_launches", "wrapper_of"]

#: Words that may stand before the launcher on a job-script line (bash(1) ``time``, ``exec``,
#: ``command``; nohup(1)).
_PREFIX = ("time", "exec", "command", "nohup")
#: Apptainer/SingularityCE subcommands that start a container process.
_APPTAINER_RUNS = ("exec", "run", "shell", "test")


class Found(NamedTuple):
    """A wrapper found on a command line (see :class:`Wrapped` for the fields)."""

    wrapper: str
    takes: frozenset[str]
    certain: bool
    drops_env: bool
    kept: frozenset[str] = frozenset()


_Hit = Optional[tuple[str, frozenset[str], bool, bool]]


@dataclass(frozen=True)
class Wrapped:
    """A launch line whose ranks start inside a wrapper.

    :ivar path: the file; :ivar line: the 1-based line the command starts on.
    :ivar wrapper: the wrapper as written (``apptainer exec --userns``).
    :ivar takes: what the ranks no longer share (``advisor.knobs.Shared`` values).
    :ivar certain: True when the options say so; False when it depends on the installation
        (an Apptainer without setuid, rootless Podman, ``oci.conf``).
    :ivar drops_env: the wrapper starts the ranks with a fresh environment: settings given
        before it do not reach them.
    :ivar kept: the names the wrapper's own words set again (``sudo A=1``, ``env -i A=1``,
        ``docker run -e A=1``, a launcher after it): they reach the ranks all the same.
    """

    path: str
    line: int
    wrapper: str
    takes: frozenset[str] = field(default_factory=frozenset)
    certain: bool = True
    drops_env: bool = False
    kept: frozenset[str] = field(default_factory=frozenset)


def _flags(words: Sequence[str]) -> set[str]:
    """The option words up to the first non-option (``--opt=value`` as ``--opt``)."""
    out: set[str] = set()
    for w in words:
        if not w.startswith("-"):
            break
        out.add(w.split("=", 1)[0])
    return out


def _apptainer(words: Sequence[str]) -> _Hit:
    if len(words) < 2 or words[1] not in _APPTAINER_RUNS:
        return None
    f = _flags(words[2:])
    takes: set[str] = set()
    if f & {"-u", "--userns", "-f", "--fakeroot"}:
        takes.add("ptrace")
    if f & {"-p", "--pid", "-C", "--containall"}:
        takes.add("pid")
    if f & {"-i", "--ipc", "-C", "--containall"}:
        takes.add("ipc")
    shown = " ".join([os.path.basename(words[0]), words[1], *sorted(f)])
    if takes:
        return shown, frozenset(takes), True, "-C" in f or "--containall" in f or "-e" in f \
            or "--cleanenv" in f
    return shown, frozenset({"ptrace"}), False, bool(f & {"-e", "--cleanenv"})


def _container_run(words: Sequence[str]) -> _Hit:
    if len(words) < 2 or words[1] != "run":
        return None
    opts = [w for w in words[2:] if w.startswith("-")]
    takes = {"pid", "ipc"}
    for w in opts:
        if w in ("--pid=host",):
            takes.discard("pid")
        if w in ("--ipc=host",):
            takes.discard("ipc")
    tool = os.path.basename(words[0])
    # a new PID and IPC namespace unless host: certain; rootless Podman's user namespace is the
    # installation's choice, so with nothing else taken it is only possible
    certain = tool == "docker" or bool(takes)
    if tool == "podman":
        takes.add("ptrace")
    # a container starts with the image's environment plus -e/--env: the caller's is not passed
    return f"{tool} run", frozenset(takes), certain, True


def _passed_names(words: Sequence[str]) -> set[str]:
    """Names a container run passes from the caller: ``-e NAME``, ``--env NAME``,
    ``--env=NAME`` (docker run / podman run: a name without a value takes the caller's)."""
    out: set[str] = set()
    for i, w in enumerate(words):
        value = None
        if w in ("-e", "--env") and i + 1 < len(words):
            value = words[i + 1]
        elif w.startswith("--env="):
            value = w.split("=", 1)[1]
        if value is not None and NAME_RE.match(value.split("=", 1)[0]):
            out.add(value.split("=", 1)[0])
    return out


def _unshare(words: Sequence[str]) -> _Hit:
    f = set()
    for w in words[1:]:
        if not w.startswith("-"):
            break
        if w.startswith("--"):
            f.add(w.split("=", 1)[0])
        else:  # bundled short options: -Urp
            f |= {f"-{c}" for c in w[1:]}
    takes: set[str] = set()
    if f & {"-U", "--user", "-r", "--map-root-user"}:
        takes.add("ptrace")
    if f & {"-p", "--pid"}:
        takes.add("pid")
    if f & {"-i", "--ipc"}:
        takes.add("ipc")
    return ("unshare " + " ".join(sorted(f)), frozenset(takes), True, False) if takes else None


def _user_switch(words: Sequence[str]) -> _Hit:
    tool = os.path.basename(words[0])
    f = _flags(words[1:])
    if tool == "sudo":
        keeps = any(w == "-E" or w.startswith("--preserve-env") for w in f)
        return (None if keeps else ("sudo", frozenset(), True, True))
    if tool in ("su", "runuser") and (f & {"-", "-l", "--login"} or "-" in words[1:2]):
        return f"{tool} -l", frozenset(), True, True
    return None


def _wrapper(words: Sequence[str]) -> _Hit:
    tool = os.path.basename(words[0])
    if tool in ("apptainer", "singularity"):
        return _apptainer(words)
    if tool in ("docker", "podman"):
        return _container_run(words)
    if tool == "ch-run":
        return "ch-run", frozenset({"ptrace"}), True, False
    if tool == "enroot" and len(words) > 1 and words[1] == "start":
        return "enroot start", frozenset({"ptrace"}), True, False
    if tool == "unshare":
        return _unshare(words)
    if tool in ("sudo", "su", "runuser"):
        return _user_switch(words)
    if tool == "env" and "-i" in _flags(words[1:]) | {w for w in words[1:2]}:
        return "env -i", frozenset(), True, True
    return None


def _kept(rest: Sequence[str]) -> frozenset[str]:
    """Names a wrapper's remaining words set or pass on: ``NAME=value`` words (``sudo A=1``,
    ``-e A=1``), a container's ``-e NAME`` / ``--env NAME``, and what a launcher among them
    passes."""
    names = {w.split("=", 1)[0] for w in rest if "=" in w and NAME_RE.match(w.split("=", 1)[0])}
    return frozenset(names | _passed_names(rest) | {n for n, _ in launch_settings(list(rest))})


def _export_drops(words: Sequence[str], batch_export: Optional[str]) -> Optional[Found]:
    """``srun``'s fresh environment: its ``--export`` SPEC (or the script's ``#SBATCH
    --export``, ``batch_export``) without ``ALL``; the names it lists are kept."""
    own = slurm_export(words)
    spec = own if own is not None else (batch_export if os.path.basename(words[0]) == "srun"
                                         else None)
    if spec is None:
        return None
    items = spec.split(",")
    if "ALL" in items:
        return None
    kept = {i.split("=", 1)[0] for i in items if NAME_RE.match(i.split("=", 1)[0])}
    kept |= _kept(words[program_index(words):])  # set again after srun: srun env A=1 prog
    shown = (f"srun --export={spec}" if own is not None else
             f"srun under #SBATCH --export={spec} (sbatch passes it on as SLURM_EXPORT_ENV)")
    return Found(shown, frozenset(), True, True, frozenset(kept - {"NONE", "NIL"}))


def wrapper_of(words: Sequence[str], batch_export: Optional[str] = None) -> Optional[Found]:
    """The first wrapper a command's words start the program in, after its launchers and
    their options; None when there is none.  A wrapper before any launcher (``words[0]``:
    ``sudo mpirun ...``, ``apptainer exec img mpirun ...``) holds every rank, so it takes
    nothing from one rank that another has: only its fresh environment is reported.
    ``batch_export``: the script's ``#SBATCH --export`` SPEC, which its ``srun`` lines take
    when they give none."""
    words = list(words)
    while words and (words[0] in _PREFIX or ("=" in words[0]
                                              and NAME_RE.match(words[0].split("=", 1)[0]))):
        words = words[1:]
    if not words:
        return None
    head = os.path.basename(words[0])
    fresh = _export_drops(words, batch_export) if head in SLURM else None
    inner = _inner_wrapper(words, head)
    if fresh is None:
        return inner
    if inner is None:
        return fresh
    # the launcher's fresh environment, then the wrapper's: what reaches the ranks is what the
    # wrapper sets itself, or what the launcher's list passes (when the wrapper passes it on)
    return inner._replace(wrapper=f"{fresh.wrapper} + {inner.wrapper}", drops_env=True,
                          kept=inner.kept if inner.drops_env else fresh.kept)


def _inner_wrapper(words: list[str], head: str) -> Optional[Found]:
    """:func:`wrapper_of` without the launcher's own ``--export``."""
    if head in SLURM:
        for w in words[1:]:
            if w.startswith("--container-image"):
                return Found("srun --container-image (pyxis/enroot)", frozenset({"ptrace"}),
                             False, False)
            if w.startswith("--container=") or w == "--container":
                return Found("srun --container", frozenset({"ptrace", "pid", "ipc"}), False,
                             False)
    for i in range(len(words)):
        if i and head not in LAUNCHERS:
            return None
        if i and os.path.basename(words[i]) in LAUNCHERS and words[i] != words[0]:
            return wrapper_of(words[i:])
        hit = _wrapper(words[i:])
        if hit is not None and i == 0:
            # around the launcher (apptainer exec img mpirun ...): every rank in the same
            # wrapper, so nothing is taken from one rank that another has; only the fresh
            # environment matters
            return Found(hit[0], frozenset(), True, hit[3], _kept(words[1:]))
        if hit is not None:
            return Found(*hit, kept=_kept(words[i + 1:]))
    return None


def _logical_lines(text: str):
    """``(first line number, text)`` of each command line, backslash continuations joined."""
    start, parts = None, []
    for n, raw in enumerate(text.splitlines(), 1):
        if start is None:
            start = n
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            parts.append(raw[:-1])
            continue
        parts.append(raw)
        yield start, " ".join(parts)
        start, parts = None, []
    if parts and start is not None:
        yield start, " ".join(parts)


def wrapped_launches(text: str, path: str) -> list[Wrapped]:
    """The launch lines of a shell job script ``text`` whose ranks start in a wrapper
    (``wrapper_of``), one per line, in order.  A line the shell's quoting rules cannot split
    (``shlex``) is skipped: the format's own reader reports it.  Linear in the text."""
    out: list[Wrapped] = []
    batch_export: Optional[str] = None
    for line, cmd in _logical_lines(text):
        directive = sbatch_directive(cmd)
        if directive is not None:
            batch_export = slurm_export(directive) or batch_export
        if not cmd.strip() or cmd.lstrip().startswith("#"):
            continue
        try:
            words = shlex.split(cmd, comments=True)
        except ValueError:
            continue
        found = wrapper_of(words, batch_export) if words else None
        if found is not None and (found.takes or found.drops_env):
            out.append(Wrapped(path, line, found.wrapper, found.takes, found.certain,
                               found.drops_env, found.kept))
    return out
