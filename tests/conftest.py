"""Shared fixtures.  Helpers live in tests/support.py (``from support import case, tool``)."""

import pytest


@pytest.fixture
def advisor_home(tmp_path, monkeypatch):
    """An empty ADVISOR_HOME so tests never touch the user's profile store."""
    home = tmp_path / "advisor-home"
    monkeypatch.setenv("ADVISOR_HOME", str(home))
    return home
