"""What the openmpi probe runs through the harness: ``check`` (identity, the sibling CMA test,
verbose smoke runs) and ``measure`` (the candidate paths interleaved across launches).

* ``check``: usable only when mpi4py resolves to Open MPI (``facts.mpi.implementation``) and the
  launcher is Open MPI's (``launcher_family`` ``orte``/``prrte``; an unknown family, e.g. a
  site's ``srun`` in ``ADVISOR_LAUNCHER``, is accepted and noted).  Then the sibling
  ``process_vm_readv`` test (reused from ``advisor.measure.mpi.sibling``), and a 2-rank smoke run
  (the shared worker's ``smoke``) of the default at verbose level whose parsed selection (``advisor_openmpi.selection``) says
  which path carried the messages; with a ucx PML built, the same for the ucx path with
  ``UCX_PROTO_INFO=y`` (UCX's protocol per size range).  A failure is evidence, never raised;
  a launch that cannot start makes ``check`` return ``failed``.
* ``measure``: the candidate paths (``advisor_openmpi.paths.candidates``) interleaved across
  independent launches (``advisor.measure.interleave``: A B C A B C ..., so every path gets
  A/A repeats for its noise floor), ping-pong latency and osu_bw-style bandwidth per size
  (the shared worker's ``sweep``, ``advisor.measure.mpi.rank``).  Evidence ids:
  ``advisor_openmpi.evidence``.
"""

from __future__ import annotations

import sys
from typing import Mapping, Optional

from advisor.facts.mpi import mpi_facts
from advisor.libraries.openmpi import ORTE, PRRTE
from advisor.measure.mpi import RANK
from advisor.measure.mpi.sweep import plan as sweep_plan
from advisor.measure.mpi.usability import sibling_evidence
from advisor.models import Conditions, Evidence, Facts
from advisor.probe import Applicability, MeasureContext

from advisor_openmpi import paths
from advisor_openmpi.evidence import (LIBRARY, PATHS, SELECTION, SELECTION_UCX, SIBLING,
                                      cma_usable)
from advisor_openmpi.selection import parse_verbose
from advisor_openmpi.sweep import root_env, run_configs

#: Quick sweep: small (eager), around the sm eager limit (4096) and the rendezvous first
#: fragment / fragment size (32768), and large messages where single copy matters
#: (btl_sm_memcpy_limit 524288; ompi_info of the 5.0.11 wheel).
QUICK_SIZES = (1024, 4096, 16384, 65536, 262144, 1 << 20)
#: Full sweep: powers of two from 256 bytes to 4 MiB.
FULL_SIZES = tuple(1 << k for k in range(8, 23))
#: Independent launches per path (A/A repeats give the noise floor: at least 2).
QUICK_REPEATS, FULL_REPEATS = 3, 5
#: Most rounds added after the planned ones while the decision's stability is below
#: ``advisor.measure.STABLE_SHARE`` (issue 25 item 1; a cap on cost: a round launches every
#: candidate path once, ~1.5 s each here).
QUICK_EXTRA_ROUNDS, FULL_EXTRA_ROUNDS = 3, 4
#: Seconds of steady-state timing per size and measure inside one launch.
QUICK_TARGET_S, FULL_TARGET_S = 0.01, 0.03
#: Sizes of the verbose smoke run: one eager, one rendezvous, one large message (bytes).
SMOKE_SIZES = (1024, 65536, 1 << 20)
#: Seconds allowed for one smoke launch (a 2-rank Open MPI 5 start takes ~1.2 s here).
SMOKE_TIMEOUT_S = 60.0
#: Open MPI's verbose variables that print the PML, BTL, smsc and UCX-PML selection (ompi_info
#: help of pml_base_verbose / btl_base_verbose / smsc_base_verbose / pml_ucx_verbose: 0..100).
VERBOSE = {"OMPI_MCA_pml_base_verbose": "10", "OMPI_MCA_btl_base_verbose": "10",
           "OMPI_MCA_smsc_base_verbose": "10", "OMPI_MCA_pml_ucx_verbose": "10"}



def _extra(facts: Facts) -> dict:
    got = dict(facts.extra.get("openmpi", {}) or {})
    if not got:
        from advisor_openmpi.identity import detect

        got = detect()
    return got


def library_evidence(facts: Facts, launcher: Optional[list[str]]) -> Evidence:
    """``ompi-library``: identity, components, launcher and its family."""
    from advisor.measure.launch import launcher_family

    mpi = mpi_facts(facts)
    x = _extra(facts)
    values = {"implementation": mpi.implementation, "version": mpi.version,
              "library_version": (mpi.library_version or "").strip("\x00 ") or None,
              "launcher": " ".join(launcher or []),
              "launcher_family": launcher_family(launcher[0]) if launcher else None,
              "run_as_root": bool(root_env())}
    for k in ("ompi_version", "ucx_version", "components_pml", "components_btl",
              "components_smsc", "ompi_info"):
        if x.get(k) is not None:
            values[k] = x[k]
    return Evidence(id=LIBRARY, description="Open MPI identity (mpi4py, ompi_info), built "
                    "components and the launcher", values={k: v for k, v in values.items()
                                                           if v is not None})


def selection_evidence(overlay: Mapping[str, Optional[str]], ev_id: str, *,
                       launcher: Optional[list[str]] = None,
                       timeout_s: float = SMOKE_TIMEOUT_S) -> Evidence:
    """A 2-rank smoke run at verbose level with ``overlay``; its parsed selection.

    Never raises: a failed launch is recorded (``ok`` False, ``launch_failed`` True, ``error``).
    """
    from advisor.measure import LaunchError, resolve_launcher, run_command
    from advisor.measure.launch import parse_json_result

    env = {**overlay, **VERBOSE, **root_env()}
    if ev_id == SELECTION_UCX:
        env["UCX_PROTO_INFO"] = "y"
    argv = resolve_launcher(launcher) or []
    values: dict = {"message_bytes": ",".join(map(str, SMOKE_SIZES))}
    if not argv:
        values.update(ok=False, launch_failed=True, error="no MPI launcher found")
    else:
        full = [*argv, sys.executable, "-m", RANK, "smoke", "--bytes",
                ",".join(map(str, SMOKE_SIZES))]
        try:
            cp = run_command(full, env=env, timeout_s=timeout_s)
            res = parse_json_result(cp.stdout) or {}
            values.update(parse_verbose(cp.stdout + "\n" + cp.stderr).values())
            values["ok"] = bool(cp.returncode == 0 and res.get("ok"))
            if cp.returncode != 0 or not res:
                values.update(launch_failed=not res, error=(cp.stderr.strip()[-400:]
                                                            or f"exit {cp.returncode}"))
        except LaunchError as exc:
            values.update(ok=False, launch_failed=True, error=str(exc)[:400],
                          timed_out=bool(exc.timed_out))
    return Evidence(id=ev_id, description="2-rank run at Open MPI's verbose level: which PML, "
                    "BTL and single-copy (smsc) component carried the messages",
                    conditions=Conditions(env={k: ("" if v is None else str(v))
                                               for k, v in env.items()},
                                          launcher=argv or None),
                    values={k: v for k, v in values.items() if v is not None})


def check(facts: Facts) -> Applicability:
    """The probe's ``check`` (see the module docstring)."""
    from advisor.measure import mpi_launch_available, resolve_launcher
    from advisor.measure.launch import launcher_family

    mpi = mpi_facts(facts)
    if (mpi.implementation or "") != "openmpi":
        return Applicability(usable=False, reason=(
            f"mpi4py resolves to {mpi.implementation or 'no MPI'} {mpi.version or ''}, "
            "not Open MPI").replace("  ", " "))
    ok, why = mpi_launch_available()
    if not ok:
        return Applicability(usable=False, reason=f"no 2-rank MPI run possible ({why})")
    argv = resolve_launcher() or []
    family = launcher_family(argv[0]) if argv else None
    if family is not None and family not in (ORTE, PRRTE):
        return Applicability(usable=False, reason=(
            f"the launcher {argv[0]} is not Open MPI's ({family}): mpi4py's Open MPI cannot "
            "be started with it"))
    evidence = [library_evidence(facts, argv), sibling_evidence(SIBLING)]
    sel = selection_evidence({}, SELECTION)
    evidence.append(sel)
    if sel.values.get("launch_failed"):
        return Applicability(usable=False, failed=True, evidence=evidence, reason=(
            "launcher failed: the 2-rank Open MPI run could not be started: "
            + str(sel.values.get("error", ""))[:300]))
    if "ucx" in str(evidence[0].values.get("components_pml", "")).split(","):
        evidence.append(selection_evidence(paths.overlay(paths.UCX, mpi.version), SELECTION_UCX))
    reason = f"Open MPI {mpi.version}: default path {sel.values.get('path')}"
    if cma_usable(evidence) is False:
        reason += "; CMA unusable: Open MPI will use copy-in/copy-out"
    return Applicability(usable=True, reason=reason, evidence=evidence)


def plan(ctx: MeasureContext) -> dict:
    """Sizes (bytes), repeats, per-size target seconds (``advisor.measure.mpi.sweep.plan``) and
    the most extra rounds while the decision is unstable (``--option
    sizes=...,repeats=,target_s=,extra_rounds=`` override)."""
    out = sweep_plan(ctx, quick=(QUICK_SIZES, QUICK_REPEATS, QUICK_TARGET_S),
                     full=(FULL_SIZES, FULL_REPEATS, FULL_TARGET_S))
    extra = QUICK_EXTRA_ROUNDS if ctx.quick else FULL_EXTRA_ROUNDS
    if "extra_rounds" in ctx.options:
        extra = max(0, int(ctx.options["extra_rounds"]))
    return {**out, "extra_rounds": extra}


def measure(ctx: MeasureContext) -> list[Evidence]:
    """The probe's ``measure``: the candidate paths interleaved (``ompi-paths``), then the
    limit variants of the path the decision picks (``advisor_openmpi.limits``)."""
    prior = list(ctx.applicability.evidence) if ctx.applicability else []
    mpi = mpi_facts(ctx.facts)
    sel = Evidence.find(prior, SELECTION)
    default_path = sel.values.get("path") if sel else None
    usable = cma_usable(prior)
    todo, skipped = paths.candidates(_extra(ctx.facts), usable is not False, default_path,
                                     mpi.version)
    p = plan(ctx)
    envs = {c: ({} if c == paths.DEFAULT else paths.overlay(c, mpi.version)) for c in todo}
    values = {f"skipped:{k}": v for k, v in skipped.items()}
    values["default_path"] = str(default_path)
    def stability(ev: Evidence):
        from advisor_openmpi.decide import decide

        return decide(ev)

    out = [run_configs(ctx, envs, p["sizes"], p["repeats"], p["target_s"], ev_id=PATHS,
                       description="candidate Open MPI shared-memory paths, interleaved "
                       "across independent launches: one-way ping-pong latency and osu_bw-"
                       "style bandwidth", values=values,
                       max_extra_rounds=0, stable=stability,
                       max_rounds=p["repeats"] + p["extra_rounds"])]
    if ctx.options.get("limits", "1") != "0" and ctx.remaining_s() > 10:
        from advisor_openmpi.limits import measure_limits

        out += measure_limits(ctx, prior + out, mpi.version, p)
    return out
