"""Apply a profile's settings inside a running Python program (public API).

``configure_cupy(profile)`` installs the CuPy pool type and limit a profile recommends; the
CuPy knowledge lives with the CuPy library record (:mod:`advisor.libraries.cupy_runtime`).
"""

from advisor.libraries.cupy_runtime import (POOLS, CupyPlan, CupyUnavailable, configure_cupy,
                                            cupy_plan, parse_limit)

__all__ = ["POOLS", "CupyPlan", "CupyUnavailable", "configure_cupy", "cupy_plan", "parse_limit"]
