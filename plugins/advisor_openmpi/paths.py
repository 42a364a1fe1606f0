"""The candidate shared-memory paths of Open MPI as environment overlays (pure).

A path is a named overlay on the site's environment (``None`` removes a variable):

* ``default``: no overlay; what it selects is read from the verbose smoke run;
* ``ob1-sm-cma``: ``OMPI_MCA_pml=ob1``, ``OMPI_MCA_smsc=cma``: ob1 + the sm BTL, rendezvous
  payload pulled with a single-copy get (CMA ``process_vm_readv``); only where the build has
  smsc ``cma`` and the sibling test says CMA works;
* ``ob1-sm-copy``: ``OMPI_MCA_pml=ob1``, ``OMPI_MCA_smsc=^cma``: no single copy, rendezvous
  goes copy-in/copy-out (``btl_sm_rndv_eager_limit`` first, then ``btl_sm_max_send_size``
  fragments);
* ``ucx``: ``OMPI_MCA_pml=ucx`` with ``OMPI_MCA_pml_ucx_tls=any`` and
  ``OMPI_MCA_pml_ucx_devices=any`` (the defaults, ``rc_verbs,...`` and ``mlx*``, make the ucx PML
  decline on a node without an InfiniBand/RoCE device; measured: "support level is none");
  only where the build has pml ``ucx``.

Open MPI 4.1 (the ``vader`` BTL, no smsc framework) names single copy
``OMPI_MCA_btl_vader_single_copy_mechanism`` = ``cma`` / ``none`` instead of ``OMPI_MCA_smsc``
(ompi_info of the 4.1.8 wheel).  Every overlay clears the variables the other paths set, so a
site's own setting of one of them cannot leak into another path.
"""

from __future__ import annotations

from typing import Mapping, Optional

from advisor.knobs import version_in

from advisor_openmpi import knobs

DEFAULT, OB1_CMA, OB1_COPY, UCX = "default", "ob1-sm-cma", "ob1-sm-copy", "ucx"
#: Order of measurement and of ties in the decision (the default first).
ORDER = (DEFAULT, OB1_CMA, OB1_COPY, UCX)
#: Every variable a path overlay sets (cleared by the others).
PATH_VARS = (knobs.PML, knobs.SMSC, knobs.VADER_SINGLE_COPY, knobs.UCX_PML_TLS, knobs.UCX_PML_DEVICES)
#: What each path is, in the field's terms (for evidence and advice text).
DESCRIPTION = {
    DEFAULT: "the site's default selection",
    OB1_CMA: "ob1 + sm BTL + smsc cma (single copy for rendezvous messages)",
    OB1_COPY: "ob1 + sm BTL without single copy (copy-in/copy-out)",
    UCX: "the UCX PML with its shared-memory transports",
}


def is_41(version: Optional[str]) -> bool:
    """True for an Open MPI before 5 (vader names, no smsc framework)."""
    return bool(version) and version_in(str(version), "<5")


def single_copy_var(version: Optional[str]) -> str:
    """``OMPI_MCA_smsc`` (5.x) or ``OMPI_MCA_btl_vader_single_copy_mechanism`` (4.1)."""
    return knobs.VADER_SINGLE_COPY if is_41(version) else knobs.SMSC


def eager_var(version: Optional[str]) -> str:
    """``OMPI_MCA_btl_sm_eager_limit`` (5.x) or ``OMPI_MCA_btl_vader_eager_limit`` (4.1)."""
    return knobs.VADER_EAGER if is_41(version) else knobs.SM_EAGER


def settings_of(path: str, version: Optional[str]) -> dict[str, str]:
    """The variables (name -> value) that select ``path`` (empty for ``default``).
    Raises ``KeyError`` for an unknown path."""
    sc = single_copy_var(version)
    return {DEFAULT: {},
            OB1_CMA: {knobs.PML: "ob1", sc: "cma"},
            OB1_COPY: {knobs.PML: "ob1", sc: "none" if is_41(version) else "^cma"},
            UCX: {knobs.PML: "ucx", knobs.UCX_PML_TLS: "any", knobs.UCX_PML_DEVICES: "any"}}[path]


def overlay(path: str, version: Optional[str]) -> dict[str, Optional[str]]:
    """Env overlay of ``path``: its settings, every other ``PATH_VARS`` name removed."""
    out: dict[str, Optional[str]] = {n: None for n in PATH_VARS}
    out.update(settings_of(path, version))
    return out


def candidates(components: Mapping[str, str], cma_usable: bool, default_path: Optional[str],
               version: Optional[str]) -> tuple[list[str], dict[str, str]]:
    """The paths to measure here, and those left out with why.

    :param components: ``facts.extra["openmpi"]`` (``components_smsc`` / ``components_pml``,
        comma-joined; 4.1 has no smsc: single copy is a vader parameter there).
    :param cma_usable: the sibling ``process_vm_readv`` test succeeded.
    :param default_path: what the verbose smoke run of the default selected
        (``Selection.path()``, e.g. ``ob1+sm+smsc/cma``); a candidate that selects the same is
        not measured twice (the default stands for it).
    :return: ``(paths in ORDER, {left-out path: reason})``.
    """
    smsc = set(filter(None, str(components.get("components_smsc", "")).split(",")))
    pml = set(filter(None, str(components.get("components_pml", "")).split(",")))
    skip: dict[str, str] = {}
    if not cma_usable:
        skip[OB1_CMA] = ("CMA unusable here (sibling process_vm_readv test failed): Open MPI "
                         "will use copy-in/copy-out")
    elif not is_41(version) and "cma" not in smsc:
        skip[OB1_CMA] = "this build has no smsc cma component"
    if "ucx" not in pml:
        skip[UCX] = "this build has no ucx PML"
    same = {OB1_CMA: "ob1+sm+smsc/cma", OB1_COPY: "ob1+sm copy-in/copy-out", UCX: "ucx"}
    for p, sel in same.items():
        if p not in skip and default_path == sel:
            skip[p] = f"the default already selects it ({sel}): measured as the default"
    return [p for p in ORDER if p not in skip], skip
