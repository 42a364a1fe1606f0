"""An out-of-tree hpc-advisor plugin, complete and minimal.

It shows the three kinds of contribution a vendor plugin makes:

* a fact detector (``example``): the clock the harness times with, from ``time.get_clock_info``;
* a probe (``example-timer``): measures the cost of one ``time.perf_counter_ns()`` call through
  the shared harness and records it as evidence with an info finding (no settings: there is
  nothing to tune, and a plugin recommends only what it measured);
* an emitter (``dotenv``): ``KEY=value`` lines for ``docker run --env-file`` / systemd
  ``EnvironmentFile=``, which take values literally (no quoting), so values with a newline are
  refused; it selects and merges settings with the core's shared helpers
  (``advisor.specs.writing.env_items``) and registers a ``parse`` so lint reads it back.

Install with ``pip install docs/examples/advisor-example``; ``advisor plugins`` then lists it.
"""

from __future__ import annotations

import time

from advisor import hookimpl
from advisor.errors import EmitError
from advisor.models import Advice, Evidence, Finding, Series
from advisor.probe import Applicability


def detect_clock() -> dict:
    info = time.get_clock_info("perf_counter")
    return {"perf_counter_implementation": info.implementation,
            "perf_counter_resolution_s": float(info.resolution)}


class TimerProbe:
    name = "example-timer"
    description = "cost of one perf_counter_ns() call (example plugin)"
    budget_weight = 0.05  # asks for a small slice of the shared budget
    option_keys: dict = {}  # reads no --option key (so a mistyped key is refused, not ignored)

    def check(self, facts):
        return Applicability(usable=True)

    def measure(self, ctx):
        from advisor.measure import conditions, sample

        res = sample(time.perf_counter_ns, min_samples=20, max_time_s=1.0,
                     deadline=ctx.deadline)
        series = Series(name="perf_counter_ns call", unit="s", points=[res.to_point()])
        return [Evidence(id="timer-cost", description=self.description, series=[series],
                         conditions=conditions())]

    def recommend(self, evidence, facts):
        for ev in evidence:
            if ev.id == "timer-cost" and ev.series and ev.series[0].points:
                st = ev.series[0].points[0].stats
                if st is not None:
                    return Advice(findings=[Finding(
                        id="example-timer-cost", severity="info",
                        message=f"one perf_counter_ns() call costs {st.median * 1e9:.0f} ns "
                                f"(median of {st.n})", evidence=["timer-cost"])])
        return Advice()

    def figures(self, evidence, facts):
        """``advisor report`` / ``show --plot`` hook (pure, no I/O, no plotting library): figure
        specs built from this probe's own evidence; the core draws them.  Here: the cost of one
        call (seconds) as a bar with the bootstrap CI the harness stored (``Point.stats``)."""
        from advisor.specs.figures import FigureSeries, FigureSpec

        for ev in evidence:
            if ev.id == "timer-cost" and ev.series and ev.series[0].points:
                s = ev.series[0]
                st = s.points[0].stats
                if st is None or st.ci_low is None:
                    return []
                bar = FigureSeries(label="perf_counter_ns()", x=[0.0], y=[st.median],
                                   lo=[st.ci_low], hi=[st.ci_high], kind="bar",
                                   evidence=ev.id, series=s.name)
                return [FigureSpec(
                    id="timer-cost", title="Cost of one perf_counter_ns() call",
                    caption=(f"Timed by the shared harness (advisor.measure.sample): median of "
                             f"{st.n} samples, {len(s.points[0].warmup)} warm-up sample(s) kept "
                             "apart; whisker: 95 % bootstrap CI of the median."),
                    x_label="call", x_unit="", y_label="time per call", y_unit="s",
                    series=[bar], names={0.0: "perf_counter_ns()"})]
        return []


def render_dotenv(sel) -> str:
    """``KEY=value`` lines, through the core's shared selection (``env_items``): the same
    settings, order and value strings as every built-in format, and a list variable such as
    ``GLIBC_TUNABLES`` merged into one line whatever number of recommendations add items to it
    (a dotenv file cannot append to an existing value, so the line holds the merged items)."""
    from advisor.specs.writing import env_items, header_lines

    lines = [f"# {line}" for line in header_lines(sel.profile)]
    for item in env_items(sel):
        if any(c in item.value for c in "\r\n\x00"):  # env_items refuses these already
            raise EmitError(f"setting {item.name}: a dotenv value cannot hold a newline or NUL")
        lines.append(f"{item.name}={item.value}")
    return "\n".join(lines) + "\n"


def parse_dotenv(text, path):
    """The ``KEY=value`` lines of a dotenv file (values literal, to the end of the line), so
    ``advisor lint --format dotenv FILE`` checks what ``render_dotenv`` wrote."""
    from advisor.specs.entry import NAME_RE, EnvEntry, unreadable

    out = []
    for no, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, eq, value = line.partition("=")
        if not eq or not NAME_RE.match(name):
            out.append(unreadable(path, no, "not a KEY=value line"))
            continue
        out.append(EnvEntry(name, value, path, no, True))
    return out


@hookimpl
def advisor_register_facts(register):
    register("example", detect_clock)


@hookimpl
def advisor_register_probes(register):
    register(TimerProbe())


@hookimpl
def advisor_register_emitters(register):
    register("dotenv", render_dotenv, parse=parse_dotenv, extension="env",
             description="KEY=value lines (docker --env-file; example plugin)")
