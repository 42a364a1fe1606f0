"""Pure rows and figures for what the CLI shows: no printing here (the CLI prints).

``evidence`` holds the evidence rows of ``advisor show``; ``tables`` the rows of ``show``,
``plugins`` and ``facts``; ``verify`` the rows of ``advisor verify``.
"""

from advisor.report.evidence import (ARTEFACT_KINDS, EVIDENCE_HEADERS, artefact_kind,
                                     artefact_summary, evidence_rows, point_median)

__all__ = ["ARTEFACT_KINDS", "EVIDENCE_HEADERS", "artefact_kind", "artefact_summary",
           "evidence_rows", "point_median"]
