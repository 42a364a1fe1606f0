"""Scope files for the configuration tests: every test gets its own site and user scope paths
(ADVISOR_SITE_CONFIG, ADVISOR_USER_CONFIG) and an empty ADVISOR_HOME, so /etc/advisor and the
user's own configuration are never read or written."""

from __future__ import annotations

import pytest


@pytest.fixture
def scopes(tmp_path, monkeypatch):
    """(site, user) scope file paths (not created); the environment points at them."""
    site, user = tmp_path / "etc" / "config.toml", tmp_path / "user" / "config.toml"
    monkeypatch.setenv("ADVISOR_SITE_CONFIG", str(site))
    monkeypatch.setenv("ADVISOR_USER_CONFIG", str(user))
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    for var in ("ADVISOR_LAUNCHER", "ADVISOR_DISABLE_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    return site, user
