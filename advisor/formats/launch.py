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


def _slurm(words: Sequence[str]) -> list[Pair]:
    out: list[Pair] = []
    for i, w in enumerate(words[1:], 1):
        if w.startswith("--export="):
            out += _slurm_export(w[len("--export="):])
        elif w == "--export" and i + 1 < len(words):
            out += _slurm_export(words[i + 1])
        elif _name(w) in LAUNCHERS:
            return out + launch_settings(words[i:])
    return out


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
