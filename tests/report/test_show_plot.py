"""``advisor show --plot``: the shipped profiles' curves drawn as text, checked as a person sees
them - in a real terminal (tmux, 80 x 50) whose captured screen must hold the CMA latency and
bandwidth plots with their axes, legend and both curves, no line wider than the terminal - and
through the CLI on a terminal of a few rows (a short terminal once left an empty frame).  Plus
the pure renderer (``advisor.report.terminal``) on every drawable figure of every shipped
profile: each series' curve with its own character, each marker tagged at its line and listed
with the same tag, each axis label naming the unit its ticks are numbers in."""

from __future__ import annotations

import os
import re
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

from advisor.report.terminal import HEIGHT, drawable, render  # noqa: E402
from advisor.specs.units import axis_scale, format_value  # noqa: E402

DONE = "__show_plot_done__"
SHIPPED = sorted((REPO / "profiles").glob("*.toml"))
#: a tag row above the frame: tags (``A``, ``A,B,C``) and spaces only
TAG_ROW = re.compile(r"^[A-Z0-9, ]+$")
#: a marker in the key under the plot: ``  A  8 KiB  <label>`` (``-`` for one not drawn)
LISTED = re.compile(r"^  ([A-Z][0-9]*|-) +(\S+(?: [A-Za-z/%]+)?) +(.+)$")


def _cma_figures():
    from advisor_mpich_cma.plugin import CmaProbe

    prof = load_profile(SHIPPED_PROFILE)
    res = next(r for r in prof.results if r.probe == "mpich-cma")
    return {f.id: f for f in CmaProbe().figures(res.evidence, prof.facts)}


def _shipped_figures():
    """``(profile name, probe, spec)`` of every drawable figure of the shipped profiles, built
    by the real plugins as ``show --plot`` builds them."""
    from advisor.plugins import load
    from advisor.report.collect import collect_figures

    probes = load().probes
    return [(path.stem, probe, spec) for path in SHIPPED
            for probe, spec in collect_figures(load_profile(path), probes).items()
            if drawable(spec)]


def _plot_block(text: str, header: str) -> list[str]:
    """The lines of one plot printed by ``show --plot``: from its ``<probe>: <id>`` header to
    the next blank line after the axes."""
    lines = text.splitlines()
    start = lines.index(header)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start + 1:end]


def _read(block: list[str]) -> dict:
    """One rendered plot as a reader takes it apart: the tag rows over the frame, the canvas
    rows (inside the frame), the y tick labels, the axis-label line, the legend entries
    (character -> label) and the listed markers (tag -> (label, value))."""
    top = next(i for i, ln in enumerate(block) if "┌" in ln)
    bottom = next(i for i, ln in enumerate(block) if "└" in ln)
    left, right = block[top].index("┌"), block[top].rindex("┐")
    tags = []
    for ln in reversed(block[:top]):
        if not TAG_ROW.match(ln):
            break
        tags.insert(0, ln)
    rows = block[top + 1:bottom]
    below = []
    for ln in block[bottom + 3:]:  # a wrapped line continues its item, indented further
        if ln.startswith("   ") and below:
            below[-1] += " " + ln.strip()
        else:
            below.append(ln)
    legend = {}
    for ln in below:
        if LISTED.match(ln):
            break
        for entry in ln.strip().split("   "):
            legend[entry[0]] = entry[2:]
    return {"top": block[top], "left": left, "right": right, "tags": tags,
            "canvas": [ln[left + 1:right] for ln in rows],
            "yticks": [ln[:left].strip() for ln in rows if ln[left] == "┤"],
            "labels": block[bottom + 2], "legend": legend,
            "listed": {m.group(1): (m.group(3), m.group(2))
                       for m in map(LISTED.match, below) if m and m.group(1) != "-"},
            "not_drawn": [m.group(3) for m in map(LISTED.match, below) if m and m.group(1) == "-"]}


def _check_plot(block: list[str], spec, width: int) -> dict:
    """What every plot must show a reader without colour, ``width`` columns at most."""
    assert all(len(ln) <= width for ln in block), max(block, key=len)
    assert not any(ln.lstrip().startswith("|") for ln in block)
    plot = _read(block)
    canvas = plot["canvas"]
    assert len(canvas) >= HEIGHT - 6, "\n".join(block)  # the curve rows, not an empty frame
    # one character per series label, shown in the legend and on the canvas
    labels = list(dict.fromkeys(s.label for s in spec.series if s.label))
    entries = list(plot["legend"].values())
    assert len(entries) == len(labels), (entries, labels)
    for label in labels:
        assert any(t == label or t.startswith(f"{label} (same points as ") for t in entries), label
    same = {(c, m.group(1)) for c, t in plot["legend"].items()
            for m in [re.search(r"\(same points as (\S)\)", t)] if m}
    for char, label in plot["legend"].items():  # a curve on the points of another: either
        shown = {char} | {b for a, b in same if a == char} | {a for a, b in same if b == char}
        assert sum(row.count(c) for row in canvas for c in shown) >= 2, (char, label)
    # each axis label names the one unit its tick numbers are in
    xs = [x for s in spec.series for x in s.x if x > 0 or spec.x_scale != "log"]
    ys = [y for s in spec.series for y in s.y if y > 0 or spec.y_scale != "log"]
    y_axis = axis_scale(spec.y_unit, min(ys), max(ys), spec.y_scale)
    x_axis = axis_scale(spec.x_unit, min(xs), max(xs), spec.x_scale)
    assert y_axis.label(spec.y_label) in plot["labels"]
    assert x_axis.label(spec.x_label) in plot["labels"] or width < 60  # plotext drops it
    assert len(plot["yticks"]) >= 2 and all(re.fullmatch(r"-?[0-9.]+", t) for t in plot["yticks"])
    # each marker: its tag at its line (a vertical one under its tag, in the top frame), and
    # listed with the same tag and its value; or listed as not drawn
    listed = {f"{label}  {value}": tag for tag, (label, value) in plot["listed"].items()}
    groups = [(g, row) for row in plot["tags"] for g in re.finditer(r"[A-Z0-9,]+", row)]
    for m in spec.markers:
        vals = xs if m.axis == "x" else ys
        line = f"{m.label}  {format_value(m.value, spec.x_unit if m.axis == 'x' else spec.y_unit)}"
        if not min(vals) <= m.value <= max(vals):
            assert f"{m.label}, outside the measured range: not drawn" in plot["not_drawn"]
            continue
        tag = listed[line]
        if m.axis == "x":
            at = [g for g, _ in groups if tag in g.group().split(",")]
            assert len(at) == 1, (tag, plot["tags"])
            top = plot["top"]  # the tag starts at its line, or ends there at the right edge
            assert top[at[0].start()] in "┬┐" or top[at[0].end() - 1] in "┬┐", (tag, plot)
    return plot


def test_render_is_width_limited_and_readable():
    figs = _cma_figures()
    for width in (80, 60):
        for fid, ticks in (("latency", ["1 Ki", "64 Ki", "1000"]), ("bandwidth", ["1 Ki", "10"])):
            block = render(figs[fid], width=width).splitlines()
            plot = _check_plot(block, figs[fid], width)
            assert plot["legend"] == {"o": "cma-on", "x": "cma-off"}
            for tick in ticks:
                assert tick in "\n".join(block), tick
            # three markers at 8 KiB: one line, all three tags at it, each listed
            assert [t.strip() for t in plot["tags"]] == ["A,B,C"]
            assert plot["listed"] == {
                "A": ("crossover: CMA better from here on", "8 KiB"),
                "B": ("default MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "8 KiB"),
                "C": ("advised MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "8 KiB")}
            assert "message size (B)" in plot["labels"]
            assert ("latency (µs)" if fid == "latency" else "bandwidth (GB/s)") in plot["labels"]


@pytest.mark.parametrize("width", [40, 100])
def test_every_shipped_curve_figure_reads_without_colour(width):
    figs = _shipped_figures()
    assert {(name, probe, spec.id) for name, probe, spec in figs} >= {
        ("x86_64-icelake-2core-vm", "mpich-cma", "latency"),
        ("x86_64-icelake-2core-vm", "host-buffer", "memcpy-sweep"),
        ("x86_64-icelake-2core-vm-openmpi", "openmpi", "bandwidth")}
    for _, _, spec in figs:
        _check_plot(render(spec, width=width).splitlines(), spec, width)


def test_markers_at_distinct_values_get_distinct_tags_in_order():
    """openmpi's default (4 KiB), UCX's rendezvous (4.91 KiB) and the advice (16 KiB): three
    lines, each its own tag, left to right on the tag row."""
    spec = next(s for name, probe, s in _shipped_figures()
                if name.endswith("openmpi") and probe == "openmpi" and s.id == "latency")
    plot = _check_plot(render(spec, width=80).splitlines(), spec, 80)
    assert [t for t in " ".join(plot["tags"]).split()] == ["A", "C", "B"]
    assert plot["listed"]["C"] == ("ucx path: UCX's rendezvous from", "4.91 KiB")


def test_a_horizontal_marker_is_tagged_beside_its_line():
    """The zero-page copy ceiling (a measured y marker of the same profile) on the memcpy
    sweep: its tag right of the frame on the row of its horizontal line, within the width."""
    figs = {(p, s.id): s for _, p, s in _shipped_figures()}
    from advisor.plugins import load
    from advisor.report.collect import collect_figures

    every = collect_figures(load_profile(SHIPPED_PROFILE), load().probes)
    ceiling = next(s for p, s in every.items() if s.id == "zero-page-memcpy").markers
    sweep = figs[("host-buffer", "memcpy-sweep")]
    spec = sweep.model_copy(update={"markers": sweep.markers + ceiling})
    block = render(spec, width=80).splitlines()
    plot = _check_plot(block, spec, 80)
    tag = next(t for t, (label, _) in plot["listed"].items() if label == ceiling[0].label)
    row = next(ln for ln in block if ln.endswith(f" {tag}"))
    assert row[plot["right"]] == "┤" and row[plot["left"] + 1:plot["right"]].count("─") > 20


@pytest.mark.parametrize("profile", SHIPPED, ids=lambda p: p.stem)
def test_show_plot_on_a_short_terminal_draws_every_curve(profile):
    """LINES=6 once cut every plot to its frame (plotext fits the terminal's height): the plot
    keeps its rows, the terminal scrolls."""
    env = {**os.environ, "COLUMNS": "80", "LINES": "6"}
    proc = subprocess.run([sys.executable, "-m", "advisor", "show", "--plot", "-p", str(profile)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    figs = [(probe, spec) for name, probe, spec in _shipped_figures() if name == profile.stem]
    assert figs
    for probe, spec in figs:
        _check_plot(_plot_block(proc.stdout, f"{probe}: {spec.id}"), spec, 80)


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
        figs = _cma_figures()
        for fid, ticks in (("latency", ["1 Ki", "4 Mi", "latency (µs)"]),
                           ("bandwidth", ["1 Ki", "4 Mi", "bandwidth (GB/s)"])):
            block = _plot_block(screen, f"mpich-cma: {fid}")
            _check_plot(block, figs[fid], 80)
            for tick in ticks:
                assert tick in "\n".join(block), tick
        assert "mpich-cma: regret" in screen and "host-buffer: memcpy-sweep" in screen
    finally:
        subprocess.run([tmux, "-L", sock, "kill-server"], env=env, capture_output=True,
                       timeout=30)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
