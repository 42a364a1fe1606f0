"""Entry point of the host-buffer plugin (``advisor`` entry point ``host-buffer``).

The probe measures what host-buffer benchmarks and host memory pools get wrong: the zero-page
artefact of untouched sources (memcpy and OpenCL), first-touch page-fault cost with and without
huge pages (THP mode explained), glibc's memcpy cliff below its non-temporal threshold, malloc's
huge-page tunable, and NUMA first-touch placement.  See :mod:`advisor_host_buffer.measure` for the
stages and :mod:`advisor_host_buffer.recommend` for the advice rules.
"""

from __future__ import annotations

from typing import Sequence

from advisor import hookimpl
from advisor.models import Advice, Evidence, Facts
from advisor.probe import Applicability, MeasureContext, option_number, option_numbers

from . import measure
from .evidence import HEADLINE_TITLES
from . import recommend as _rec
from . import verify
from .knobs import knobs


class HostBufferProbe:
    """Probe ``host-buffer``: ``check`` is cheap (reads the glibc tunables), ``measure`` takes
    about 30-60 s on a 2-core machine (10-15 s with ``quick``), ``recommend`` is pure."""

    name = "host-buffer"
    #: --option keys (``advisor.probe.Probe``)
    option_keys = {
        "nbytes": "bytes of the single-size stages (default 128 MiB, also with --quick)",
        "sweep_mib": "the memcpy sweep's sizes in MiB, comma-separated",
        "budget_s": "this probe's own target in seconds (the run's deadline wins)",
    }
    #: fleet figure titles (``advisor.specs.headline``), beside ``headline``'s keys
    headline_titles = HEADLINE_TITLES
    description = ("host buffers: zero-page inflation, first-touch and THP cost, glibc memcpy "
                   "non-temporal threshold, NUMA first touch")

    def check_options(self, options: dict) -> None:
        """Raise ``BadInputError`` for a bad value of an ``option_keys`` key (before measuring)."""
        option_number(options, "nbytes", int, minimum=0)  # 0: the default
        option_number(options, "budget_s", float, above=0.0)
        option_numbers(options, "sweep_mib", float, above=0.0)

    def check(self, facts: Facts) -> Applicability:
        """Usable on Linux; evidence ``glibc-tunables`` (``measure.check``)."""
        return measure.check(facts)

    def measure(self, ctx: MeasureContext) -> list[Evidence]:
        """Run the stages within ``ctx.deadline`` (``measure.measure``)."""
        return measure.measure(ctx)

    def recommend(self, evidence: Sequence[Evidence], facts: Facts) -> Advice:
        """Pure: see :func:`advisor_host_buffer.recommend.recommend`."""
        return _rec.recommend(evidence, facts)

    def headline(self, evidence: Sequence[Evidence]) -> dict:
        """Fleet headline figure: :func:`advisor_host_buffer.evidence.headline`."""
        from .evidence import headline

        return headline(evidence)

    def measure_headline(self, ctx: MeasureContext, recorded: Sequence[Evidence]) -> list:
        """``advisor check``'s short measurement of the headline figure (about 1.5 s here):
        :func:`advisor_host_buffer.measure_sweep.headline_sweep`."""
        from .measure_sweep import headline_sweep

        return headline_sweep(ctx, list(recorded))

    #: ``verify`` measures ``ctx.joint`` (the whole emitted environment) when given one.
    joint_verify = True

    def verify(self, recommendation, ctx: MeasureContext):
        """``advisor verify`` hook: re-measure one recommendation (``verify.py``)."""
        return verify.verify(recommendation, ctx)

    def figures(self, evidence: Sequence[Evidence], facts: Facts) -> list:
        """``advisor report`` / ``show --plot`` hook (pure): ``figures.py``."""
        from .figures import figures

        return figures(evidence, facts)


@hookimpl
def advisor_register_probes(register):
    register(HostBufferProbe())


@hookimpl
def advisor_register_knobs(register):
    for k in knobs():
        register(k)
