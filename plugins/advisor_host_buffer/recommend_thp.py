"""The huge-page rules of the host-buffer advice (pure): what the THP mode means here
(``thp-<mode>``, Linux Documentation/admin-guide/mm/transhuge.rst, :mod:`advisor_host_buffer.thp`),
a host pool of huge-page-aligned chunks with MADV_HUGEPAGE when first touch measured faster
(``host-pool-hugepages``), and ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1`` when malloc's first
touch measured faster with it (``glibc-malloc-hugetlb``, else ``glibc-malloc-hugetlb-no-gain``).
Both recommendations only in THP madvise mode.

Evidence read: ``first-touch`` and ``malloc-hugetlb`` (:mod:`advisor_host_buffer.measure_touch`).
"""

from __future__ import annotations

from advisor.models import Evidence, Facts, Finding, Recommendation, Setting

from . import evidence
from .thp import thp_explanation, thp_mode
from .recommend_common import ci_text, tunable_setting

#: glibc.malloc.hugetlb appeared in glibc 2.35 (NEWS 2.35; manual "Memory Related Tunables").
HUGETLB_VERSIONS = ">=2.35"


def thp(ev: list[Evidence], facts: Facts, findings: list[Finding],
        recs: list[Recommendation]) -> None:
    """Append the ``thp-<mode>`` finding (with the measured first-touch cost), and in madvise
    mode the host-pool and malloc huge-page advice."""
    mode = thp_mode(facts.memory.thp_enabled)
    e = Evidence.find(ev, evidence.EV_FIRST_TOUCH)
    if mode is None and e is not None:
        mode = thp_mode(e.conditions.thp_enabled)
    text = thp_explanation(mode, facts.memory.thp_defrag)
    speed = None
    if e is not None:
        base = e.values.get("fault_s_per_gib.base")
        huge = e.values.get("fault_s_per_gib.huge")
        sp = e.values.get("huge_speedup")
        if sp is None and base and huge:
            sp = float(base) / float(huge)
        if sp is not None:
            lo, hi = e.values.get("huge_speedup.ci_low"), e.values.get("huge_speedup.ci_high")
            speed = (float(sp), lo, hi)
            text += (
                f" Measured first-touch cost: {float(base):.3f} s/GiB with base pages, "
                f"{float(huge):.3f} s/GiB with MADV_HUGEPAGE ({float(sp):.2f}x"
                f"{ci_text(lo, hi)})." if base and huge else ""
            )
    findings.append(Finding(
        id=f"thp-{mode or 'unknown'}",
        severity="info",
        message=text,
        evidence=[evidence.EV_FIRST_TOUCH] if e is not None else [],
    ))
    if mode != "madvise":
        return
    if speed is not None:
        host_pool(e, facts, speed, recs)
    malloc_hugetlb(ev, facts, findings, recs)


def host_pool(e: Evidence, facts: Facts, speed, recs: list[Recommendation]) -> None:
    """Append ``host-pool-hugepages`` when ``speed`` (huge-page first-touch speed-up, CI low,
    CI high) says huge pages help, sized by the huge page ``e`` recorded (bytes)."""
    ratio, lo, hi = speed
    helps = (lo > 1.0) if lo is not None else ratio > 1.0
    if not helps:
        return
    # THP uses the PMD size (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size, recorded by
    # measure); without it the smallest huge page size the facts list.
    huge = int(e.values.get("huge_page_bytes", 0)) or min(
        (h for h in facts.memory.huge_page_sizes_bytes if h), default=None)
    if huge is None:
        return
    recs.append(Recommendation(
        id="host-pool-hugepages",
        title=f"Host pool: {evidence.fmt_bytes(huge)}-aligned chunks with MADV_HUGEPAGE before first touch",
        settings=[
            Setting(library="host-pool", name="chunk_alignment", value=huge, type="bytes",
                    unit="bytes", kind="config"),
            Setting(library="host-pool", name="chunk_size_multiple", value=huge, type="bytes",
                    unit="bytes", kind="config"),
            Setting(library="host-pool", name="madvise", value="MADV_HUGEPAGE", type="enum",
                    kind="config"),
        ],
        rationale=(
            f"THP is in madvise mode, so only regions that ask get huge pages; first touch of "
            f"huge-page-advised memory was {ratio:.2f}x faster{ci_text(lo, hi)} here. Allocate host "
            f"pool backing blocks as multiples of {evidence.fmt_bytes(huge)}, aligned to it, and call "
            "madvise(MADV_HUGEPAGE) before the first write."
        ),
        confidence="high" if lo is not None else "medium",
        evidence=[evidence.EV_FIRST_TOUCH],
        verifiable=lo is not None,
    ))


def malloc_hugetlb(ev: list[Evidence], facts: Facts, findings: list[Finding],
                   recs: list[Recommendation]) -> None:
    """Append ``glibc-malloc-hugetlb`` when the tunable measured better (glibc >= 2.35), else
    the ``glibc-malloc-hugetlb-no-gain`` finding."""
    m = Evidence.find(ev, evidence.EV_MALLOC_HUGETLB)
    if m is None or evidence.glibc_at_least(facts, "2.35") is False:
        return
    sp = m.values.get("speedup")
    lo, hi = m.values.get("speedup.ci_low"), m.values.get("speedup.ci_high")
    verdict = m.values.get("verdict")  # harness compare verdict (CI beyond the A/A floor)
    if sp is None or not (verdict == "better" if verdict is not None
                          else (lo > 1.0) if lo is not None else float(sp) > 1.0):
        findings.append(Finding(
            id="glibc-malloc-hugetlb-no-gain", severity="info",
            message=f"GLIBC_TUNABLES=glibc.malloc.hugetlb=1 did not measurably speed up first "
                    f"touch of malloc'ed memory here ({float(sp or 0):.2f}x{ci_text(lo, hi)})",
            evidence=[evidence.EV_MALLOC_HUGETLB]))
        return
    from advisor.measure import STABLE_SHARE

    stab, rounds = m.values.get("stability"), m.values.get("rounds")
    steady = stab is None or float(stab) >= STABLE_SHARE
    recs.append(Recommendation(
        id="glibc-malloc-hugetlb",
        title="glibc malloc: madvise(MADV_HUGEPAGE) on its mmap'ed chunks",
        settings=[tunable_setting("glibc.malloc.hugetlb", "1", "0", HUGETLB_VERSIONS)],
        rationale=(
            f"THP is in madvise mode; with glibc.malloc.hugetlb=1 glibc (>= 2.35) asks for huge "
            f"pages on the memory malloc gets from mmap, and first touch of a large malloc'ed "
            f"buffer was {float(sp):.2f}x faster{ci_text(lo, hi)} here"
            + (f" (stability {float(stab):.2f}: the same verdict in that share of resamples of "
               f"the {rounds} A/B rounds of fresh processes"
               + ("" if steady else f", below {STABLE_SHARE:g}") + ")"
               if stab is not None else "") + "."
        ),
        confidence="high" if lo is not None and steady else "medium",
        evidence=[evidence.EV_MALLOC_HUGETLB],
        verifiable=True,
    ))

