"""Entry point of the memory-pool plugin (``advisor`` entry point ``memory-pool``).

Two probes, because host and device pools are decided separately and each has its own
applicability:

* ``memory-pool-host``: usable wherever Linux can madvise anonymous memory; measures first touch
  and pinning (registration-like) cost of 2 MiB-aligned chunks with MADV_HUGEPAGE vs base pages.
* ``memory-pool-device``: usable where a CUDA device and CuPy exist; elsewhere its status is
  ``not-applicable`` with the reason "no CUDA device", and ``recommend`` records the same as an
  info finding.  Its recommend still gives model advice where a device is known but CuPy is not.

The host's large page is the THP size from ``Facts.memory.thp_pmd_size_bytes``.
"""

from __future__ import annotations

from typing import Sequence

from advisor import hookimpl
from advisor.models import Advice, Evidence, Facts
from advisor.probe import Applicability, MeasureContext

from . import knobs
from . import lint
from . import measure
from . import recommend
from .evidence import HEADLINE_TITLES
from .workload import OPTION_KEYS, parse_options


class HostPoolProbe:
    name = "memory-pool-host"
    option_keys = OPTION_KEYS  # --option keys (advisor.probe.Probe)
    #: fleet figure titles (``advisor.specs.headline``), beside ``headline``'s keys
    headline_titles = HEADLINE_TITLES
    description = "host memory pool: large-page-multiple blocks, MADV_HUGEPAGE vs base-page first touch"

    def check_options(self, options: dict) -> None:
        """Raise ``BadInputError`` for a bad workload option (``workload.parse_options``; a
        trace file is read), before measuring."""
        parse_options(options)

    def check(self, facts: Facts) -> Applicability:
        return measure.check_host(facts)

    def measure(self, ctx: MeasureContext) -> list[Evidence]:
        return measure.measure(ctx, "host")

    def recommend(self, evidence: Sequence[Evidence], facts: Facts) -> Advice:
        return recommend.recommend_host(evidence, facts)

    def headline(self, evidence: Sequence[Evidence]) -> dict:
        """Fleet headline figures: :func:`advisor_memory_pool.evidence.headline`."""
        from .evidence import headline

        return headline(evidence)

    def lint(self, env: dict, facts: Facts) -> list:
        """``advisor lint``: the host pool's DLA-Future settings (``lint.lint_env``)."""
        return lint.lint_env(env, facts, "host")

    def figures(self, evidence: Sequence[Evidence], facts: Facts) -> list:
        """``advisor report`` / ``show --plot`` hook (pure): ``figures.py``."""
        from .figures import figures

        return figures(evidence, facts)


class DevicePoolProbe:
    name = "memory-pool-device"
    option_keys = OPTION_KEYS
    check_options = HostPoolProbe.check_options
    description = "GPU memory pool: backing blocks vs the GPU large page, grow-by, CuPy limit"

    def check(self, facts: Facts) -> Applicability:
        return measure.check_device(facts)

    def measure(self, ctx: MeasureContext) -> list[Evidence]:
        return measure.measure(ctx, "device")

    def recommend(self, evidence: Sequence[Evidence], facts: Facts) -> Advice:
        return recommend.recommend_device(evidence, facts)

    def lint(self, env: dict, facts: Facts) -> list:
        """``advisor lint``: the device pool's DLA-Future settings (``lint.lint_env``)."""
        return lint.lint_env(env, facts, "device")


@hookimpl
def advisor_register_probes(register):
    register(HostPoolProbe())
    register(DevicePoolProbe())


@hookimpl
def advisor_register_knobs(register):
    for k in knobs.knobs():
        register(k)
