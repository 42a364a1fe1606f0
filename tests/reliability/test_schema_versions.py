"""Schema versioning: a profile from a newer schema is refused with the version it needs, by
every command that reads profiles; an older one is migrated step by step, or refused clearly when
no migration leads from it."""

from __future__ import annotations

import tomllib

import pytest
from typer.testing import CliRunner

import advisor.models
import advisor.profile as store
from advisor.cli import app
from advisor.errors import ExitCode, ProfileError
from advisor.models import SCHEMA_VERSION
from support import DATA

BASE = (DATA / "bad" / "base.toml").read_text()


def _with_version(tmp_path, version) -> str:
    path = tmp_path / f"v{version}.toml"
    path.write_text(BASE.replace("schema_version = 1", f"schema_version = {version}", 1))
    return str(path)


@pytest.mark.parametrize("command", [["show"], ["emit"], ["verify", "--quick"], ["lint"]])
@pytest.mark.parametrize("ahead", [1, 1000])
def test_schema_newer_refused_with_needed_version(tmp_path, command, ahead):
    version = SCHEMA_VERSION + ahead
    path = _with_version(tmp_path, version)
    args = [*command, path] if command == ["lint"] else [*command, "-p", path]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == ExitCode.BAD_INPUT, res.stderr
    (line,) = [l for l in res.stderr.splitlines() if "warning:" not in l]
    assert path in line and f"needs schema {version}" in line
    assert f"reads up to {SCHEMA_VERSION}" in line and "upgrade" in line


@pytest.mark.parametrize("version", [0, -1])
def test_schema_older_than_any_refused(tmp_path, version):
    with pytest.raises(ProfileError, match=f"'schema_version': {version} is not a valid version"):
        store.load_profile(_with_version(tmp_path, version))


def test_schema_current_loads():
    assert store.load_profile(DATA / "bad" / "base.toml").schema_version == SCHEMA_VERSION


def test_schema_older_migrated_step_by_step(tmp_path, monkeypatch):
    """Pretend the schema moved on twice (1 -> 2 renamed a key, 2 -> 3 added none): a schema-1
    profile loads through both steps and the file is not modified."""
    bumped = SCHEMA_VERSION + 2
    monkeypatch.setattr(advisor.models, "SCHEMA_VERSION", bumped)
    seen = []

    def one_to_two(data):
        seen.append(data["schema_version"])
        data["provenance"] = dict(data.pop("origin"))
        return data

    def two_to_three(data):
        seen.append(data["schema_version"])
        return data

    monkeypatch.setattr(store, "MIGRATIONS", {SCHEMA_VERSION: one_to_two,
                                              SCHEMA_VERSION + 1: two_to_three})
    path = tmp_path / "old.toml"
    path.write_text(BASE.replace("[provenance]", "[origin]", 1))
    before = path.read_bytes()
    data = tomllib.loads(before.decode())
    migrated = store.migrate(data, SCHEMA_VERSION, source=str(path))
    assert seen == [SCHEMA_VERSION, SCHEMA_VERSION + 1]
    assert migrated["schema_version"] == bumped and "origin" not in migrated
    assert "origin" in data, "the caller's mapping was modified"
    assert path.read_bytes() == before


def test_schema_older_without_migration_refused_clearly(tmp_path, monkeypatch):
    monkeypatch.setattr(advisor.models, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setattr(store, "MIGRATIONS", {})
    path = tmp_path / "old.toml"
    path.write_text(BASE)
    with pytest.raises(ProfileError) as info:
        store.load_profile(path)
    msg = str(info.value)
    assert str(path) in msg and f"schema {SCHEMA_VERSION}" in msg and "advisor probe" in msg
