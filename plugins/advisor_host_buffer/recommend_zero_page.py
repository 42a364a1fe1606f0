"""The zero-page rules of the host-buffer advice (pure): a copy or host-to-device transfer from
an untouched buffer reads the kernel's shared zero page, so its "bandwidth" overstates memory
(findings ``zero-page-inflation*``, ``zero-page-no-inflation*``,
``zero-page-untouched-only*``), and the transfer bandwidths from initialised host memory
(``opencl-transfer-bandwidth``, ``cuda-transfer-bandwidth``).

Evidence read: ``zero-page-memcpy``, ``zero-page-opencl``, ``zero-page-cuda``
(:mod:`advisor_host_buffer.measure_zero_page`); the inflation is judged by
:mod:`advisor_host_buffer.zero_page`.
"""

from __future__ import annotations

from advisor.models import Evidence, Finding

from . import evidence
from .zero_page import untouched_only, zero_page_inflation
from .recommend_common import PREFAULT_REMEDY, ci_text


def zero_page(ev: list[Evidence], findings: list[Finding]) -> None:
    """Append to ``findings`` the zero-page findings of each copy and transfer record in ``ev``,
    then the transfer bandwidths."""
    for ev_id, what, suffix in ((evidence.EV_ZERO_MEMCPY, "memcpy", ""),
                                (evidence.EV_ZERO_OPENCL, "OpenCL host-to-device", "-opencl"),
                                (evidence.EV_ZERO_CUDA, "CUDA host-to-device", "-cuda")):
        e = Evidence.find(ev, ev_id)
        if e is None:
            continue
        inf = zero_page_inflation(e, None if ev_id == evidence.EV_ZERO_MEMCPY else "h2d")
        if inf is None:
            only = untouched_only(e)
            if only:
                findings.append(Finding(
                    id=f"zero-page-untouched-only{suffix}",
                    severity="warning",
                    message=(f"{what} was measured only from untouched host buffers "
                             f"({', '.join(only)}): their pages map the shared zero page, so the "
                             "figures are zero-page artefacts, not bandwidths, and no initialised "
                             "figure exists to compare them with"),
                    remedy=PREFAULT_REMEDY,
                    evidence=[ev_id],
                ))
            continue
        if inf.significant():
            findings.append(Finding(
                id=f"zero-page-inflation{suffix}",
                severity="warning",
                message=(
                    f"{what} from an untouched host buffer reads {inf.ratio:.2f}x faster"
                    f"{ci_text(inf.ci_low, inf.ci_high)} than from a random-filled one "
                    f"({evidence.fmt_bw(inf.touched_bps)}): untouched "
                    "pages map the shared zero page, so benchmarks that skip initialisation "
                    "overstate bandwidth; the untouched figure is a zero-page artefact, stored "
                    "with its label and no bandwidth"
                ),
                remedy=PREFAULT_REMEDY,
                evidence=[ev_id],
            ))
        else:
            findings.append(Finding(
                id=f"zero-page-no-inflation{suffix}",
                severity="info",
                message=(
                    f"{what}: untouched vs random-filled source {inf.ratio:.2f}x"
                    f"{ci_text(inf.ci_low, inf.ci_high)}: no measurable zero-page inflation here"
                ),
                evidence=[ev_id],
            ))
    for ev_id, api in ((evidence.EV_ZERO_OPENCL, "opencl"), (evidence.EV_ZERO_CUDA, "cuda")):
        transfers(ev, ev_id, api, findings)


def transfers(ev: list[Evidence], ev_id: str, api: str, findings: list[Finding]) -> None:
    """Append the ``<api>-transfer-bandwidth`` finding (bytes/s of initialised sources, artefacts
    named without a figure) of record ``ev_id`` when it holds any."""
    e = Evidence.find(ev, ev_id)
    if e is not None:
        parts = []
        for direction in ("h2d", "d2h"):
            s = (e).series_named(direction)
            if s is None:
                continue
            for p in s.points:
                if p.label == evidence.UNTOUCHED:
                    continue
                if p.artefact:  # never shown as a bandwidth: only its label
                    parts.append(f"{direction} {p.label}: artefact, not a bandwidth")
                    continue
                m = evidence.point_median(p)
                if m is not None:
                    parts.append(f"{direction} {p.label} {evidence.fmt_bw(m)}")
        if parts:
            findings.append(Finding(
                id=f"{api}-transfer-bandwidth",
                severity="info",
                message=f"{'OpenCL' if api == 'opencl' else 'CUDA'} transfers from initialised "
                        "host memory: " + "; ".join(parts),
                evidence=[ev_id],
            ))

