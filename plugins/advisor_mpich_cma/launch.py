"""One MPI launch of the CMA worker: the environment overlays that switch MPICH's CMA path on
or off, and the planning estimate of a launch's cost (pure).

An overlay maps a variable to its value, or to None to remove it from the child's environment
(``advisor.measure.run_mpi`` applies it).
"""

from __future__ import annotations

from typing import Optional, Sequence

from advisor_mpich_cma import knobs
from advisor_mpich_cma.evidence import ON

def clear(names: Sequence[str]) -> dict[str, Optional[str]]:
    """Overlay that removes every name and alias of the knobs ``names``."""
    out: dict[str, Optional[str]] = {}
    for n in names:
        k = knobs.knob(n)
        for a in [k.name, *k.aliases]:
            out[a] = None
    return out


def config_env(flavour: Optional[str], config: str, threshold: int = 0) -> dict[str, Optional[str]]:
    """Env overlay that forces CMA on from ``threshold`` bytes (``cma-on``) or off.

    Every alias of the CMA knobs is removed first so a site setting cannot leak into the run.
    """
    if flavour == knobs.CRAY:
        env = clear([knobs.CRAY_MODE, knobs.CRAY_SIZE])
        if config == ON:
            env.update({knobs.CRAY_MODE: "CMA", knobs.CRAY_SIZE: str(threshold)})
        else:
            env[knobs.CRAY_MODE] = "NONE"
        return env
    env = clear([knobs.CMA_ENABLE, knobs.CMA_THRESHOLD])
    if config == ON:
        env.update({knobs.CMA_ENABLE: "1", knobs.CMA_THRESHOLD: str(threshold)})
    else:
        env[knobs.CMA_ENABLE] = "0"
    return env


def shown(env: dict[str, Optional[str]]) -> dict[str, str]:
    """The variables an overlay sets (what evidence conditions record)."""
    return {k: v for k, v in env.items() if v is not None}


#: Rough cost of one launch beyond the timed loops (MPICH start, mpi4py import, buffers):
#: measured here ~0.4-0.8 s; used only to plan the budget, then replaced by the measured time.
LAUNCH_OVERHEAD_S = 0.8
#: Per size and measure: calibration and warm-up on top of the timed seconds (a planning
#: factor; the worker's own loops decide the real time).
PER_SIZE_FACTOR = 2.5


def launch_estimate(sizes, target_s: float) -> float:
    """Planned seconds of one launch timing ``sizes`` for ``target_s`` each (a planning
    figure: the measured time replaces it)."""
    return LAUNCH_OVERHEAD_S + len(sizes) * 2 * target_s * PER_SIZE_FACTOR
