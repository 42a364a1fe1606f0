"""Shared fixtures.  Helpers live in tests/support.py (``from support import case, tool``).

Hypothesis is set up here, for every test folder, for a shared machine: inputs stay random
(other inputs of the same kinds are the point), but nothing depends on how fast the machine is:
no per-example deadline and no "data generation too slow" health check, which a loaded CI
machine trips without any fault in the code under test (the first ``tkinter.Tcl()`` of a run
alone takes longer than Hypothesis' default 200 ms deadline).
"""

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "advisor", deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.load_profile("advisor")


@pytest.fixture
def advisor_home(tmp_path, monkeypatch):
    """An empty ADVISOR_HOME so tests never touch the user's profile store."""
    home = tmp_path / "advisor-home"
    monkeypatch.setenv("ADVISOR_HOME", str(home))
    return home


@pytest.fixture
def release():
    """An event that a hanging plugin method waits on (``release.wait(60)``); set at teardown
    so no abandoned thread outlives the test, and the threads the test started are joined: an
    abandoned call still finishing would make the next test's call to the same step "not run"
    (``advisor.steps`` keeps a process-wide record of the calls it abandoned; seen in CI on a
    loaded 2-core machine)."""
    import threading

    before = set(threading.enumerate())
    ev = threading.Event()
    yield ev
    ev.set()
    for t in set(threading.enumerate()) - before:
        t.join(timeout=10)
