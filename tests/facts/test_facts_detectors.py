"""Each detector on recorded trees (this VM, recorded; a GH200 Cray node, hand-written) and on
broken inputs: a failure is a warning and None, never an exception."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from advisor.facts import detect, run_extra
from advisor.facts.util import Notes, parse_bracketed, parse_cpulist, size_with_unit
from advisor.facts.cpu import detect_cpu, parse_cpuinfo
from advisor.facts.cuda import detect_cuda, parse_driver_version, parse_nvidia_smi_csv
from advisor.facts.kernel import detect_kernel, parse_libc_version
from advisor.facts.memory import detect_memory
from advisor.facts.mpi import combine, parse_mpi_library_version, parse_mpichversion
from advisor.facts.opencl import device_type_name
from advisor.facts.security import detect_container, detect_security, has_capability
from support import DATA

FACTS = DATA / "facts"
VM = FACTS / "vm-x86-docker"
GH = FACTS / "gh200-cray-64k"


def text(tree: Path, rel: str) -> str:
    return (tree / rel).read_text()


# ---------------------------------------------------------------- this VM (recorded)


def test_cpu_vm_recorded():
    notes = Notes()
    cpu = detect_cpu(VM, notes)
    assert notes.warnings == []
    assert cpu.arch == "x86_64"
    assert cpu.vendor == "GenuineIntel"
    assert cpu.model_name == "Intel(R) Xeon(R) Processor"
    assert (cpu.cores_logical, cpu.cores_physical) == (2, 2)
    assert cpu.cache_l2_bytes == 2048 * 1024
    assert cpu.cache_l3_bytes == 266240 * 1024
    assert cpu.microarch is None  # archspec is asked only on the live machine
    # a KVM guest: cpuinfo carries the 'hypervisor' flag; no DMI in the recorded tree
    assert cpu.hypervisor_flag is True and cpu.virtualization == "vm"


def test_memory_vm_recorded():
    notes = Notes()
    mem = detect_memory(VM, notes)
    assert notes.warnings == []
    assert mem.total_bytes == 24684092 * 1024
    assert mem.page_size_bytes == 4096
    assert mem.huge_page_sizes_bytes == [2 << 20, 1 << 30]
    assert (mem.thp_enabled, mem.thp_defrag) == ("madvise", "madvise")
    assert mem.numa_nodes == 1 and mem.numa_node_cpus == {"0": "0-1"}


def test_kernel_and_security_vm_recorded():
    notes = Notes()
    k = detect_kernel(VM, notes)
    s = detect_security(VM, notes)
    assert notes.warnings == []
    assert (k.system, k.release) == ("Linux", "6.18.44-fc-v657")
    assert k.glibc_version is None  # live only
    assert parse_libc_version(text(VM, "tools/glibc.txt")) == "2.36"
    assert s.ptrace_scope is None  # no Yama on this kernel: absent, not a failure
    assert s.seccomp_mode == 0 and s.cap_sys_ptrace is True
    assert s.container == "docker"
    assert s.user_namespace == "user:[4026531837]" and s.pid_namespace == "pid:[4026531836]"


def test_mpich_vm_recorded_outputs_agree():
    mv = parse_mpichversion(text(VM, "tools/mpichversion.txt"))
    lib = parse_mpi_library_version(text(VM, "tools/mpi_library_version.txt"))
    assert (mv["implementation"], mv["flavour"], mv["version"]) == ("mpich", "upstream", "5.0.2")
    assert mv["device"] == "ch4:ucx ofi"
    assert (lib["implementation"], lib["flavour"], lib["version"]) == ("mpich", "upstream", "5.0.2")
    # upstream MPICH prints the same banner both ways: the fast detection relies on it
    assert mv["first_line"] == lib["library_version"] == "MPICH Version: 5.0.2"
    assert combine(mv, None) == combine(mv, lib)


def test_whole_tree_vm_recorded():
    facts = detect(root=VM)
    assert facts.warnings == []
    assert facts.cpu.cores_logical == 2 and facts.security.container == "docker"
    assert facts.opencl == [] and facts.cuda == []


# ---------------------------------------------------------------- GH200 + Cray (hand-written)


def test_cpu_gh200():
    notes = Notes()
    cpu = detect_cpu(GH, notes)
    assert notes.warnings == []
    assert cpu.arch == "aarch64"
    assert cpu.vendor == "ARM"  # 0x41 through archspec's arm_vendors table
    assert (cpu.cores_logical, cpu.cores_physical) == (288, 288)
    assert cpu.cache_l2_bytes == 1 << 20


def test_memory_gh200_cpu_less_numa_and_64k_pages():
    mem = detect_memory(GH)
    assert mem.page_size_bytes == 64 * 1024
    assert mem.huge_page_sizes_bytes == [2 << 20, 512 << 20, 16 << 30]
    assert (mem.thp_enabled, mem.thp_defrag) == ("always", "madvise")
    assert mem.numa_nodes == 8
    assert mem.numa_node_cpus["0"] == "0-71" and mem.numa_node_cpus["4"] == ""
    assert list(mem.numa_node_cpus) == ["0", "1", "2", "3", "4", "12", "20", "28"]


def test_security_gh200_unprivileged_user():
    s = detect_security(GH)
    assert s.ptrace_scope == 0 and s.seccomp_mode == 0
    assert s.cap_sys_ptrace is False and s.container == "none"


def test_cray_flavour_from_library_strings_not_version():
    mv = parse_mpichversion(text(GH, "tools/mpichversion.txt"))
    assert mv["flavour"] == "upstream"  # Cray's mpichversion looks upstream
    lib = parse_mpi_library_version(text(GH, "tools/mpi_library_version.txt"))
    mpi = combine(mv, lib)
    assert (mpi.implementation, mpi.flavour, mpi.version) == ("mpich", "cray", "8.1.29")
    assert mpi.device == "ch4:ofi"
    assert mpi.library_version.startswith("MPI VERSION : CRAY MPICH version 8.1.29")


def test_open_mpi_library_version_drops_the_nul():
    """Open MPI 5.0.11's string ends in its C terminator (recorded through mpi4py): the fact
    must not carry it (it showed up as ``\\x00`` in emit's machine comparison)."""
    raw = (DATA / "openmpi" / "mpi_library_version-5.0.11.txt").read_text()
    assert raw.endswith("\x00")
    lib = parse_mpi_library_version(raw)
    assert (lib["implementation"], lib["version"]) == ("openmpi", "5.0.11")
    assert "\x00" not in lib["library_version"]
    assert lib["library_version"].startswith("Open MPI v5.0.11, package:")


@pytest.mark.parametrize("name, impl, flavour, version", [
    ("openmpi-4.1.5", "openmpi", "openmpi", "4.1.5"),
    ("intelmpi-2021.10", "intelmpi", "intel", "2021.10"),
    ("mvapich2-2.3.7", "mvapich", "mvapich", "2.3.7"),
])
def test_other_mpi_library_banners(name, impl, flavour, version):
    lib = parse_mpi_library_version((FACTS / "mpi_library_version" / f"{name}.txt").read_text())
    assert (lib["implementation"], lib["flavour"], lib["version"]) == (impl, flavour, version)
    # an mpichversion on PATH that is not the library mpi4py loads is ignored
    mv = parse_mpichversion(text(VM, "tools/mpichversion.txt"))
    if impl != "mpich":
        assert combine(mv, lib).device is None


def test_cuda_gh200_nvidia_smi_and_proc_agree_on_names():
    smi = parse_nvidia_smi_csv(text(GH, "tools/nvidia-smi.csv"))
    proc = detect_cuda(GH)  # no nvidia-smi for a recorded tree: the driver's /proc files
    assert [d.index for d in smi] == [d.index for d in proc] == [0, 1, 2, 3]
    assert {d.name for d in smi} == {d.name for d in proc} == {"NVIDIA GH200 120GB"}
    assert smi[0].compute_capability == "9.0" and smi[0].total_memory_bytes == 97280 << 20
    assert smi[0].driver_version == proc[0].driver_version == "550.54.15"


def test_nvidia_driver_version_banners():
    closed = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 "
              "UTC 2023\n")
    assert parse_driver_version(closed) == "535.104.05"
    assert parse_driver_version(text(GH, "proc/driver/nvidia/version")) == "550.54.15"


def test_nvidia_smi_not_available_values():
    devs = parse_nvidia_smi_csv("0, Tesla K80, 11441, [N/A], 470.82.01\n")
    assert devs[0].compute_capability is None and devs[0].total_memory_bytes == 11441 << 20


# ---------------------------------------------------------------- small parsers


def test_small_parsers():
    assert parse_cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("") == []
    assert parse_bracketed("always defer defer+madvise [madvise] never") == "madvise"
    assert parse_bracketed("never") == "never"
    assert size_with_unit("48K") == 48 * 1024 and size_with_unit("24684092 kB") == 24684092 * 1024
    assert device_type_name(1 << 1) == "CPU" and device_type_name((1 << 1) | 1) == "CPU"
    assert device_type_name(1 << 2) == "GPU"
    assert has_capability("000001fffeffffff", 19) and not has_capability("0", 19)
    for bad in ("3-1", "a", "1,,2"):
        with pytest.raises(ValueError):
            parse_cpulist(bad)
    for bad in ("always madvise never", "[a] [b]", ""):
        with pytest.raises(ValueError):
            parse_bracketed(bad)


@pytest.mark.parametrize("cgroup, expected", [
    ("12:pids:/docker/0123abcd\n", "docker"),
    ("0::/kubepods.slice/kubepods-besteffort.slice/cri-containerd-ab.scope\n", "kubernetes"),
    ("0::/machine.slice/libpod-0123.scope/container\n", "podman"),
    ("0::/lxc.payload.c1\n", "lxc"),
    ("0::/user.slice/user-1000.slice/session-2.scope\n", "none"),
])
def test_container_from_cgroup(tmp_path, cgroup, expected):
    assert detect_container(tmp_path, {}, cgroup) == expected


def test_container_markers(tmp_path):
    assert detect_container(tmp_path, {"APPTAINER_CONTAINER": "/x.sif"}, None) == "apptainer"
    assert detect_container(tmp_path, {"SINGULARITY_CONTAINER": "/x.sif"}, None) == "singularity"
    assert detect_container(tmp_path, {"container": "systemd-nspawn"}, None) == "systemd-nspawn"
    (tmp_path / "run").mkdir()
    (tmp_path / "run/.containerenv").write_text("")
    assert detect_container(tmp_path, {}, None) == "podman"


# ---------------------------------------------------------------- virtualization


def _tree(tmp_path: Path, files: dict) -> Path:
    for rel, content in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    return tmp_path


X86_CPUINFO = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2{}\n\n"


@pytest.mark.parametrize("files, flag, expected", [
    ({"proc/cpuinfo": X86_CPUINFO.format("")}, False, "none"),
    ({"proc/cpuinfo": X86_CPUINFO.format(" hypervisor")}, True, "vm"),
    ({"proc/cpuinfo": X86_CPUINFO.format(" hypervisor"), "sys/class/dmi/id/sys_vendor": "QEMU\n",
      "sys/class/dmi/id/product_name": "Standard PC (Q35 + ICH9, 2009)\n"}, True, "qemu"),
    ({"proc/cpuinfo": X86_CPUINFO.format(" hypervisor"), "sys/hypervisor/type": "xen\n"}, True, "xen"),
    ({"proc/cpuinfo": X86_CPUINFO.format(" hypervisor"),
      "sys/class/dmi/id/sys_vendor": "Microsoft Corporation\n",
      "sys/class/dmi/id/product_name": "Virtual Machine\n"}, True, "microsoft"),
    # aarch64: no flags line; the device tree names the hypervisor
    ({"proc/cpuinfo": "processor\t: 0\nCPU implementer\t: 0x41\n\n",
      "proc/device-tree/hypervisor/compatible": "linux,kvm\x00"}, None, "linux"),
    ({"proc/cpuinfo": "processor\t: 0\nCPU implementer\t: 0x41\n\n"}, None, None),
])
def test_virtualization_sources(tmp_path, files, flag, expected):
    notes = Notes()
    cpu = detect_cpu(_tree(tmp_path, files), notes, microarch=lambda: None)
    assert cpu.hypervisor_flag is flag
    assert cpu.virtualization == expected


def test_vm_fields_leave_the_fingerprint_alone():
    """Profiles recorded before the VM fields existed keep their fingerprint."""
    from advisor.models import CpuFacts, Facts

    base = Facts(cpu=CpuFacts(arch="x86_64", cache_l3_bytes=1 << 25))
    vm = Facts(cpu=CpuFacts(arch="x86_64", cache_l3_bytes=1 << 25, hypervisor_flag=True,
                            virtualization="kvm"))
    assert base.fingerprint() == vm.fingerprint()


# ---------------------------------------------------------------- lenient paths


def test_empty_tree_is_unknown_not_an_error(tmp_path):
    facts = detect(root=tmp_path)
    assert facts.cpu.cores_logical is None and facts.memory.total_bytes is None
    assert facts.security.seccomp_mode is None and facts.security.ptrace_scope is None
    assert facts.kernel.release is None and facts.cuda == []
    assert facts.warnings  # missing /proc files are reported, one line each
    assert all("\n" not in w for w in facts.warnings)


GARBAGE = "\x00\xff not [a] [valid] value -1 ,,\n"


@pytest.mark.parametrize("tree", [VM, GH], ids=["vm", "gh200"])
@pytest.mark.parametrize("rel, field", [
    ("proc/cpuinfo", ("cpu", "model_name")),
    ("sys/devices/system/cpu/online", ("cpu", "cores_logical")),
    ("proc/meminfo", ("memory", "total_bytes")),
    ("sys/kernel/mm/transparent_hugepage/enabled", ("memory", "thp_enabled")),
    ("proc/self/status", ("security", "seccomp_mode")),
    ("proc/self/status", ("security", "cap_sys_ptrace")),
    ("proc/sys/kernel/yama/ptrace_scope", ("security", "ptrace_scope")),
    ("sys/devices/system/node/node0/cpulist", ("memory", "numa_nodes")),
    ("proc/self/smaps", ("memory", "page_size_bytes")),
])
def test_garbage_input_is_a_warning(tmp_path, tree, rel, field):
    root = tmp_path / "root"
    shutil.copytree(tree, root)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(GARBAGE)
    facts = detect(root=root)
    part, name = field
    if name == "cores_logical":  # falls back to the processor count of cpuinfo
        assert getattr(facts.cpu, name) == detect(root=tree).cpu.cores_logical
    else:
        assert getattr(getattr(facts, part), name) is None
    assert facts.warnings and all("\n" not in w for w in facts.warnings)


def test_unreadable_file_is_a_warning(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(VM, root)
    (root / "proc/meminfo").unlink()
    (root / "proc/meminfo").mkdir()  # reading a directory raises IsADirectoryError
    facts = detect(root=root)
    assert facts.memory.total_bytes is None
    assert any("meminfo" in w for w in facts.warnings)


def test_seccomp_and_cap_lines_missing(tmp_path):
    root = tmp_path / "root"
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/status").write_text("Name:\tpython\n")
    notes = Notes()
    s = detect_security(root, notes)
    assert s.seccomp_mode is None  # kernel without CONFIG_SECCOMP: unknown, not an error
    assert s.cap_sys_ptrace is None and any("CapEff" in w for w in notes.warnings)


def test_plugin_fact_detectors_are_lenient():
    def boom():
        raise RuntimeError("no such device")

    notes = Notes()
    out = run_extra({
        "good": lambda: {"xpmem_device": True, "n": 3, "ratio": 0.5, "name": "x"},
        "mixed": lambda: {"ok": 1, "bad": [1, 2], 3: "non-str key"},
        "raises": boom,
        "not-a-dict": lambda: [1],
    }, notes)
    assert out["good"] == {"xpmem_device": True, "n": 3, "ratio": 0.5, "name": "x"}
    assert out["mixed"] == {"ok": 1}
    assert "raises" not in out and "not-a-dict" not in out
    assert len(notes.warnings) == 4
    assert any("no such device" in w for w in notes.warnings)


# ---------------------------------------------------------------- any text: a value or ValueError

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from advisor.facts.memory import parse_meminfo, parse_smaps_page_size  # noqa: E402
from advisor.facts.security import parse_ptrace_scope, parse_status  # noqa: E402

PARSERS = [parse_cpuinfo, parse_meminfo, parse_smaps_page_size, parse_bracketed, parse_cpulist,
           size_with_unit, parse_status, parse_ptrace_scope, parse_libc_version,
           parse_mpichversion, parse_mpi_library_version, parse_nvidia_smi_csv,
           parse_driver_version]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
       | st.sampled_from([":", "processor:", "MPICH Version:", "0,,,,", "1-", "Seccomp: 9",
                          "[x]", "Name:\nCapEff: zz", "MemTotal: kB", "KernelPageSize: -4 kB"]))
def test_parsers_raise_only_value_error(data):
    for parse in PARSERS:
        try:
            parse(data)
        except ValueError:
            pass


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["proc/meminfo", "proc/self/smaps", "proc/self/status", "proc/cpuinfo",
                        "sys/devices/system/cpu/cpu0/cache/index2/size",
                        "sys/devices/system/cpu/online", "proc/sys/kernel/yama/ptrace_scope"]),
       st.sampled_from(["KernelPageSize: -4 kB\n", "MemTotal: -1 kB\n", "Name: x\nSeccomp: 7\n",
                        "processor: 0\n", "-8K\n", "5-2\n", "4\n", "\x00"]))
def test_detect_never_raises_on_hostile_values(tmp_path_factory, rel, value):
    root = tmp_path_factory.mktemp("root")
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(value)
    facts = detect(root=root)  # must not raise
    assert all("\n" not in w for w in facts.warnings)
