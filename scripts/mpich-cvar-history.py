#!/usr/bin/env python3
"""Regenerate MPICH's CVAR name history: ``advisor/libraries/data/mpich-<release>.json`` and
``mpich-renames.json``.

For each release it downloads the ``mpich`` wheel from PyPI (``pip download --no-deps``; the
wheels are what ``pip index versions mpich`` lists), unpacks it, runs the wheel's own
``mpivars`` (``mpich-<v>.data/data/bin/mpivars`` with ``LD_LIBRARY_PATH`` on its ``lib``) and
reads its output with ``advisor.libraries.mpich.parse_mpivars`` (the one reader).

Per release the file keeps ``{name: [MPI type, default as printed, MPI_T category]}``.

Renames are derived, not typed in: between consecutive releases, a name that disappears
(``old``) and a name that appears (``new``) are one setting renamed when they have the same MPI
type and the same description once each name is replaced by a placeholder (MPICH copies the
description with the CVAR when it moves it, e.g. into the CH4 family), and the pair is unique
both ways.  Every other name that disappears is a removal.  ``--wheels DIR`` reuses downloaded
wheels (``DIR/<version>/*.whl``).

Usage: ``python scripts/mpich-cvar-history.py [--wheels DIR] [VERSION ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from advisor.libraries.mpich import DATA, parse_mpivars  # noqa: E402

#: The newest patch release of each series users run (``pip index versions mpich``, 2026).
VERSIONS = ("4.0.3", "4.1.3", "4.2.3", "4.3.2", "5.0.2")


def wheel_for(version: str, cache: Path) -> Path:
    d = cache / version
    found = sorted(d.glob(f"mpich-{version}-*.whl")) if d.is_dir() else []
    if not found:
        d.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        f"mpich=={version}", "-d", str(d), "-q"], check=True)
        found = sorted(d.glob(f"mpich-{version}-*.whl"))
    return found[0]


def mpivars_text(version: str, cache: Path) -> str:
    whl = wheel_for(version, cache)
    out = cache / version / "unpacked"
    if not out.is_dir():
        with zipfile.ZipFile(whl) as z:
            z.extractall(out)
    data = out / f"mpich-{version}.data" / "data"
    exe = data / "bin" / "mpivars"
    exe.chmod(0o755)
    env = dict(os.environ, LD_LIBRARY_PATH=f"{data / 'lib'}:{data / 'lib' / 'mpich'}")
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True, env=env,
                          timeout=60).stdout


def _desc_key(name: str, text: str) -> str:
    return " ".join(re.sub(re.escape(name) + r"\b", "<NAME>", text).split())


def renames(old: dict, new: dict) -> dict[str, str]:
    """``{old name: new name}`` between two releases' catalogues (see the module text)."""
    gone = [n for n in old if n not in new]
    came = [n for n in new if n not in old]
    def key(cat, n):
        return (cat[n].type, _desc_key(n, cat[n].description))
    by_key_new: dict = {}
    for n in came:
        if new[n].description:
            by_key_new.setdefault(key(new, n), []).append(n)
    by_key_old: dict = {}
    for n in gone:
        if old[n].description:
            by_key_old.setdefault(key(old, n), []).append(n)
    out = {}
    for k, olds in by_key_old.items():
        news = by_key_new.get(k, [])
        if len(olds) == 1 and len(news) == 1:
            out[olds[0]] = news[0]
    return dict(sorted(out.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="*", default=list(VERSIONS))
    ap.add_argument("--wheels", type=Path, default=None)
    args = ap.parse_args(argv)
    cache = args.wheels or Path(tempfile.mkdtemp(prefix="mpich-wheels-"))
    cats = {}
    for v in args.versions:
        cat = parse_mpivars(mpivars_text(v, cache), source=f"mpivars of the mpich {v} wheel")
        rel = ".".join(v.split(".")[:2])
        cats[rel] = cat.entries
        doc = {"release": rel, "version": v, "source": cat.source,
               "names": {n: [e.type, e.default, e.category] for n, e in sorted(cat.entries.items())}}
        path = DATA / f"mpich-{rel}.json"
        path.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=False) + "\n")
        print(f"{path.relative_to(ROOT)}: {len(cat.entries)} CVARs", file=sys.stderr)
    rels = list(cats)
    history = {}
    for a, b in zip(rels, rels[1:]):
        r = renames(cats[a], cats[b])
        removed = sorted(n for n in cats[a] if n not in cats[b] and n not in r)
        history[b] = r
        print(f"{a} -> {b}: {len(r)} renamed, {len(removed)} removed, "
              f"{sum(1 for n in cats[b] if n not in cats[a])} added", file=sys.stderr)
    (DATA / "mpich-renames.json").write_text(json.dumps(
        {"source": "derived by scripts/mpich-cvar-history.py: same MPI type and description, "
                   "unique pair between consecutive releases", "renames": history},
        indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
