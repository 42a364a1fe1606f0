"""``advisor show --plot``: the shipped profile's curves drawn as text, checked as a person sees
them - in a real terminal (tmux, 80 x 50) whose captured screen must hold the CMA latency and
bandwidth plots with their axes, legend and both curves, no line wider than the terminal.
Plus the pure renderer (``advisor.report.terminal``) on the same figures."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from advisor.profile import load_profile
from support import REPO, SHIPPED_PROFILE

plotext = pytest.importorskip("plotext", reason="the 'report' extra (plotext) is not installed")
pytest.importorskip("matplotlib", reason="the 'report' extra (matplotlib) is not installed")

from advisor.report.terminal import drawable, render  # noqa: E402

DONE = "__show_plot_done__"


def _cma_figures():
    from advisor_mpich_cma.plugin import CmaProbe

    prof = load_profile(SHIPPED_PROFILE)
    res = next(r for r in prof.results if r.probe == "mpich-cma")
    return {f.id: f for f in CmaProbe().figures(res.evidence, prof.facts)}


def _plot_block(text: str, header: str) -> list[str]:
    """The lines of one plot printed by ``show --plot``: from its ``<probe>: <id>`` header to
    the next blank line after the axes."""
    lines = text.splitlines()
    start = lines.index(header)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start + 1:end]


def _check_cma_plot(block: list[str], width: int, ticks: list[str]) -> None:
    assert all(len(ln) <= width for ln in block), max(block, key=len)
    canvas = [ln for ln in block if "│" in ln and not ln.lstrip().startswith("|")]
    assert any("┌" in ln for ln in block) and any("└" in ln for ln in block)  # the frame
    assert len(canvas) >= 12
    text = "\n".join(block)
    assert "oo cma-on" in text and "xx cma-off" in text  # the legend
    # both curves: each marker character on many rows of the canvas (18 sizes each)
    for mark in "ox":
        assert sum(1 for ln in canvas if mark in ln.split("│", 1)[-1]) >= 8, mark
    for tick in ticks:
        assert tick in text, tick
    assert "message size (bytes)" in text
    assert "default MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD: 8 KiB" in text
    assert "advised MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD: 8 KiB" in text


def test_render_is_width_limited_and_readable():
    figs = _cma_figures()
    for width in (80, 60):
        for fid, ticks in (("latency", ["1 KiB", "64 KiB", "µs", "1 ms"]),
                           ("bandwidth", ["1 KiB", "GB/s"])):
            lines = render(figs[fid], width=width).splitlines()
            _check_cma_plot(lines, width, ticks)


def test_render_refuses_a_categorical_figure():
    from advisor_host_buffer.plugin import HostBufferProbe

    prof = load_profile(SHIPPED_PROFILE)
    res = next(r for r in prof.results if r.probe == "host-buffer")
    figs = {f.id: f for f in HostBufferProbe().figures(res.evidence, prof.facts)}
    assert drawable(figs["memcpy-sweep"]) and not drawable(figs["first-touch"])
    with pytest.raises(ValueError, match="first-touch"):
        render(figs["first-touch"])


def test_plot_with_json_is_bad_input():
    proc = subprocess.run([sys.executable, "-m", "advisor", "show", "--plot", "--json", "-p",
                           str(SHIPPED_PROFILE)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--plot" in proc.stderr


@pytest.mark.parametrize("profile", sorted((REPO / "profiles").glob("*.toml")),
                         ids=lambda p: p.stem)
def test_show_plot_on_a_short_terminal_draws_every_curve(profile):
    """LINES=6 once cut every plot to its frame (plotext fits the terminal's height): each
    plot keeps its canvas rows, the terminal scrolls."""
    env = {**os.environ, "COLUMNS": "80", "LINES": "6"}
    proc = subprocess.run([sys.executable, "-m", "advisor", "show", "--plot", "-p", str(profile)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    headers = [ln for ln in proc.stdout.splitlines() if ln.startswith(("mpich-cma: ",
                                                                       "host-buffer: "))]
    assert headers
    for header in headers:
        rows = [ln for ln in _plot_block(proc.stdout, header) if "│" in ln or "┤" in ln]
        assert len(rows) >= 12 and sum(bool(set(ln) & set("ox+*")) for ln in rows) >= 5, header


@pytest.mark.integration
def test_show_plot_in_an_80_column_terminal(tmp_path):
    """Run ``advisor show --plot`` inside tmux (80 x 50) and read its captured screen history."""
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed (scripts/system-deps.sh installs it)")
    sock = f"advisor-test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    env.pop("TMUX", None)
    cmd = (f"cd {REPO} && env -u COLUMNS -u LINES PYTHONPATH={os.environ.get('PYTHONPATH', '')} "
           f"{sys.executable} -m advisor show --plot -p {SHIPPED_PROFILE} 2>/dev/null; "
           f"echo {DONE}; sleep 120")
    # the server in the foreground (-D), as a child of this test: tmux's daemon(3) needs
    # /dev/null to be a character device, which some containers do not give
    server = subprocess.Popen([tmux, "-D", "-L", sock, "-f", "/dev/null"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        started = time.monotonic() + 10
        while subprocess.run([tmux, "-L", sock, "new-session", "-d", "-x", "80", "-y", "50",
                              cmd], env=env, capture_output=True, timeout=30).returncode:
            assert time.monotonic() < started, "tmux server did not start"
            time.sleep(0.2)
        screen = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            screen = subprocess.run([tmux, "-L", sock, "capture-pane", "-p", "-J", "-S", "-",
                                     "-E", "-"], capture_output=True, text=True, env=env,
                                    timeout=30).stdout
            if DONE in screen:
                break
            time.sleep(0.5)
        assert DONE in screen, screen[-2000:]
        (tmp_path / "screen.txt").write_text(screen)
        for fid, ticks in (("latency", ["1 KiB", "4 MiB", "µs"]),
                           ("bandwidth", ["1 KiB", "4 MiB", "GB/s"])):
            _check_cma_plot(_plot_block(screen, f"mpich-cma: {fid}"), 80, ticks)
        assert "mpich-cma: regret" in screen and "host-buffer: memcpy-sweep" in screen
    finally:
        subprocess.run([tmux, "-L", sock, "kill-server"], env=env, capture_output=True,
                       timeout=30)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
