"""Reading a fleet directory: one summary per ``DIR/<node>.toml``, each file untrusted.

Every file goes through ``advisor.profile.load_profile`` (the size limit of
``advisor.textfile``, UTF-8 and NUL checks, tomllib, the schema version check, one pydantic
``model_validate``); any refusal makes that node ``failed`` with a one-line reason and never
stops the others.  Only a small :class:`NodeSummary` is kept per node, so 10,000 nodes fit in
memory; the evidence of the few nodes a class pools is read again (``advisor.fleet.pool``).

With many files the summaries are made by :data:`WORKERS` processes (fork start method where
the platform has it: the loaded plugins are inherited, not imported again).

Public API: :class:`NodeSummary`, :func:`summarize`, :func:`summarize_dir`, :func:`node_files`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

__all__ = ["NodeSummary", "summarize", "summarize_dir", "node_files", "WORKERS",
           "PARALLEL_FROM"]

#: Worker processes for many files: the 2 cores of the issue's target ("10,000 profiles within
#: 10 s and 2 GiB on 2 cores"), fewer where the machine has fewer.
WORKERS = max(1, min(2, os.cpu_count() or 1))
#: Below this many files one process is faster than starting workers (measured here: a
#: process start with the plugins is about 0.1 s, one thin profile reads in about 10 ms).
PARALLEL_FROM = 64

_PROBES: Mapping[str, Any] = {}


@dataclass
class NodeSummary:
    """What the report keeps of one node file.

    ``state`` is ``"read"`` (valid profile) or ``"failed"`` (``reason`` says why, one line).
    ``results`` maps probe -> (status, reason); ``headlines`` maps ``"<probe>:<figure>"`` ->
    value (unit in the figure name); ``class_id`` is ``Facts.class_fingerprint``.
    """

    name: str
    path: str
    state: str
    reason: Optional[str] = None
    class_id: Optional[str] = None
    fingerprint: Optional[str] = None
    results: dict = field(default_factory=dict)
    headlines: dict = field(default_factory=dict)


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    line = line if line.isprintable() else line.encode("unicode_escape").decode("ascii")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def summarize(path: "Path | str", probes: Optional[Mapping[str, Any]] = None) -> NodeSummary:
    """The summary of one node file (never raises for bad input: the node is ``failed``)."""
    from advisor.errors import BadInputError
    from advisor.fleet.headline import headlines_of
    from advisor.profile import load_profile

    path = Path(path)
    probes = _PROBES if probes is None else probes
    s = NodeSummary(name=path.stem, path=str(path), state="failed")
    try:
        prof = load_profile(path)
    except BadInputError as exc:
        s.reason = _one_line(str(exc).replace(str(path) + ": ", "", 1))
        return s
    except (MemoryError, RecursionError, ValueError, OSError) as exc:
        s.reason = _one_line(f"unreadable: {type(exc).__name__}: {exc}")
        return s
    s.state = "read"
    s.class_id = prof.facts.class_fingerprint()
    s.fingerprint = prof.fingerprint
    for res in prof.results:
        s.results[res.probe] = (res.status, _one_line(res.reason) if res.reason else None)
        if res.status == "ok" and res.probe in probes:
            for fig, v in headlines_of(probes[res.probe], res.evidence).items():
                s.headlines[f"{res.probe}:{fig}"] = v
    return s


def node_files(directory: Path) -> list[Path]:
    """``directory/*.toml`` sorted by name (the ``classes/`` sub-directory is not read)."""
    return sorted(p for p in directory.glob("*.toml"))


def _init(probes: Mapping[str, Any]) -> None:
    global _PROBES
    _PROBES = probes


def summarize_dir(directory: Path, probes: Mapping[str, Any], *,
                  workers: int = WORKERS) -> list[NodeSummary]:
    """Summaries of every node file of ``directory`` in name order, in ``workers`` processes
    when there are at least :data:`PARALLEL_FROM` files."""
    files = node_files(directory)
    if workers <= 1 or len(files) < PARALLEL_FROM:
        return [summarize(f, probes) for f in files]
    import multiprocessing as mp

    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else methods[0])
    _init(probes)  # inherited by forked workers
    init = None if ctx.get_start_method() == "fork" else _init
    with ctx.Pool(workers, initializer=init, initargs=() if init is None else (probes,)) as pool:
        return pool.map(summarize, files, chunksize=max(1, len(files) // (workers * 8)))
