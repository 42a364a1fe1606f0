"""Entry point of the mpich-cma plugin: is MPICH's CMA single-copy path usable here, and from
which message size does it pay off?

Registered as ``mpich-cma`` in the ``advisor`` entry-point group.  Hooks: one probe, the knob
records of ``advisor_mpich_cma.knobs`` and one fact detector (``xpmem_device``).  The probe's
methods delegate to the template modules:

* ``check`` / ``measure``: ``advisor_mpich_cma.measure`` (library identity, the live sibling
  ``process_vm_readv`` test, a 2-rank smoke run; then CMA on vs off at every size, paired
  through MPI_T (``paired``) or across separate launches);
* ``recommend``: ``advisor_mpich_cma.recommend.recommend`` (pure), then the ranks' placement
  findings (``advisor_mpich_cma.placement.apply``: launcher failed, not co-located, one CPU);
* ``verify``: ``advisor_mpich_cma.verify.verify``;
* ``lint``: ``advisor_mpich_cma.lint.lint``;
* ``figures``: ``advisor_mpich_cma.figures.figures`` (latency, bandwidth, regret; pure).
"""

from __future__ import annotations

import os

from advisor import hookimpl
from advisor.measure.mpi.sweep import SWEEP_OPTION_KEYS, check_sweep_options
from advisor.models import Advice, Facts
from advisor.probe import (FULL_AIM_S, Applicability, MeasureContext, option_choice,
                           option_number)

from advisor_mpich_cma import knobs
from advisor_mpich_cma import lint
from advisor_mpich_cma import measure
from advisor_mpich_cma import placement
from advisor_mpich_cma import recommend
from advisor_mpich_cma.evidence import HEADLINE_TITLES
from advisor_mpich_cma.sequential import MIN_LAUNCHES
from advisor_mpich_cma import verify


class CmaProbe:
    """The ``mpich-cma`` probe (see the module docstring)."""

    name = "mpich-cma"
    #: --option keys (``advisor.probe.Probe``); the sweep plan's own are shared
    option_keys = {
        **SWEEP_OPTION_KEYS,
        "launches": ("most launches of the paired measurement (at least 2; full 6, quick 4); "
                     "given, the full probe measures up to N within --time-budget, past "
                     f"the run's aim ({FULL_AIM_S:g} s for the whole probe)"),
        "budget_s": ("seconds the measurement may take before further launches stop (full: "
                     f"until the run's aim, {FULL_AIM_S:g} s for the whole probe; quick none; "
                     "the run's deadline wins)"),
        "rounds": "paired rounds per size and measure (full 32, quick 16)",
        "refine": "most bisection steps of the crossover per buffer kind (full 3, quick 2)",
        "later_sizes": "what launches 2, 3, ... re-measure: light, decisive or all",
        "one_state_launches": "most launches while every launch met one state of the copy path",
        "traffic": "both (one buffer reused and a buffer per message) or reused",
        "paired": "0: separate launches instead of the MPI_T paired mode",
        "switch_check": "0: do not trace the MPI_T run-time switch before trusting it",
        "emitted_check": "0: do not trace the emitted threshold's route",
    }
    #: fleet figure titles (``advisor.specs.headline``), beside ``headline``'s keys
    headline_titles = HEADLINE_TITLES
    description = "MPICH CMA (process_vm_readv single copy): usable here? from which size?"

    def check_options(self, options: dict) -> None:
        """Raise ``BadInputError`` for a bad value of an ``option_keys`` key (before measuring)."""
        check_sweep_options(options)
        option_number(options, "launches", int, minimum=MIN_LAUNCHES)
        for key in ("rounds", "one_state_launches"):
            option_number(options, key, int, minimum=1)
        option_number(options, "refine", int, minimum=0)
        option_number(options, "budget_s", float, above=0.0)
        option_choice(options, "later_sizes", ("light", "decisive", "all"))
        option_choice(options, "traffic", ("both", "reused"))
        for key in ("paired", "switch_check", "emitted_check"):
            option_choice(options, key, ("0", "1"))

    def check(self, facts: Facts) -> Applicability:
        return measure.check(facts)

    def measure(self, ctx: MeasureContext) -> list:
        return measure.measure(ctx)

    def recommend(self, evidence, facts: Facts) -> Advice:
        return placement.apply(recommend.recommend(evidence, facts), evidence)

    def headline(self, evidence) -> dict:
        """Fleet headline figures: :func:`advisor_mpich_cma.evidence.headline`."""
        from advisor_mpich_cma.evidence import headline

        return headline(evidence)

    #: ``verify`` measures ``ctx.joint`` (the whole emitted environment) when given one.
    joint_verify = True

    def verify(self, recommendation, ctx: MeasureContext):
        """``advisor verify`` hook: re-run the sweep, advised vs defaults (``verify.py``)."""
        return verify.verify(recommendation, ctx)

    def lint(self, env: dict, facts: Facts) -> list:
        """``advisor lint`` hook: CMA-specific findings for one environment (``lint.py``)."""
        return lint.lint(env, facts)

    def figures(self, evidence, facts: Facts) -> list:
        """``advisor report`` / ``show --plot`` hook (pure): ``figures.py``."""
        from advisor_mpich_cma.figures import figures

        return figures(evidence, facts)


def detect_xpmem() -> dict:
    """Fact detector: whether the XPMEM kernel device exists (``/dev/xpmem``)."""
    return {"xpmem_device": os.path.exists("/dev/xpmem")}


@hookimpl
def advisor_register_probes(register):
    register(CmaProbe())


@hookimpl
def advisor_register_knobs(register):
    for k in knobs.KNOBS:
        register(k)


@hookimpl
def advisor_register_facts(register):
    register("mpich-cma", detect_xpmem)
