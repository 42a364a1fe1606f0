"""An out-of-tree hpc-advisor plugin, complete and minimal.

It shows the three kinds of contribution a vendor plugin makes:

* a fact detector (``example``): the clock the harness times with, from ``time.get_clock_info``;
* a probe (``example-timer``): measures the cost of one ``time.perf_counter_ns()`` call through
  the shared harness and records it as evidence with an info finding (no settings: there is
  nothing to tune, and a plugin recommends only what it measured);
* an emitter (``dotenv``): ``KEY=value`` lines for ``docker run --env-file`` / systemd
  ``EnvironmentFile=``, which take values literally (no quoting), so values with a newline are
  refused.

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


def render_dotenv(profile, options) -> str:
    lines = [f"# hpc-advisor {profile.provenance.advisor_version} profile of "
             f"{profile.provenance.hostname} ({profile.fingerprint})"]
    for _res, _rec, s in profile.settings(include_defaults=options.include_defaults,
                                          plugins=options.plugins):
        value = str(int(s.value)) if isinstance(s.value, bool) else str(s.value)
        if any(c in value for c in "\r\n\x00"):
            raise EmitError(f"setting {s.name}: a dotenv value cannot hold a newline or NUL")
        lines.append(f"{s.name}={value}")
    return "\n".join(lines) + "\n"


@hookimpl
def advisor_register_facts(register):
    register("example", detect_clock)


@hookimpl
def advisor_register_probes(register):
    register(TimerProbe())


@hookimpl
def advisor_register_emitters(register):
    register("dotenv", render_dotenv, description="KEY=value lines (docker --env-file; example plugin)")
