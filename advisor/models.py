"""The public schema of hpc-advisor: machine facts, evidence, findings, settings, profiles.

Every model is a frozen pydantic v2 model that rejects unknown keys, so a profile either
validates completely or is refused with the key that is wrong.  Units are part of the field
names or stated in the field description; "unknown" is always ``None`` (omitted in TOML).

``SCHEMA_VERSION`` is bumped whenever a change would make an older reader misread a profile;
``advisor.profile`` refuses newer versions and migrates older ones.  The scheduler step, the
``verify --app`` record and the fleet bands live in ``models_step``, ``_app``, ``_fleet``.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from typing import Iterable, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from advisor.machine_class import class_id, flatten
from advisor.models_app import AppVerification
from advisor.models_fleet import FleetClass
from advisor.models_step import SchedulerFacts

SCHEMA_VERSION = 1

#: A scalar that TOML, JSON and every emitted format can carry.
Scalar = Union[bool, int, float, str]


class Model(BaseModel):
    """Base of every schema model: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- facts


class CpuFacts(Model):
    arch: Optional[str] = Field(None, description="uname machine, e.g. x86_64, aarch64")
    vendor: Optional[str] = None
    model_name: Optional[str] = None
    microarch: Optional[str] = Field(None, description="archspec micro-architecture name")
    cores_physical: Optional[int] = Field(None, ge=0)
    cores_logical: Optional[int] = Field(None, ge=0)
    cache_l2_bytes: Optional[int] = Field(None, ge=0)
    cache_l3_bytes: Optional[int] = Field(None, ge=0)
    hypervisor_flag: Optional[bool] = Field(
        None, description="/proc/cpuinfo lists the 'hypervisor' CPU flag (x86: running under a VM)")
    virtualization: Optional[str] = Field(
        None, description="none, or the hypervisor (kvm, xen, vmware, microsoft, ..., 'vm' when "
        "only the cpuinfo flag says so), from cpuinfo, /sys/hypervisor and DMI (systemd-detect-virt's "
        "sources)")


class MemoryFacts(Model):
    total_bytes: Optional[int] = Field(None, ge=0)
    page_size_bytes: Optional[int] = Field(None, ge=0, description="base page size")
    huge_page_sizes_bytes: list[int] = Field(default_factory=list)
    thp_enabled: Optional[str] = Field(
        None, description="/sys/kernel/mm/transparent_hugepage/enabled: always, madvise or never"
    )
    thp_defrag: Optional[str] = None
    thp_pmd_size_bytes: Optional[int] = Field(
        None, ge=0, description="THP page size: /sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
    )
    hugetlb_pages: dict[str, int] = Field(
        default_factory=dict, description="huge page size in bytes -> nr_hugepages reserved"
    )
    numa_nodes: Optional[int] = Field(None, ge=0)
    numa_node_cpus: dict[str, str] = Field(
        default_factory=dict, description="NUMA node id -> cpulist as in sysfs (e.g. '0-7')"
    )


class KernelFacts(Model):
    system: Optional[str] = None
    release: Optional[str] = None
    glibc_version: Optional[str] = None


class SecurityFacts(Model):
    ptrace_scope: Optional[int] = Field(
        None, ge=0, le=3, description="Yama /proc/sys/kernel/yama/ptrace_scope; None: no Yama"
    )
    seccomp_mode: Optional[int] = Field(
        None, ge=0, le=2, description="/proc/self/status Seccomp: 0 off, 1 strict, 2 filter"
    )
    cap_sys_ptrace: Optional[bool] = None
    container: Optional[str] = Field(None, description="docker, podman, apptainer, ... or none")
    user_namespace: Optional[str] = Field(None, description="readlink /proc/self/ns/user")
    pid_namespace: Optional[str] = None


class MpiFacts(Model):
    implementation: Optional[str] = Field(None, description="mpich, openmpi, intelmpi, ...")
    flavour: Optional[str] = Field(
        None, description="upstream, cray (HPE Cray MPICH), intel, ... from the library's strings"
    )
    version: Optional[str] = None
    device: Optional[str] = Field(None, description="e.g. ch4:ofi, ch3:nemesis")
    library_version: Optional[str] = Field(None, description="first line of MPI_Get_library_version")
    mpiexec: Optional[str] = Field(None, description="path of the launcher found")
    mpi4py_version: Optional[str] = None


class OpenCLDevice(Model):
    name: str
    type: Optional[str] = None
    global_mem_bytes: Optional[int] = None


class OpenCLPlatform(Model):
    name: str
    vendor: Optional[str] = None
    version: Optional[str] = None
    devices: list[OpenCLDevice] = Field(default_factory=list)


class CudaDevice(Model):
    index: int
    name: str
    total_memory_bytes: Optional[int] = None
    compute_capability: Optional[str] = None
    driver_version: Optional[str] = None
    runtime_version: Optional[str] = None


class Facts(Model):
    """What ``advisor`` knows about the machine it runs on.  Every field may be unknown (None)."""

    hostname: Optional[str] = None
    cpu: CpuFacts = CpuFacts()
    memory: MemoryFacts = MemoryFacts()
    kernel: KernelFacts = KernelFacts()
    security: SecurityFacts = SecurityFacts()
    mpi: MpiFacts = MpiFacts()
    opencl: list[OpenCLPlatform] = Field(default_factory=list)
    cuda: list[CudaDevice] = Field(default_factory=list)
    scheduler: SchedulerFacts = Field(SchedulerFacts(), description="job step and CPU set (not "
                                      "fingerprinted: it differs per job)")
    python_packages: dict[str, str] = Field(
        default_factory=dict, description="versions of relevant Python packages (mpi4py, cupy, ...)")
    extra: dict[str, dict[str, Scalar]] = Field(
        default_factory=dict, description="facts contributed by plugins, keyed by detector name")
    warnings: list[str] = Field(default_factory=list, description="detectors that failed, and why")

    def fingerprint(self) -> str:
        """A stable 16-hex-digit id of the hardware and software that advice depends on.

        Hostname, warnings, namespace ids and OpenCL platforms are left out so that identical
        nodes of a partition share a fingerprint and a fast detection (no OpenCL loader, no MPI
        init; ``advisor.facts.detect_fingerprint_facts``) reproduces it.
        """
        blob = json.dumps(self.fingerprint_inputs(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def fingerprint_inputs(self) -> dict:
        """The facts ``fingerprint`` hashes, as JSON-ready data (see ``fingerprint``)."""
        return {
            # the VM fields came later: left out so that profiles recorded before them keep
            # their fingerprint (the CPU model and caches already tell the hardware apart)
            "cpu": self.cpu.model_dump(mode="json", exclude={"hypervisor_flag", "virtualization"}),
            "memory": self.memory.model_dump(mode="json"),
            "kernel": self.kernel.model_dump(mode="json"),
            "mpi": self.mpi.model_dump(mode="json", exclude={"mpiexec"}),
            "cuda": [d.model_dump(mode="json") for d in self.cuda],
        }

    def fingerprint_differences(self, other: "Facts") -> list[str]:
        """Dotted names of the fingerprinted facts that differ from ``other``'s (e.g.
        ``kernel.release``), sorted; empty when the fingerprints are equal."""
        a, b = flatten(self.fingerprint_inputs()), flatten(other.fingerprint_inputs())
        return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))

    def class_fingerprint(self) -> str:
        """The machine class this node belongs to, shared by identically built nodes (memory
        to the GiB, kernel major.minor, no ``nr_hugepages``); ``advisor.machine_class``."""
        return class_id(self)


# --------------------------------------------------------------------------- evidence


class Stats(Model):
    """Steady-state statistics of one sample set, in the series' unit."""

    n: int = Field(ge=0)
    median: float
    mean: float
    p5: float
    p95: float
    min: float
    max: float
    ci_low: Optional[float] = Field(None, description="bootstrap CI of the median, lower bound")
    ci_high: Optional[float] = None
    ci_level: Optional[float] = Field(None, gt=0, lt=1)


class Point(Model):
    """One x value of a series: its raw samples, warm-up samples kept apart, and statistics."""

    x: Optional[float] = None
    label: Optional[str] = Field(None, description="configuration or point name, e.g. 'cma-on'")
    samples: list[float] = Field(default_factory=list, description="steady-state samples in "
                                 "time order; a profile keeps at most 48 per point (every k-th; "
                                 "stats.n counts all taken)")
    warmup: list[float] = Field(default_factory=list, description="first-use samples, not noise")
    stats: Optional[Stats] = None
    artefact: Optional[str] = Field(None, description="why this point is not a physical "
                                    "measurement (e.g. above the ceiling)")

    def median(self) -> Optional[float]:
        """The point's median (unit of its series): ``stats.median`` when present, else the
        median of ``samples``; None when it has neither."""
        if self.stats is not None:
            return self.stats.median
        return statistics.median(self.samples) if self.samples else None


class Series(Model):
    name: str
    unit: str = Field(description="unit of samples: s, bytes/s, bytes, ratio, count")
    x_name: Optional[str] = None
    x_unit: Optional[str] = None
    points: list[Point] = Field(default_factory=list)

    def point(self, label: str) -> Optional[Point]:
        """The first point labelled ``label`` (e.g. ``'cma-on'``), or None."""
        return next((p for p in self.points if p.label == label), None)


class Conditions(Model):
    """How a measurement was taken: what could change its result."""

    env: dict[str, str] = Field(default_factory=dict, description="env overlay of the run")
    affinity: Optional[list[int]] = None
    loadavg_1m: Optional[float] = None
    thp_enabled: Optional[str] = None
    buffer_kind: Optional[Literal["pageable", "pinned", "device", "mapped", "none"]] = None
    buffer_fill: Optional[str] = Field(None, description="random, zeros or untouched")
    hugepages: Optional[str] = Field(None, description="madvise policy asked: huge, nohuge, default")
    align_bytes: Optional[int] = None
    launcher: Optional[list[str]] = None
    library_versions: dict[str, str] = Field(default_factory=dict)
    notes: dict[str, Scalar] = Field(default_factory=dict)


class Evidence(Model):
    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$", description="unique within its plugin result")
    description: str = ""
    series: list[Series] = Field(default_factory=list)
    conditions: Conditions = Conditions()
    values: dict[str, Scalar] = Field(
        default_factory=dict, description="single measured or derived numbers, units in the key"
    )

    def series_named(self, name: str) -> Optional[Series]:
        """The first series called ``name`` (e.g. ``'latency:cma-on'``), or None."""
        return next((s for s in self.series if s.name == name), None)

    @staticmethod
    def find(evidence: Iterable["Evidence"], ev_id: str) -> Optional["Evidence"]:
        """The record with id ``ev_id`` in ``evidence`` (any iterable), or None.  Ids are unique
        within one plugin result; where a list holds one twice, the last record wins."""
        found = None
        for e in evidence:
            if e.id == ev_id:
                found = e
        return found

    @staticmethod
    def family(evidence: Iterable["Evidence"], ev_id: str) -> list["Evidence"]:
        """The records whose id is ``ev_id`` or ``ev_id`` + ``'.'`` + a suffix (the per-pair or
        per-kind variants, e.g. ``cma-sweep`` and ``cma-sweep.cross-numa``), in order."""
        return [e for e in evidence if e.id == ev_id or e.id.startswith(ev_id + ".")]


# --------------------------------------------------------------------------- advice

Severity = Literal["info", "warning", "error"]
Confidence = Literal["low", "medium", "high"]
#: ``Setting``/``Knob`` ``type`` (how the value is read) and ``kind`` (env variable or in code).
SettingType = Literal["int", "bytes", "bool", "str", "enum", "float", "list"]
SettingKind = Literal["env", "config"]


class Finding(Model):
    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$", description="stable code, e.g. cma-blocked-yama")
    severity: Severity
    message: str
    remedy: Optional[str] = None
    evidence: list[str] = Field(default_factory=list, description="ids of evidence behind it")


class Setting(Model):
    """One runtime setting.  ``kind='env'`` settings are environment variables that emit writes;
    ``kind='config'`` settings are applied in code (e.g. an Umpire pool argument)."""

    library: str = Field(description="e.g. mpich, glibc, dla-future, umpire, cupy")
    flavour: Optional[str] = Field(None, description="e.g. upstream, cray")
    name: str
    value: Scalar
    type: SettingType = "str"
    unit: Optional[str] = None
    default: Optional[Scalar] = Field(None, description="the library default this replaces")
    versions: Optional[str] = Field(
        None, description="PEP 440 specifier of library versions the name is valid for"
    )
    kind: SettingKind = "env"
    separator: Optional[str] = Field(
        None, description="list variables (GLIBC_TUNABLES ':'): merge with an existing value"
    )
    is_default: bool = Field(False, description="only confirms the library default")

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        if not v or any(ord(c) < 32 or ord(c) == 127 for c in v):
            raise ValueError("setting name is empty or has control characters")
        return v


class Recommendation(Model):
    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$")
    title: str
    settings: list[Setting] = Field(default_factory=list)
    rationale: str
    confidence: Confidence
    evidence: list[str] = Field(default_factory=list, description="ids of evidence behind it")
    verifiable: bool = Field(False, description="verify can re-measure its effect")


class Advice(Model):
    """What a probe's pure ``recommend`` returns."""

    recommendations: list[Recommendation] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)


Status = Literal["ok", "not-applicable", "failed"]


class PluginResult(Model):
    plugin: str = Field(description="distribution/plugin name that registered the probe")
    probe: str
    status: Status
    reason: Optional[str] = None
    duration_s: float = Field(0.0, ge=0)
    findings: list[Finding] = Field(default_factory=list)
    recommendations: list[Recommendation] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)


class Verification(Model):
    recommendation: str = Field(description="probe:recommendation id")
    verdict: Literal["confirmed", "no-effect", "regression", "not-measurable"]
    ratio: Optional[float] = Field(None, description="advised / baseline, >1 is better")
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    noise_floor: Optional[float] = None
    reason: Optional[str] = Field(None, description="why this verdict, e.g. equals the default")
    evidence: list[Evidence] = Field(default_factory=list)
    time: Optional[str] = None
    class_fingerprint: Optional[str] = Field(None, description="Facts.class_fingerprint() of "
                                             "the machine verify ran on (None: not recorded)")


class Provenance(Model):
    advisor_version: str
    command: str
    created: str = Field(description="ISO 8601 UTC time the probe started")
    duration_s: float = Field(0.0, ge=0)
    hostname: Optional[str] = None
    busy_cores_before: Optional[float] = Field(None, ge=0, description="other processes' CPU "
                                               "use before the probes, cores (measure.load)")
    steal_share: Optional[float] = Field(None, ge=0, le=1, description="the hypervisor's share "
                                         "(steal) of the CPU time used while probing (measure.load)")


class Profile(Model):
    schema_version: int = SCHEMA_VERSION
    provenance: Provenance
    fingerprint: str = Field(pattern=r"^[0-9a-f]{16}$")
    facts: Facts
    results: list[PluginResult] = Field(default_factory=list)
    verifications: list[Verification] = Field(default_factory=list)
    app_verifications: list[AppVerification] = Field(default_factory=list)
    fleet: Optional[FleetClass] = Field(None, description="class profiles: advisor.models_fleet")

    def settings(self, *, kinds: tuple[str, ...] = ("env",), include_defaults: bool = False,
                 plugins: Optional[set[str]] = None) -> list[tuple[PluginResult, Recommendation, Setting]]:
        """All settings of the profile's recommendations, in stable order (probe, recommendation,
        setting order as recorded)."""
        return [(res, rec, s) for res in self.results
                if not plugins or res.probe in plugins or res.plugin in plugins
                for rec in res.recommendations for s in rec.settings
                if s.kind in kinds and (include_defaults or not s.is_default)]
