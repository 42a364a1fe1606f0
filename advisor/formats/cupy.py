"""CuPy (format ``cupy``): a Python snippet that installs the profile's CuPy pool settings.

CuPy reads no environment variable that selects its pool type, and reads
``CUPY_GPU_MEMORY_LIMIT`` only at import (CuPy user guide, "Memory Management"), so the pool
settings (``pool``, ``pool_limit``: config kind) are applied from Python.  The snippet calls
``advisor.runtime.apply_cupy_plan`` with the plan (``advisor.runtime.plan_from_settings`` of
the selected settings) written as a ``CupyPlan(...)`` of literals (``repr`` of str, int, float,
None): nothing in it is built from profile text.  Run it (``exec``, ``runpy`` or paste it)
before the program's first CuPy allocation; it needs hpc-advisor importable in the program's
Python.  Write-only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.errors import EmitError
from advisor.specs.writing import header_lines, left_out_comment

if TYPE_CHECKING:  # pragma: no cover
    from advisor.specs.selection import Selection

NAME = "cupy"
DESCRIPTION = "Python snippet applying the CuPy pool settings (advisor.runtime)"
EXTENSION = "py"
KINDS = ("env", "config")
LIBRARIES = ("cupy",)


def render(sel: "Selection") -> str:
    """The snippet (see the module docstring).

    :raises EmitError: no CuPy setting selected (``Selection.nothing_to_write``); a
        pool name or limit CuPy cannot take (``plan_from_settings``), naming the setting.
    """
    from advisor.errors import BadInputError
    from advisor.runtime import plan_from_settings

    srcs = [s for s in sel.sources(KINDS) if s.setting.library in LIBRARIES]
    try:
        plan = plan_from_settings((f"{s.probe}:{s.recommendation}", s.setting) for s in srcs)
    except BadInputError as exc:
        raise EmitError(str(exc)) from None
    if plan.empty:
        raise EmitError(sel.nothing_to_write(KINDS, NAME, LIBRARIES))
    lines = [f"# {line}" for line in header_lines(sel.profile)]
    lines += left_out_comment(sel, KINDS, "#", fmt=NAME, libraries=LIBRARIES)
    srcs_text = ", ".join(f"{k!r}: {v!r}" for k, v in sorted(plan.sources.items()))
    lines += [
        "from advisor.runtime import CupyPlan, apply_cupy_plan",
        "",
        f"PLAN = CupyPlan(pool={plan.pool!r}, limit_bytes={plan.limit_bytes!r}, "
        f"limit_fraction={plan.limit_fraction!r},",
        f"                sources={{{srcs_text}}})",
        "plan, pool = apply_cupy_plan(PLAN)",
    ]
    return "\n".join(lines) + "\n"
