"""Evidence of the mpich-cma probe: its ids and the typed readers of its records (pure).

Evidence read (ids and keys are this plugin's own, written by ``advisor_mpich_cma.measure`` and ``.paired``):

* ``cma-sibling``: live sibling ``process_vm_readv`` test; values ``result`` ("ok", "EPERM",
  ...), ``errno``, ``parent_reads_child``, ``reader_seccomp``, ``reader_cap_eff``,
  ``reader_user_ns``, ``target_user_ns``.
* ``cma-library``: identity and effective defaults; values ``implementation``, ``flavour``,
  ``version``, ``device``, ``cma_enable_default``, ``threshold_default_bytes``,
  ``defaults_source``, ``mode_default`` (Cray).
* ``cma-mpi-smoke``: a 2-rank run with CMA forced on; values ``ok``, ``errno``, ``error``,
  ``rank_seccomp``, ``rank_user_ns_distinct``.
* ``cma-paired`` (and ``cma-paired.<pair>``): CMA on vs off switched through MPI_T inside each
  of at least two launches (worker ``paired`` mode); series ``latency:<config>`` /
  ``bandwidth:<config>`` with one point per size and launch (label ``launch<i>``) whose samples
  are one value per round, index-aligned between the configs; values ``paired`` True,
  ``rounds`` (per launch), ``launches``, ``stopped``, ``stability_by_launch``,
  ``buffer_pages`` ("base": 4 KiB pages, one reused buffer), ``state.*`` (the
  fast/slow machine state, ``advisor_mpich_cma.states``: a condition, reported as the info
  finding ``cma-machine-state``), ``refine.steps`` / ``refine.sizes`` (bisected sizes, bytes).
  When present it decides the threshold by minimax regret (``advisor_mpich_cma.minimax``);
  the separate-launch sweep is then not used.
* ``cma-paired.thp`` (and ``cma-paired.thp.<pair>``): the same with THP-backed buffers
  (``buffer_pages`` "thp", ``thp_backed_bytes_min_rank``: huge-page bytes the kernel gave).
  Decided together with the base-page evidence (``advice.minimax_advice`` explains why).
* ``cma-paired.msgbuf`` (and ``.msgbuf.<pair>``): base pages with a buffer per message of a
  window (``buffer_pages`` "msgbuf"), decided together with the other kinds.
* ``cma-switch-check``: the MPI_T switch checked against fresh launches at one size
  (``advisor_mpich_cma.trust``); when ``trusted`` is False the paired evidence is not kept and
  the sweep below decides.
* ``cma-sweep`` (and ``cma-sweep.<pair>`` for NUMA pairs): series ``latency:<config>`` (unit s,
  one-way ping-pong time) and ``bandwidth:<config>`` (unit bytes/s, osu_bw-style window) with
  x = message bytes and one point per independent launch (label ``run<i>``); configs
  ``cma-on`` (forced at every size) and ``cma-off``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from advisor.models import Evidence, Facts

from advisor_mpich_cma import knobs

SIBLING = "cma-sibling"
LIBRARY = "cma-library"
SMOKE = "cma-mpi-smoke"
SWEEP = "cma-sweep"
PAIRED = "cma-paired"
DECISION = "cma-decision"
#: Configurations (series name suffixes) and measures (series name prefixes).
ON, OFF = "cma-on", "cma-off"
LAT, BW = "latency", "bandwidth"


#: Human names of the fleet headline figures (``advisor.specs.headline``: a probe's
#: ``headline_titles``), keyed as :func:`headline` returns them.
HEADLINE_TITLES = {
    "cma_on_bandwidth_largest_bytes_per_s":
        "MPICH bandwidth at the largest message, CMA on (single copy)",
    "cma_off_bandwidth_largest_bytes_per_s":
        "MPICH bandwidth at the largest message, CMA off (two copies)"}


def headline(evidence: Iterable[Evidence]) -> dict[str, float]:
    """Fleet headline figures (``advisor.specs.headline``): the single-copy (CMA on) and the
    two-copy (CMA off) bandwidth at the largest message size measured, bytes/s, from the
    same-node paired measurement when present, else the sweep (base pages, first pair only)."""
    from advisor.specs.headline import median_at_largest_x

    evs = list(evidence)
    ev = Evidence.find(evs, PAIRED) or Evidence.find(evs, SWEEP)
    if ev is None:
        return {}
    got = {f"cma_{cfg.split('-')[1]}_bandwidth_largest_bytes_per_s":
           median_at_largest_x(ev.series_named(f"{BW}:{cfg}")) for cfg in (ON, OFF)}
    return {k: v for k, v in got.items() if v is not None}


def sweeps(evidence: Iterable[Evidence]) -> list[Evidence]:
    """The separate-launch sweeps: ``cma-sweep`` and ``cma-sweep.<pair>``."""
    return Evidence.family(evidence, SWEEP)


def paired(evidence: Iterable[Evidence]) -> list[Evidence]:
    """The MPI_T paired measurements: ``cma-paired`` and ``cma-paired.<kind/pair>``."""
    return Evidence.family(evidence, PAIRED)


def smokes(evidence: Iterable[Evidence]) -> list[Evidence]:
    """The MPI smoke runs: ``cma-mpi-smoke`` and ``cma-mpi-smoke.launcher``."""
    return Evidence.family(evidence, SMOKE)


@dataclass(frozen=True)
class Library:
    implementation: Optional[str]
    flavour: Optional[str]
    version: Optional[str]
    cma_enable_default: Optional[int]
    threshold_default: Optional[int]
    defaults_source: Optional[str]
    mode_default: Optional[str] = None

    @property
    def cray(self) -> bool:
        return self.flavour == knobs.CRAY

    @property
    def mpich(self) -> bool:
        return (self.implementation or "").lower() == "mpich"

    @property
    def upstream_mpich(self) -> bool:
        return self.mpich and not self.cray


def library_of(evidence: Iterable[Evidence], facts: Facts) -> Library:
    """Library identity and defaults: the ``cma-library`` evidence, else ``facts.mpi`` with the
    knob table as labelled fallback."""
    ev = Evidence.find(evidence, LIBRARY)
    v = dict(ev.values) if ev else {}
    impl = v.get("implementation") or facts.mpi.implementation
    flavour = v.get("flavour") or facts.mpi.flavour or ("upstream" if impl == "mpich" else None)
    version = v.get("version") or facts.mpi.version
    src = v.get("defaults_source")
    enable = v.get("cma_enable_default")
    thr = v.get("threshold_default_bytes")
    if src is None and impl == "mpich":
        src = "built-in table (fallback: library not queried)"
        if flavour == knobs.CRAY:
            thr = knobs.knob(knobs.CRAY_SIZE).default_for(version)
        else:
            enable = knobs.knob(knobs.CMA_ENABLE).default_for(version)
            thr = knobs.knob(knobs.CMA_THRESHOLD).default_for(version)
    mode = v.get("mode_default") or (knobs.knob(knobs.CRAY_MODE).default_for(version)
                                     if flavour == knobs.CRAY else None)
    return Library(impl, flavour, version, _int(enable), _int(thr), src, mode)


def sane_library(lib: Library, facts: Facts) -> tuple[Library, Optional[str]]:
    """``(lib, None)`` when its threshold default is plausible; else ``lib`` with the knob
    table's default in its place (source labelled) and why the reported one was not used: a
    threshold the library reported (``mpivars``) below a page or above the memory
    (``advisor.measure.implausible_threshold``) is not a threshold this machine can have."""
    import dataclasses

    from advisor.measure import implausible_threshold

    if lib.threshold_default is None:
        return lib, None
    why = implausible_threshold(lib.threshold_default, page_bytes=facts.memory.page_size_bytes,
                                memory_bytes=facts.memory.total_bytes)
    if why is None:
        return lib, None
    name = knobs.CRAY_SIZE if lib.flavour == knobs.CRAY else knobs.CMA_THRESHOLD
    table = _int(knobs.knob(name).default_for(lib.version))
    why = f"{name} default reported by {lib.defaults_source}: {why}"
    return dataclasses.replace(lib, threshold_default=table, defaults_source=(
        f"built-in table ({lib.defaults_source} reported an implausible threshold)")), why


def _int(v) -> Optional[int]:
    try:
        return int(v) if v is not None and v != "" else None
    except (TypeError, ValueError):
        return None


def buffer_pages(ev: Evidence) -> str:
    """The buffer kind of a paired evidence: ``values['buffer_pages']`` ("base" / "msgbuf" /
    "thp"), else from the id (``cma-paired.thp[...]``, ``cma-paired.msgbuf[...]``), else
    "base" (evidence recorded before kinds)."""
    kind = ev.values.get("buffer_pages")
    if kind:
        return str(kind)
    for k in ("thp", "msgbuf"):
        if ev.id == f"{PAIRED}.{k}" or ev.id.startswith(f"{PAIRED}.{k}."):
            return k
    return "base"


#: Buffer kinds of the paired measurement (``advisor_mpich_cma.kinds.page_kinds``): base pages
#: with one buffer reused for every message (as ``osu_bw`` sends), base pages with a buffer per
#: message of a window (as halo exchanges send: issue 25 item 6, where the best threshold
#: differed between the two patterns at 8-32 KiB on the 2-core AMD VM), and THP-backed buffers.
BASE, MSGBUF, THP = "base", "msgbuf", "thp"
#: The kinds in words: page kind and traffic pattern (applications send from many buffers, not
#: one reused cache-hot buffer).
KIND_NAMES = {BASE: "base (4 KiB) pages, one buffer reused (osu_bw)",
              MSGBUF: "base pages, a buffer per message (halo-exchange traffic)",
              THP: "THP-backed (2 MiB) pages"}


def paired_id(pair: str, kind: str = BASE) -> str:
    """Evidence id of a paired measurement: ``cma-paired[.thp|.msgbuf][.<pair>]``."""
    return PAIRED + (f".{kind}" if kind in (THP, MSGBUF) else "") + (f".{pair}" if pair else "")


def usable_kinds(evs: Sequence[Evidence]) -> tuple[list[Evidence], list[Evidence]]:
    """``(used, dropped)``: THP-kind evidence where the kernel gave a rank no huge pages
    (``thp_backed_bytes_min_rank`` == 0) measured base pages under another name: dropped."""
    used, dropped = [], []
    for e in evs:
        if buffer_pages(e) == "thp" and e.values.get("thp_backed_bytes_min_rank") == 0:
            dropped.append(e)
        else:
            used.append(e)
    return used, dropped
