"""Helpers for worker modules run by ``run_python`` / ``run_mpi``.

A worker computes its result and calls ``report(result)``: the result is printed as one JSON
line on stdout, by rank 0 only when MPI is in use, and flushed at once so a later crash or
timeout cannot lose it in a buffer.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Optional


def report(result: dict[str, Any], *, comm: Optional[Any] = None) -> None:
    """Print ``result`` as one JSON line on stdout (rank 0 of ``comm`` only, if given).

    Raises:
        TypeError: ``result`` is not a dict or not JSON-serialisable.
    """
    if not isinstance(result, dict):
        raise TypeError("a worker result must be a dict")
    if comm is not None and comm.Get_rank() != 0:
        return
    line = json.dumps(result, separators=(",", ":"), allow_nan=False)
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
