"""Second stage of the measurement: the eager / rendezvous limit of the path the first stage
picks (``ompi-limits``).

* ob1 paths: ``OMPI_MCA_btl_sm_eager_limit`` (4.1: ``btl_vader_eager_limit``), default 4096
  bytes (ompi_info of the 5.0.11 wheel): messages up to it go eager (copy-in/copy-out), larger
  ones rendezvous.  Variants 4x and 8x the default (16384, 32768: up to
  ``btl_sm_rndv_eager_limit``/``btl_sm_max_send_size`` 32768, beyond which a message no longer
  fits one fragment); a quick probe measures the 4x variant only.
* ucx: ``UCX_RNDV_THRESH`` (default ``auto``; UCX chose 5029 bytes for intra-node tagged sends
  here, ``ompi-selection.ucx``): variants 16384 and 65536 bytes (the quick probe: 16384).

Sizes measured: the default limit, each variant and the next power of two above the largest
(a control where all configurations send the same way).  Configuration names are
``<path>@<VAR>=<value>``; ``setting:<config>`` values hold the ``VAR=value`` pair.
"""

from __future__ import annotations

from typing import Optional

from advisor.models import Evidence
from advisor.probe import MeasureContext

from advisor_openmpi import knobs
from advisor_openmpi import paths
from advisor_openmpi.decide import decide
from advisor_openmpi.evidence import LIMITS, PATHS, SELECTION
from advisor_openmpi.sweep import run_configs

#: Multiples of the default eager limit tried (full probe; the quick probe takes the first).
EAGER_FACTORS = (4, 8)
#: UCX_RNDV_THRESH values tried, bytes (full; quick: the first).
UCX_RNDV = (16384, 65536)


def chosen_path(evidence: list[Evidence]) -> Optional[str]:
    """The path the first stage advises (``default`` when it keeps the default), or None."""
    ev = Evidence.find(evidence, PATHS)
    d = decide(ev) if ev is not None else None
    return d.advice if d is not None else None


def effective(path: str, evidence: list[Evidence]) -> str:
    """The path ``default`` stands for (``ucx`` or an ob1 path), from the verbose selection."""
    if path != paths.DEFAULT:
        return path
    sel = Evidence.find(evidence, SELECTION)
    return "ucx" if sel is not None and sel.values.get("pml") == "ucx" else paths.OB1_COPY


def variants(path: str, version: Optional[str], quick: bool) -> tuple[str, int, list[int]]:
    """``(variable, default bytes or 0 for auto, variant values in bytes)`` for ``path``."""
    if path == paths.UCX:
        return knobs.UCX_RNDV_THRESH, 0, list(UCX_RNDV[:1] if quick else UCX_RNDV)
    var = paths.eager_var(version)
    default = int(knobs.knob(var).default_for(version or "5") or 4096)
    return var, default, [default * f for f in (EAGER_FACTORS[:1] if quick else EAGER_FACTORS)]


def measure_limits(ctx: MeasureContext, evidence: list[Evidence], version: Optional[str],
                   plan: dict) -> list[Evidence]:
    """Run the limit variants of the chosen path interleaved with its default limits."""
    path = chosen_path(evidence)
    if path is None:
        return []
    eff = effective(path, evidence)
    var, default, vals = variants(eff, version, ctx.quick)
    base_env = {} if path == paths.DEFAULT else paths.overlay(path, version)
    envs = {path: dict(base_env)}
    settings = {}
    for v in vals:
        name = f"{path}@{var}={v}"
        envs[name] = {**base_env, var: str(v)}
        settings[f"setting:{name}"] = f"{var}={v}"
    top = max(vals)
    sizes = sorted({s for s in (default, *vals, 2 * top) if s > 0} | (
        {1024, 4096} if eff == paths.UCX else set()))
    repeats = max(2, plan["repeats"] - 1)

    def stability(ev: Evidence):
        return decide(ev, baseline=path)

    return [run_configs(ctx, envs, sizes, repeats, plan["target_s"],
                        ev_id=LIMITS, description=f"{var} variants of the path {path}, "
                        "interleaved across independent launches", values={
                            "path": path, "variable": var, "default_bytes": default,
                            **settings}, stable=stability,
                        max_rounds=repeats + plan.get("extra_rounds", 0))]
