"""The `facts` tables of the shared field cases, written out as /proc and /sys trees and read back
by the real detectors: what each case describes must be expressible in ``advisor.models.Facts``.
Expected values come from the case files (loaded at test time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.facts import detect
from advisor.facts.cuda import parse_nvidia_smi_csv
from advisor.facts.mpi import combine, parse_mpi_library_version, parse_mpichversion
from advisor.facts.security import CAP_SYS_PTRACE
from advisor.models import MpiFacts
from support import DATA, case

GH = DATA / "facts" / "gh200-cray-64k"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def security_tree(root: Path, *, scope, cap_eff: str, seccomp: int = 0, container="none",
                  kernel: str | None = None) -> Path:
    """A tree with the status, Yama and container inputs of one case ("absent": no Yama)."""
    write(root, "proc/self/status", f"Name:\tmpi_rank\nCapEff:\t{cap_eff}\nSeccomp:\t{seccomp}\n")
    if scope != "absent":
        write(root, "proc/sys/kernel/yama/ptrace_scope", f"{scope}\n")
    if container == "docker":  # Docker on cgroup v1 (kernel 4.4 era): /docker/<container id>
        write(root, "proc/self/cgroup", "12:pids:/docker/" + "0" * 64 + "\n")
    else:
        write(root, "proc/self/cgroup", "0::/user.slice/user-1000.slice/session-1.scope\n")
    if kernel:
        write(root, "proc/sys/kernel/osrelease", kernel + "\n")
    return root


def cap_mask(has_cap: bool) -> str:
    return f"{(1 << CAP_SYS_PTRACE) if has_cap else 0:016x}"


def test_cma_docker_seccomp(tmp_path):
    c = case("cma-docker-seccomp")
    f = c["facts"]
    facts = detect(root=security_tree(tmp_path / "base", scope=f["yama_ptrace_scope"],
                                      cap_eff=f["cap_eff"], seccomp=f["seccomp_mode"],
                                      container=f["container"], kernel=f["kernel"]))
    assert facts.kernel.release == f["kernel"]
    assert facts.security.container == f["container"]
    assert facts.security.seccomp_mode == f["seccomp_mode"]
    assert facts.security.ptrace_scope == f["yama_ptrace_scope"]
    assert facts.security.cap_sys_ptrace is c["expect"]["cma_usable"]  # bit 19 clear
    MpiFacts(**f["mpi"])  # implementation + version are MpiFacts fields

    v = c["variant"]["capability_added"]
    added = detect(root=security_tree(tmp_path / "cap", scope=f["yama_ptrace_scope"],
                                      cap_eff=v["cap_eff"], seccomp=f["seccomp_mode"],
                                      container=f["container"]))
    assert added.security.cap_sys_ptrace is v["expect_cma_usable"]  # bit 19 set


def test_cma_yama_siblings(tmp_path):
    f = case("cma-yama-siblings")["facts"]
    facts = detect(root=security_tree(tmp_path, scope=f["yama_ptrace_scope"],
                                      cap_eff=cap_mask(f["cap_sys_ptrace"]),
                                      container=f["container"]))
    assert facts.security.ptrace_scope == f["yama_ptrace_scope"]
    assert facts.security.cap_sys_ptrace is f["cap_sys_ptrace"]
    assert facts.security.container == f["container"]
    MpiFacts(**{k: v for k, v in f["mpi"].items() if k in MpiFacts.model_fields})


def test_cma_yama_truth_table(tmp_path):
    rows = case("cma-yama-truth-table")["case"]["truth_table"]
    for i, (scope, has_cap, _kernel_allows) in enumerate(rows):
        facts = detect(root=security_tree(tmp_path / str(i), scope=scope, cap_eff=cap_mask(has_cap)))
        assert facts.security.ptrace_scope == (None if scope == "absent" else int(scope)), scope
        assert facts.security.cap_sys_ptrace is has_cap
        # an absent Yama is a fact, not a failure
        assert not [w for w in facts.warnings if "ptrace" in w.lower()], facts.warnings


def test_cray_xpmem_gpu_flavour_and_version():
    want = case("cray-xpmem-gpu")["facts"]["mpi"]
    mv = parse_mpichversion((GH / "tools/mpichversion.txt").read_text())
    lib = parse_mpi_library_version((GH / "tools/mpi_library_version.txt").read_text())
    mpi = combine(mv, lib)
    assert (mpi.implementation, mpi.flavour, mpi.version) == (
        want["implementation"], want["flavour"], want["version"])
    assert mv["version"] != want["version"]  # mpichversion shows the upstream base version


def test_cma_device_pointer_mpi_facts():
    want = case("cma-device-pointer")["facts"]["mpi"]
    lib = parse_mpi_library_version((GH / "tools/mpi_library_version.txt").read_text())
    assert (lib["implementation"], lib["flavour"]) == (want["implementation"], want["flavour"])


def test_numa_first_touch_nodes(tmp_path):
    nodes = case("numa-first-touch")["facts"]["numa_nodes"]
    for node, cpus in nodes.items():
        write(tmp_path, f"sys/devices/system/node/node{node}/cpulist", cpus + "\n")
    facts = detect(root=tmp_path)
    assert facts.memory.numa_node_cpus == {str(k): v for k, v in nodes.items()}
    assert facts.memory.numa_nodes == len(nodes)


def test_thp_madvise_mode(tmp_path):
    f = case("thp-madvise")["facts"]
    write(tmp_path, "sys/kernel/mm/transparent_hugepage/enabled", f["thp_enabled"] + "\n")
    write(tmp_path, "sys/kernel/mm/transparent_hugepage/defrag", f["thp_defrag"] + "\n")
    mem = detect(root=tmp_path).memory
    assert f"[{mem.thp_enabled}]" in f["thp_enabled"].split()
    assert mem.thp_defrag == f["thp_defrag"]


def test_pool_churn_ipc_cache_gpu_memory():
    want = case("pool-churn-ipc-cache")["case"]["gpu_memory_bytes"]
    devices = parse_nvidia_smi_csv((GH / "tools/nvidia-smi.csv").read_text())
    assert {d.total_memory_bytes for d in devices} == {want}


@pytest.mark.parametrize("name", ["cma-docker-seccomp", "cma-yama-siblings", "cray-xpmem-gpu",
                                  "cma-device-pointer", "numa-first-touch", "thp-madvise"])
def test_case_facts_tables_load(name):
    assert "facts" in case(name)
