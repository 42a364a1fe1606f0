"""Entry point of the mpich-cma plugin: is MPICH's CMA single-copy path usable here, and from
which message size does it pay off?

Registered as ``mpich-cma`` in the ``advisor`` entry-point group.  Hooks: one probe, the knob
records of ``advisor_mpich_cma.knobs`` and one fact detector (``xpmem_device``).

Life cycle (``advisor.probe``):

* ``check``: library identity and effective defaults (``mpivars``), the live sibling
  ``process_vm_readv`` test, then a 2-rank MPI run with CMA forced on above the threshold; a
  failure is recorded as evidence (its cause is worked out by ``recommend``), never raised.
* ``measure``: CMA on vs off at every size, latency and bandwidth, switched through MPI_T in
  adjacent batches of one launch (``cma-paired``); where MPI_T cannot switch it, interleaved
  across independent launches (``cma-sweep``); one per rank pair (same / cross NUMA node when
  there are several), for base-page and (where THP is not 'never') THP-backed buffers
  (``cma-paired.thp``), the crossover then bisected between grid sizes; then ``cma-decision``,
  the minimax-regret decision's figures (over both kinds, and per kind).
* ``recommend``: ``advisor_mpich_cma.advice.recommend`` (pure).
"""

from __future__ import annotations

import json
import os
from typing import Optional, Sequence

from advisor import hookimpl
from advisor.models import Advice, Conditions, Evidence, Facts, MpiFacts
from advisor.probe import Applicability, MeasureContext

from advisor_mpich_cma import advice as A
from advisor_mpich_cma import knobs as K
from advisor_mpich_cma.causes import classify_log
from advisor_mpich_cma.identity import (cma_applicability, find_mpivars, library_defaults,
                                        parse_mpivars, run_mpivars)
from advisor_mpich_cma.worker import RANK_SECURITY_MARK

WORKER = "advisor_mpich_cma.worker"

#: Message sizes of the full sweep: powers of two from 1 KiB to 16 MiB (issue 4) plus points
#: between them near the crossovers reported for MPICH (8 KiB cell size / default threshold and
#: 16 KiB in 4.3.x; the AMD dip at 16 KiB in pmodels/mpich#7639).
FULL_SIZES = tuple(sorted({1 << k for k in range(10, 25)} | {6144, 12288, 24576}))
#: Quick sweep: a handful of sizes around the crossover and two large ones, plus 128 and
#: 256 KiB: the crossover measured on this project's 2-core AMD VM is 128 KiB (background.md §4),
#: which 64 KiB and 1 MiB alone cannot place.
QUICK_SIZES = (4096, 8192, 16384, 65536, 131072, 262144, 1 << 20)
#: Rounds of (on, off) batches per size and measure in the paired (MPI_T) mode; at most the
#: worker's MAX_ROUNDS (48, what a profile keeps per point).
FULL_ROUNDS, QUICK_ROUNDS = 32, 16
#: Independent launches per configuration (A/A repeats give the noise floor: at least 2).
FULL_REPEATS, QUICK_REPEATS = 5, 3
#: Seconds of steady-state timing per size and measure inside one launch.
FULL_TARGET_S, QUICK_TARGET_S = 0.04, 0.02
#: Message of the smoke run: well above every default threshold (16384 max, see knobs).
SMOKE_BYTES = 1 << 20
#: Timeouts (seconds) of one smoke / identity launch: a 2-rank MPICH start takes ~0.4 s here.
SMOKE_TIMEOUT_S = 60.0


# --------------------------------------------------------------------------- env overlays


def _clear(names: Sequence[str]) -> dict[str, Optional[str]]:
    out: dict[str, Optional[str]] = {}
    for n in names:
        k = K.knob(n)
        for a in [k.name, *k.aliases]:
            out[a] = None
    return out


def config_env(flavour: Optional[str], config: str, threshold: int = 0) -> dict[str, Optional[str]]:
    """Env overlay that forces CMA on from ``threshold`` bytes (``cma-on``) or off.

    Every alias of the CMA knobs is removed first so a site setting cannot leak into the run.
    """
    if flavour == K.CRAY:
        env = _clear([K.CRAY_MODE, K.CRAY_SIZE])
        if config == A.ON:
            env.update({K.CRAY_MODE: "CMA", K.CRAY_SIZE: str(threshold)})
        else:
            env[K.CRAY_MODE] = "NONE"
        return env
    env = _clear([K.CMA_ENABLE, K.CMA_THRESHOLD])
    if config == A.ON:
        env.update({K.CMA_ENABLE: "1", K.CMA_THRESHOLD: str(threshold)})
    else:
        env[K.CMA_ENABLE] = "0"
    return env


def _shown(env: dict[str, Optional[str]]) -> dict[str, str]:
    return {k: v for k, v in env.items() if v is not None}


# --------------------------------------------------------------------------- identity


def _mpi_facts(facts: Facts) -> MpiFacts:
    if facts.mpi.implementation:
        return facts.mpi
    try:  # facts detection left MPI unknown (e.g. a hand-made Facts): ask the library
        from advisor.facts.mpi import detect_mpi

        return detect_mpi()
    except Exception:  # lenient: identity stays unknown
        return facts.mpi


def library_evidence(mpi: MpiFacts) -> tuple[Evidence, Optional[dict[str, str]]]:
    """The ``cma-library`` evidence: identity and defaults read with ``mpivars``."""
    cvars = None
    err = None
    if (mpi.implementation or "") == "mpich" and mpi.flavour != K.CRAY:
        path = find_mpivars()
        if path:
            try:
                cvars = parse_mpivars(run_mpivars(path))
            except Exception as exc:  # lenient: fall back to the labelled table
                err = f"{type(exc).__name__}: {exc}"
        else:
            err = "mpivars not found next to the interpreter or on PATH"
    d = library_defaults(mpi, cvars)
    values = {"implementation": mpi.implementation, "flavour": mpi.flavour,
              "version": mpi.version, "device": mpi.device,
              "library_version": mpi.library_version,
              "cma_enable_default": d.get("cma_enable"),
              "threshold_default_bytes": d.get("threshold_bytes"),
              "cell_size_default_bytes": d.get("cell_size_bytes"),
              "mode_default": d.get("mode"), "defaults_source": d["source"],
              "mpivars_error": err}
    ev = Evidence(id=A.LIBRARY, description="MPI library identity and the effective defaults of "
                  "its CMA settings (read from the installed library where possible)",
                  values={k: v for k, v in values.items() if v is not None})
    return ev, cvars


# --------------------------------------------------------------------------- live probes


def sibling_evidence(**kw) -> Evidence:
    """Run the live sibling test (``advisor_mpich_cma.sibling``) and record it."""
    from advisor_mpich_cma.sibling import sibling_probe

    r = sibling_probe(**kw)
    reader, target = r.get("reader") or {}, r.get("target") or {}
    values = {"kind": "siblings", "result": r.get("result"),
              "errno": r.get("errno") if r.get("errno") is not None else -1,
              "verified": bool(r.get("verified", False)),
              "parent_reads_child": r.get("parent_reads_child"),
              "reader_seccomp": reader.get("seccomp"), "reader_cap_eff": reader.get("cap_eff"),
              "reader_user_ns": reader.get("user_ns"), "target_user_ns": target.get("user_ns"),
              "reader_ppid": reader.get("ppid"), "target_ppid": target.get("ppid"),
              "error": r.get("error")}
    return Evidence(id=A.SIBLING, description="two sibling processes: one reads the other's "
                    "buffer with process_vm_readv (what MPI ranks do)",
                    values={k: v for k, v in values.items() if v is not None})


def _rank_security(stderr: str) -> list[dict]:
    out = []
    for line in (stderr or "").splitlines():
        i = line.find(RANK_SECURITY_MARK)
        if i >= 0:
            try:
                out.append(json.loads(line[i + len(RANK_SECURITY_MARK):]))
            except ValueError:
                pass
    return out


def smoke_evidence(flavour: Optional[str], threshold: int, *, launcher=None,
                   timeout_s: float = SMOKE_TIMEOUT_S, ev_id: str = A.SMOKE) -> Evidence:
    """A 2-rank run with CMA forced on from ``threshold`` and a message above it.

    Never raises for a failed job: the failure (errno from the ranks' output, their security
    state) is the evidence.
    """
    from advisor.measure import LaunchError, run_mpi

    env = config_env(flavour, A.ON, threshold)
    nbytes = max(SMOKE_BYTES, 4 * threshold)
    values: dict = {"message_bytes": nbytes, "threshold_bytes": threshold}
    try:
        res = run_mpi(WORKER, ["smoke", "--bytes", str(nbytes)], env=env, timeout_s=timeout_s,
                      launcher=launcher)
        values.update(ok=bool(res.get("ok")), seconds=float(res.get("seconds", 0.0)))
        if not res.get("ok"):
            values["error"] = "message content differs after the exchange"
    except LaunchError as exc:
        err = exc.stderr or str(exc)
        code = classify_log(err)
        ranks = _rank_security(err)
        values.update(ok=False, errno=code if code is not None else -1,
                      error=_first_error(err) if code is not None else str(exc)[:500],
                      timed_out=bool(exc.timed_out))
        if code is None:  # no CMA error in the output: the job itself did not run
            values["launch_failed"] = True
        if ranks:
            values["rank_seccomp"] = max(int(r.get("seccomp") or 0) for r in ranks)
            values["rank_user_ns_distinct"] = len({r.get("user_ns") for r in ranks}) > 1
            values["rank_cap_eff"] = ranks[0].get("cap_eff") or ""
    return Evidence(id=ev_id, description="2-rank MPI run with CMA forced on above the "
                    "threshold (must complete)",
                    conditions=Conditions(env=_shown(env), launcher=list(launcher) if launcher
                                          else None),
                    values={k: v for k, v in values.items() if v is not None})


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "process_vm" in line or "Fatal error" in line or "Abort" in line:
            return line.strip()[:300]
    return text.strip()[-300:]


# --------------------------------------------------------------------------- the probe


class CmaProbe:
    """The ``mpich-cma`` probe (see the module docstring)."""

    name = "mpich-cma"
    description = "MPICH CMA (process_vm_readv single copy): usable here? from which size?"

    def check(self, facts: Facts) -> Applicability:
        mpi = _mpi_facts(facts)
        lib_ev, cvars = library_evidence(mpi)
        evidence = [lib_ev]
        evidence.append(sibling_evidence())
        applicable, why = cma_applicability(mpi, cvars)
        if applicable and evidence[-1].values.get("result") == "ok":
            from advisor.measure import mpi_launch_available

            ok, launch = mpi_launch_available()
            if ok:
                thr = int(lib_ev.values.get("threshold_default_bytes") or 0)
                evidence.append(smoke_evidence(mpi.flavour, thr))
            else:
                why += f"; no 2-rank MPI run possible ({launch})"
        use = A.usability(evidence, facts)
        smoke = [e for e in evidence if e.id == A.SMOKE]
        if smoke and smoke[0].values.get("launch_failed"):
            return Applicability(usable=False, evidence=evidence, reason=(
                "the 2-rank MPI run could not be done (not a CMA failure): "
                + str(smoke[0].values.get("error", ""))))
        if not applicable:
            return Applicability(usable=False, reason=why, evidence=evidence)
        return Applicability(usable=use.usable, reason=use.reason if not use.usable else why,
                             evidence=evidence)

    def measure(self, ctx: MeasureContext) -> list[Evidence]:
        from advisor_mpich_cma.sweep import run_sweeps

        return run_sweeps(ctx, _mpi_facts(ctx.facts))

    def recommend(self, evidence, facts: Facts) -> Advice:
        return A.recommend(evidence, facts)

    #: ``verify`` measures ``ctx.joint`` (the whole emitted environment) when given one.
    joint_verify = True

    def verify(self, recommendation, ctx: MeasureContext):
        """``advisor verify`` hook: re-run the sweep, advised vs defaults (``verify.py``)."""
        from advisor_mpich_cma.verify import verify

        return verify(recommendation, ctx)

    def lint(self, env: dict, facts: Facts) -> list:
        """``advisor lint`` hook: CMA-specific findings for one environment.

        Pure checks (``advice.lint_env`` without the generic type/family checks the lint engine
        already does), plus, only when ``env`` turns CMA on explicitly, the live sibling test
        (~0.3 s): an enable on a machine where CMA fails is an error.
        """
        found = A.lint_env(env, facts, generic=False)
        assignment = A.explicit_cma_enable(env)
        if assignment:
            f = A.blocked_enable_finding(assignment, sibling_evidence(), facts)
            if f is not None:
                found.append(f)
        return found


def detect_xpmem() -> dict:
    """Fact detector: whether the XPMEM kernel device exists (``/dev/xpmem``)."""
    return {"xpmem_device": os.path.exists("/dev/xpmem")}


@hookimpl
def advisor_register_probes(register):
    register(CmaProbe())


@hookimpl
def advisor_register_knobs(register):
    for k in K.KNOBS:
        register(k)


@hookimpl
def advisor_register_facts(register):
    register("mpich-cma", detect_xpmem)
