"""Can CMA work here, from the mpich-cma probe's evidence: its sibling test (``cma-sibling``)
and smoke runs (``cma-mpi-smoke*``) handed to the shared verdict
(``advisor.measure.mpi.usability``, pure)."""

from __future__ import annotations

from typing import Iterable, Optional

from advisor.measure.mpi.usability import Usability
from advisor.measure.mpi.usability import usability as decide
from advisor.models import Evidence, Facts

from advisor_mpich_cma.evidence import SIBLING, smokes


def usability(evidence: Iterable[Evidence], facts: Facts,
              profile_allows: Optional[bool] = None) -> Usability:
    """``advisor.measure.mpi.usability.usability`` of this probe's sibling test and smoke runs
    in ``evidence`` (see there: returns ``Usability``, never raises)."""
    evidence = list(evidence)
    return decide(Evidence.find(evidence, SIBLING), smokes(evidence), facts, profile_allows)
