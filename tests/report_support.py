"""Helpers of the report tests: a probe offering a figure built from its recorded evidence (the
shipped profile's CMA sweep), until the plugins' own figures land, and the report's CLI run."""

from __future__ import annotations

import os
import subprocess
import sys

from support import REPO, SHIPPED_PROFILE

from advisor.models import Evidence
from advisor.specs.figures import FigureMarker, FigureSpec, series_from_points


def latency_figure(evidence) -> list[FigureSpec]:
    """Latency of both CMA paths against message size from the ``cma-sweep`` record, the
    medians and CIs as stored (``series_from_points``), the recorded threshold marked."""
    ev = Evidence.find(evidence, "cma-sweep")
    if ev is None:
        return []
    series = [series_from_points(p, ev.series_named(f"latency:{p}").points, evidence=ev.id,
                                 series=f"latency:{p}") for p in ("cma-on", "cma-off")]
    return [FigureSpec(id="latency", title="Latency against message size",
                       caption=f"cma-sweep: {ev.values.get('rounds')} rounds per size.",
                       x_label="message size", x_unit="bytes", y_label="latency", y_unit="s",
                       x_scale="log", y_scale="log", series=series,
                       markers=[FigureMarker(axis="x", value=8192, label="default threshold",
                                             role="default")])]


class FigureProbe:
    """The installed mpich-cma probe with a ``figures`` method (the plugin contract's optional
    method), or one that raises / returns garbage for the warning tests."""

    def __init__(self, inner, mode: str = "ok"):
        self._inner, self.mode = inner, mode
        self.name, self.description = inner.name, inner.description

    def __getattr__(self, attr):
        return getattr(self._inner, attr)

    def figures(self, evidence, facts):
        if self.mode == "raise":
            raise RuntimeError("figure bug")
        if self.mode == "garbage":
            return "not a list"
        if self.mode == "twice":
            return latency_figure(evidence) * 2
        return latency_figure(evidence)


def run_advisor(*args: str, env_extra=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m advisor ARGS`` in a fresh process, from the repository root."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "plugins"),
                                         env.get("PYTHONPATH", "")])
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "advisor", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


__all__ = ["SHIPPED_PROFILE", "FigureProbe", "latency_figure", "run_advisor"]
