"""The wheel a site installs: built by ``python -m build`` from this tree, installed (not
editable) in a fresh venv, run from there with nothing of the checkout on ``sys.path``.

Slow (about a minute: the build's isolated environment and the dependencies are installed by
pip, from its cache or index); needs the ``build`` package (``test`` extra) and pip's index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from support import REPO

pytestmark = [pytest.mark.slow, pytest.mark.integration]

#: What a wheel is built from: the package sources and the files pyproject.toml names.
SOURCES = ("advisor", "plugins", "pyproject.toml", "README.md", "LICENSE")
BUILT_INS = {"mpich-cma", "host-buffer", "memory-pool", "openmpi"}


def _clean_env(home: Path) -> dict:
    """This environment without anything that points Python at the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "ADVISOR_DISABLE_PLUGINS")}
    env["ADVISOR_HOME"] = str(home)
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(wheel path, environment, scratch directory): the wheel ``python -m build`` makes."""
    # build.__main__, not build: a checkout's build/ folder imports as a namespace package
    pytest.importorskip("build.__main__", reason="the 'build' package (test extra) builds "
                        "the wheel")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"  # a copy: the build writes build/ and *.egg-info into its source tree
    src.mkdir()
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc", "*.egg-info"))
        else:
            shutil.copy2(path, src / name)
    env = _clean_env(tmp / "home")
    dist = tmp / "dist"
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist),
                           str(src)], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = dist.glob("hpc_advisor-*.whl")
    return wheel, env, tmp


@pytest.fixture(scope="module")
def installed(built):
    """(venv bin directory, wheel path, environment) of a fresh venv holding the built wheel."""
    wheel, env, tmp = built
    venv.create(tmp / "venv", with_pip=True)
    bin_ = tmp / "venv" / "bin"
    proc = subprocess.run([str(bin_ / "python"), "-m", "pip", "install", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return bin_, wheel, env


def _advisor(installed, *args, check=True, env=None):
    bin_, _, base = installed
    proc = subprocess.run([str(bin_ / "advisor"), *args], capture_output=True, text=True,
                          timeout=120, env={**base, **(env or {})}, cwd=bin_.parent)
    if check:
        assert proc.returncode == 0, f"advisor {' '.join(args)}: {proc.stderr}"
    return proc


def test_wheel_holds_the_shipped_profiles_and_the_license(installed):
    _, wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(p.name for p in (REPO / "advisor" / "shipped").glob("*.toml"))
    assert shipped and all(f"advisor/shipped/{n}" in names for n in shipped)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "profiles/")) for n in names)


def test_installed_advisor_lists_the_shipped_profiles(installed):
    bin_, _, _ = installed
    rows = json.loads(_advisor(installed, "profiles", "list", "--json").stdout)
    expected = sorted(p.stem for p in (REPO / "advisor" / "shipped").glob("*.toml")
                      if p.name != "index.toml")
    assert [r["name"] for r in rows] == expected
    site = bin_.parent.resolve()
    for r in rows:  # read from the installed package, not from this checkout
        assert Path(r["path"]).resolve().is_relative_to(site), r["path"]
        assert r["machine"] and r["created"] and r["fingerprint"]
    # wide enough that rich does not fold a name over two lines
    table = _advisor(installed, "profiles", "list", env={"COLUMNS": "400"}).stdout
    assert all(f"@{n}" in table for n in expected)
    # a shipped profile is usable by name
    emitted = _advisor(installed, "emit", "-f", "env", "-p", f"@{expected[0]}").stdout
    assert "export " in emitted


def test_installed_advisor_has_the_builtin_plugins(installed):
    rows = {r["name"]: r for r in json.loads(_advisor(installed, "plugins", "--json").stdout)}
    for name in BUILT_INS:
        assert rows[name]["status"] == "ok", rows.get(name)
        assert rows[name]["probes"], name
    assert not any(n.startswith(("example", "fault-")) for n in rows)  # only what the wheel has


def test_wheel_metadata_names_the_licence_and_project_urls(built):
    """What pip show, PyPI and the site's package tools read: the SPDX licence, its file, and
    the project's links (pyproject's [project.urls])."""
    from email.parser import HeaderParser

    wheel = built[0]
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = HeaderParser().parsestr(zf.read(name).decode("utf-8"))
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert meta.get_all("License-File") == ["LICENSE"]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert set(urls) >= {"Homepage", "Documentation", "Changelog", "Issues"}, urls
    assert all(u.startswith("https://") for u in urls.values()), urls
