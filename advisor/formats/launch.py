"""Settings passed on a launch line in a job script, as ``(name, raw value)`` pairs.

A job script often gives a setting to one command only, on its launch line; lint reads these too
(the shell reader, :mod:`advisor.formats.shellread`, calls :func:`launch_settings` with the words
of every command after its leading ``NAME=value`` words).  Forms read:

- ``env [-i] [-u NAME] NAME=value ... cmd`` (coreutils env(1));
- Slurm ``srun``/``sbatch``/``salloc`` ``--export=SPEC`` (also ``--export SPEC`` and ``#SBATCH
  --export=SPEC`` directives): SPEC is a comma-separated list of ``NAME=value`` (a value for the
  job step), ``NAME`` (the caller's value, unknown here), ``ALL``, ``NONE`` or ``NIL`` (srun(1),
  ``--export``; a value cannot hold a comma);
- MPICH's Hydra ``mpiexec``/``mpirun`` ``-genv NAME value`` and ``-env NAME value`` (MPICH
  "Using the Hydra Process Manager"; ``-genvlist a,b`` passes the caller's values);
- Open MPI ``mpirun``/``mpiexec``/``oshrun`` ``-x NAME=value`` and ``-x NAME`` (mpirun(1),
  ``-x``) and ``--mca KEY value`` / ``-mca`` / ``--gmca``, which Open MPI treats as the
  environment variable ``OMPI_MCA_KEY`` (Open MPI FAQ, "How do I set the value of MCA
  parameters?").

A launcher inside another (``srun env A=1 prog``, ``env A=1 mpiexec -genv B 2 prog``) is read too.
A launcher's options end at its program (:func:`program_index`): the program's own words
(``mpirun -n 2 podman run --env NAME img``) are not read as the launcher's.
The raw value is the word as the shell gives it (quotes removed); None means the value is the
caller's and not known from the script.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence

from advisor.specs.entry import NAME_RE

Pair = tuple[str, Optional[str]]

SLURM = ("srun", "sbatch", "salloc")
MPI = ("mpiexec", "mpirun", "mpiexec.hydra", "orterun", "oshrun", "prterun")
LAUNCHERS = ("env",) + SLURM + MPI

#: env(1) options that take a separate argument (GNU coreutils 9: -u NAME, -C DIR, -S STRING).
_ENV_ARG_OPTIONS = ("-u", "--unset", "-C", "--chdir", "-S", "--split-string")
#: Commands that start a program inside something else (containers, namespaces, another user,
#: binding and profiling tools): after a launcher's options such a word is its program, never an
#: option's value (advisor.formats.wrappers reads the first eight).
PROGRAM_WRAPPERS = ("apptainer", "singularity", "docker", "podman", "ch-run", "enroot",
                    "unshare", "sudo", "su", "runuser", "numactl", "taskset", "hwloc-bind",
                    "nsys", "ncu", "valgrind", "nohup", "time", "bash", "sh")


def program_index(words: Sequence[str], start: int = 1) -> int:
    """Index of the program a launcher's ``words`` start (``len(words)`` when none).

    The launcher's option table is not known here, so an option's value is told from the program
    by position: the first word not starting with ``-`` that does not follow an option word
    (``-n 2``: ``2`` is a value; ``--export=NONE``: the next word is not).  A word with a ``/``,
    a launcher or a :data:`PROGRAM_WRAPPERS` name is the program wherever it stands.  A flag
    without a value followed by a bare program name (``--oversubscribe hostname``) reads the
    name as the flag's value and the program's first argument as the program: the scan still
    stops before the program's options."""
    for i in range(start, len(words)):
        w = words[i]
        if w == "--":
            return i + 1
        if w.startswith("-") and w != "-":
            continue
        if "/" in w or _name(w) in LAUNCHERS or _name(w) in PROGRAM_WRAPPERS:
            return i
        prev = words[i - 1] if i else ""
        if not (prev.startswith("-") and "=" not in prev and prev != "--"):
            return i
    return len(words)


def _name(word: str) -> str:
    return os.path.basename(word)


def _slurm_export(spec: str) -> list[Pair]:
    out: list[Pair] = []
    for item in spec.split(","):
        name, eq, value = item.partition("=")
        if item in ("ALL", "NONE", "NIL", "") or not NAME_RE.match(name):
            continue
        out.append((name, value if eq else None))
    return out


def _env(words: Sequence[str]) -> list[Pair]:
    out: list[Pair] = []
    i = 1
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        if words[i] == "--":
            i += 1
            break
        i += 2 if words[i] in _ENV_ARG_OPTIONS else 1
    while i < len(words):
        name, eq, value = words[i].partition("=")
        if not eq or not NAME_RE.match(name):
            break
        out.append((name, value))
        i += 1
    return out + launch_settings(words[i:])


def slurm_export(words: Sequence[str]) -> Optional[str]:
    """The ``--export`` SPEC a Slurm command's own options give (the last one), None without
    one; the program's words are not read (:func:`program_index`)."""
    spec = None
    end = program_index(words)
    for i in range(1, end):
        if words[i].startswith("--export="):
            spec = words[i][len("--export="):]
        elif words[i] == "--export" and i + 1 < end:
            spec = words[i + 1]
    return spec


def _slurm(words: Sequence[str]) -> list[Pair]:
    spec = slurm_export(words)
    out = _slurm_export(spec) if spec is not None else []
    end = program_index(words)
    return out + (launch_settings(words[end:]) if end < len(words) else [])


def _mpi(words: Sequence[str]) -> list[Pair]:
    out: list[Pair] = []
    i = 1
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else None
        if w in ("-genv", "-env", "--genv", "--env") and nxt is not None:
            name, eq, value = nxt.partition("=")
            if eq and NAME_RE.match(name):  # also accepted: -genv NAME=value
                out.append((name, value))
                i += 2
                continue
            if NAME_RE.match(nxt) and i + 2 < len(words):
                out.append((nxt, words[i + 2]))
            i += 3
            continue
        if w in ("-genvlist", "-envlist") and nxt is not None:
            out += [(n, None) for n in nxt.split(",") if NAME_RE.match(n)]
            i += 2
            continue
        if w in ("-x", "--x") and nxt is not None:
            name, eq, value = nxt.partition("=")
            if NAME_RE.match(name):
                out.append((name, value if eq else None))
            i += 2
            continue
        if w in ("--mca", "-mca", "--gmca", "-gmca") and nxt is not None and i + 2 < len(words):
            name = "OMPI_MCA_" + nxt
            if NAME_RE.match(name):
                out.append((name, words[i + 2]))
            i += 3
            continue
        if _name(w) in LAUNCHERS:
            return out + launch_settings(words[i:])
        if program_index(words, i) == i:  # the program: its words are not the launcher's
            return out
        i += 1
    return out


def launch_settings(words: Sequence[str]) -> list[Pair]:
    """The settings a command's words pass to the program it launches (see the module
    docstring); [] when ``words[0]`` is not a launcher this module knows."""
    if not words:
        return []
    head = _name(words[0])
    if head == "env":
        return _env(words)
    if head in SLURM:
        return _slurm(words)
    if head in MPI:
        return _mpi(words)
    return []


def sbatch_directive(line: str) -> Optional[list[str]]:
    """The words of a ``#SBATCH`` directive line as an ``sbatch`` command line, or None when
    ``line`` is not one (sbatch(1): options may be given on lines starting ``#SBATCH`` before
    the first command of the script)."""
    import shlex

    stripped = line.strip()
    if not stripped.startswith("#SBATCH"):
        return None
    try:
        return ["sbatch", *shlex.split(stripped[len("#SBATCH"):], comments=True)]
    except ValueError:
        return None
