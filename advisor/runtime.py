"""Apply a profile's settings inside a running Python program (public API).

``configure_cupy(profile)`` installs the CuPy pool type and limit a profile recommends
(``apply_cupy_plan(plan)`` installs a plan written as literals by ``advisor emit -f cupy``); the
CuPy knowledge lives with the CuPy library record (:mod:`advisor.libraries.cupy_runtime`).
"""

from advisor.libraries.cupy_runtime import (POOLS, CupyPlan, CupyUnavailable, apply_cupy_plan,
                                            configure_cupy, cupy_plan, parse_limit,
                                            plan_from_settings)

__all__ = ["POOLS", "CupyPlan", "CupyUnavailable", "apply_cupy_plan", "configure_cupy",
           "cupy_plan", "parse_limit", "plan_from_settings"]
