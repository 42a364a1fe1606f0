"""Entry point of the openmpi plugin: which shared-memory path carries Open MPI's intra-node
messages here, does single copy (CMA) work, and which path and limits should a site choose?

Registered as ``openmpi`` in the ``advisor`` entry-point group, the same way a vendor's plugin
is; nothing in the core names it.  Hooks:

* one probe (``openmpi``) whose methods delegate to the template modules: ``check`` /
  ``measure`` (``advisor_openmpi.measure``), the pure ``recommend``
  (``advisor_openmpi.recommend``), ``verify`` (``advisor_openmpi.verify``), ``lint``
  (``advisor_openmpi.lint``), the fleet ``headline`` (``advisor_openmpi.evidence``) and the
  report's ``figures`` (``advisor_openmpi.figures``);
* the knob records of ``advisor_openmpi.knobs`` (the ``OMPI_MCA_*`` and ``UCX_*`` names the
  advice may set);
* the UCX library record (``advisor.libraries.ucx``; Open MPI's own record is a built-in core
  record), registered here because this plugin is what drives UCX;
* the ``mca-params`` output format (``advisor_openmpi.mca_params``): Open MPI's own parameter
  file;
* one fact detector (``advisor_openmpi.identity.detect``): the installed build's components.
"""

from __future__ import annotations

from advisor import hookimpl
from advisor.measure.mpi.sweep import SWEEP_OPTION_KEYS, check_sweep_options
from advisor.models import Advice, Facts
from advisor.probe import Applicability, MeasureContext, option_choice, option_number

from advisor_openmpi import knobs
from advisor_openmpi import lint
from advisor_openmpi import mca_params
from advisor_openmpi import measure
from advisor_openmpi import recommend
from advisor_openmpi import verify
from advisor_openmpi.evidence import HEADLINE_TITLES

NAME = "openmpi"


class OpenMpiProbe:
    """The ``openmpi`` probe (see the module docstring)."""

    name = NAME
    #: --option keys (``advisor.probe.Probe``); the sweep plan's own are shared
    option_keys = {
        **SWEEP_OPTION_KEYS,
        "extra_rounds": "most extra interleave rounds while the path decision is unstable",
        "limits": "0: skip the eager/single-copy limits sweep",
    }
    #: fleet figure titles (``advisor.specs.headline``), beside ``headline``'s keys
    headline_titles = HEADLINE_TITLES
    description = ("Open MPI shared memory: which path (ob1+sm+smsc, UCX) carries messages, "
                   "is CMA single copy usable, which limits win")

    def check_options(self, options: dict) -> None:
        """Raise ``BadInputError`` for a bad value of an ``option_keys`` key (before measuring)."""
        check_sweep_options(options)
        option_number(options, "extra_rounds", int, minimum=0)
        option_choice(options, "limits", ("0", "1"))

    def check(self, facts: Facts) -> Applicability:
        return measure.check(facts)

    def measure(self, ctx: MeasureContext) -> list:
        return measure.measure(ctx)

    def recommend(self, evidence, facts: Facts) -> Advice:
        return recommend.recommend(evidence, facts)

    def headline(self, evidence) -> dict:
        """Fleet headline figures: :func:`advisor_openmpi.evidence.headline`."""
        from advisor_openmpi.evidence import headline

        return headline(evidence)

    def figures(self, evidence, facts: Facts) -> list:
        """Report figures (pure): :func:`advisor_openmpi.figures.figures`."""
        from advisor_openmpi.figures import figures

        return figures(evidence, facts)

    #: ``verify`` measures ``ctx.joint`` (the whole emitted environment) when given one.
    joint_verify = True

    def verify(self, recommendation, ctx: MeasureContext):
        """``advisor verify`` hook: re-measure advised vs defaults (``verify.py``)."""
        return verify.verify(recommendation, ctx)

    def lint(self, env: dict, facts: Facts) -> list:
        """``advisor lint`` hook: Open MPI findings for one environment (``lint.py``)."""
        return lint.lint(env, facts)


@hookimpl
def advisor_register_probes(register):
    register(OpenMpiProbe())


@hookimpl
def advisor_register_knobs(register):
    for k in knobs.KNOBS:
        register(k)


@hookimpl
def advisor_register_libraries(register):
    from advisor.libraries import ucx

    register(ucx.record())


@hookimpl
def advisor_register_emitters(register):
    register(mca_params.NAME, mca_params.render, description=mca_params.DESCRIPTION,
             extension=mca_params.EXTENSION, kinds=("env",), parse=mca_params.parse)


@hookimpl
def advisor_register_facts(register):
    from advisor_openmpi.identity import detect

    register(NAME, detect)
