"""Entry point of the memory-pool plugin (skeleton: applicability only until its issue lands)."""

from advisor import hookimpl
from advisor.models import Advice, Facts
from advisor.probe import Applicability


class _Probe:
    name = "memory-pool"
    description = "memory-pool (not implemented yet)"

    def check(self, facts: Facts) -> Applicability:
        return Applicability(usable=False, reason="not implemented yet")

    def measure(self, ctx):
        return []

    def recommend(self, evidence, facts: Facts) -> Advice:
        return Advice()


@hookimpl
def advisor_register_probes(register):
    register(_Probe())
