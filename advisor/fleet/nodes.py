"""Reading a fleet directory: one summary per ``DIR/<node>.toml``, each file untrusted.

Every file is read once (the size limit of ``advisor.textfile``, UTF-8 and NUL checks) and
hashed; a sidecar ``X.summary.json`` whose SHA-256 matches stands for it
(``advisor.fleet.summary``), else the text goes through tomllib, the schema version check and
one pydantic ``model_validate`` (``advisor.profile.profile_from_text``); any refusal makes that node ``failed`` with a one-line reason and never
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

from advisor.fleet.summary import digest, one_line, read_sidecar

__all__ = ["NodeSummary", "summarize", "summarize_dir", "node_files", "WORKERS",
           "PARALLEL_FROM"]

#: Worker processes for many files: the 2 cores of the issue's target ("10,000 profiles within
#: 10 s and 2 GiB on 2 cores"), fewer where the machine has fewer.
WORKERS = max(1, min(2, os.cpu_count() or 1))
#: Below this many files one process is faster than starting workers (measured here: a
#: process start with the plugins is about 0.1 s, one thin profile parses in about 10-20 ms, one
#: with a matching sidecar reads in about 0.15 ms; 10,000 such nodes: 0.9-1.8 s in 2 workers,
#: 1.5-1.7 s in one, on this shared 2-core machine).
PARALLEL_FROM = 64

_PROBES: Mapping[str, Any] = {}


@dataclass
class NodeSummary:
    """What the report keeps of one node file.

    ``state`` is ``"read"`` (valid profile) or ``"failed"`` (``reason`` says why, one line).
    ``results`` maps probe -> (status, reason); ``headlines`` maps ``"<probe>:<figure>"`` ->
    value (unit in the figure name); ``class_id`` is ``Facts.class_fingerprint``; ``faults``
    maps a probe whose ``headline`` failed on this node to its one-line error text
    (``advisor.fleet.headline.headlines_of``).
    """

    name: str
    path: str
    state: str
    reason: Optional[str] = None
    class_id: Optional[str] = None
    fingerprint: Optional[str] = None
    results: dict = field(default_factory=dict)
    headlines: dict = field(default_factory=dict)
    faults: dict = field(default_factory=dict)


def summarize(path: "Path | str", probes: Optional[Mapping[str, Any]] = None) -> NodeSummary:
    """The summary of one node file (never raises for bad input: the node is ``failed``).

    The file's bytes are read once (the profile size limit), hashed, and stand for the node
    through its sidecar when one matches (``advisor.fleet.summary.read_sidecar``); otherwise
    they are parsed and validated as a profile."""
    from advisor.errors import BadInputError, ProfileError
    from advisor.profile import MAX_PROFILE_BYTES, profile_from_text
    from advisor.textfile import read_text_file

    path = Path(path)
    probes = _PROBES if probes is None else probes
    s = NodeSummary(name=path.stem, path=str(path), state="failed")
    try:
        text = read_text_file(path, kind="profile", max_bytes=MAX_PROFILE_BYTES,
                              error=ProfileError, allow_empty=False)
        sc = read_sidecar(path, digest(text.encode("utf-8")), probes)
        if sc is not None:
            return _from_sidecar(s, sc, probes)
        prof = profile_from_text(text, source=str(path))
    except BadInputError as exc:
        s.reason = one_line(str(exc).replace(str(path) + ": ", "", 1))
        return s
    except (MemoryError, RecursionError, ValueError, OSError) as exc:
        s.reason = one_line(f"unreadable: {type(exc).__name__}: {exc}")
        return s
    return _from_profile(s, prof, probes)


def _from_profile(s: NodeSummary, prof: Any, probes: Mapping[str, Any]) -> NodeSummary:
    from advisor.fleet.headline import headlines_of

    s.state = "read"
    s.class_id = prof.facts.class_fingerprint()
    s.fingerprint = prof.fingerprint
    for res in prof.results:
        s.results[res.probe] = (res.status, one_line(res.reason) if res.reason else None)
        if res.status == "ok" and res.probe in probes:
            faults: list[str] = []
            for fig, v in headlines_of(probes[res.probe], res.evidence, faults=faults).items():
                s.headlines[f"{res.probe}:{fig}"] = v
            if faults:
                s.faults[res.probe] = faults[0]
    return s


def _from_sidecar(s: NodeSummary, sc: Any, probes: Mapping[str, Any]) -> NodeSummary:
    s.state = "read"
    s.class_id = sc.class_id
    s.fingerprint = sc.fingerprint
    s.results = {p: (st.status, st.reason) for p, st in sc.results.items()}
    s.headlines = {f: v for f, v in sc.headlines.items()
                   if f.partition(":")[0] in probes and sc.results.get(f.partition(":")[0])
                   and sc.results[f.partition(":")[0]].status == "ok"}
    return s


def node_files(directory: Path) -> list[Path]:
    """``directory/*.toml`` sorted by name (the ``classes/`` sub-directory is not read;
    ``X.summary.json`` sidecars are read with their ``X.toml``)."""
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
