"""Helpers of the mpich-cma tests: map a field case's ``facts`` table onto ``advisor.models.Facts``
and build evidence records from a case's live-probe results (values come from the case file)."""

from __future__ import annotations

import json
from typing import Any, Optional

from advisor.models import Evidence, Facts
from advisor_mpich_cma import evidence
from advisor.measure.mpi.causes import cap_sys_ptrace_from_capeff, errno_code
from support import DATA

CMA_DATA = DATA / "mpich_cma"


def _scope(v: Any) -> Optional[int]:
    if v is None or v == "absent":
        return None
    return int(v)


def facts_from_case(f: dict, **override: Any) -> Facts:
    """Case ``facts`` (descriptive names) -> ``Facts``.  ``override`` replaces case keys."""
    f = {**f, **override}
    mpi = dict(f.get("mpi") or {})
    cap = f.get("cap_sys_ptrace")
    if cap is None and f.get("cap_eff"):
        cap = cap_sys_ptrace_from_capeff(f["cap_eff"])
    security = {"ptrace_scope": _scope(f.get("yama_ptrace_scope")),
                "seccomp_mode": f.get("seccomp_mode"), "cap_sys_ptrace": cap,
                "container": f.get("container")}
    mpi_facts = {k: mpi[k] for k in ("implementation", "flavour", "version", "device")
                 if k in mpi}
    if mpi_facts.get("implementation") == "mpich" and "flavour" not in mpi_facts:
        mpi_facts["flavour"] = "upstream"
    extra = {}
    if "xpmem_device_present" in f:
        extra["mpich-cma"] = {"xpmem_device": bool(f["xpmem_device_present"])}
    kernel = {"release": f["kernel"]} if f.get("kernel") else {}
    return Facts.model_validate({"security": security, "mpi": mpi_facts, "kernel": kernel,
                                 "extra": extra})


def sibling_ev(result: str, parent: Optional[str] = None) -> Evidence:
    """A ``cma-sibling`` evidence as the live probe writes it, from a case's probe result."""
    code = errno_code(result)
    values = {"kind": "siblings", "result": "ok" if code == 0 else result,
              "errno": code if code is not None else -1}
    if parent is not None:
        values["parent_reads_child"] = parent
    return Evidence(id=evidence.SIBLING, values=values)


def load_evidence(name: str) -> list[Evidence]:
    """Recorded evidence (``tests/data/mpich_cma/<name>.json``: a list of Evidence dicts)."""
    with open(CMA_DATA / f"{name}.json") as fh:
        return [Evidence.model_validate(e) for e in json.load(fh)]


def all_settings(advice) -> list[tuple[str, Any]]:
    return [(s.name, s.value) for r in advice.recommendations for s in r.settings]


def env_lines(advice) -> list[str]:
    return [f"{s.name}={s.value}" for r in advice.recommendations for s in r.settings
            if not s.is_default]


def advice_text(advice) -> str:
    parts = []
    for f in advice.findings:
        parts += [f.message, f.remedy or ""]
    for r in advice.recommendations:
        parts += [r.title, r.rationale]
    return "\n".join(parts)
