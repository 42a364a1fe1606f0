"""Write the hand-written tree ``gh200-cray-64k/``: a 4 x GH200 node (Grace Neoverse V2, 72 cores
per socket, 64 KiB base pages) with HPE Cray MPICH, as described in public sources (NVIDIA Grace
tuning guide: GPU HBM appears as CPU-less NUMA nodes; Cray MPICH prints
"MPI VERSION    : CRAY MPICH version ..." from MPI_Get_library_version while its mpichversion
shows the upstream base version).  Not recorded on a real machine: the values are realistic, not
measured.  Run: python tests/data/facts/make_gh200_tree.py
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent / "gh200-cray-64k"
CPUS_PER_SOCKET, SOCKETS = 72, 4
GRACE_FEATURES = ("fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm "
                  "jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc "
                  "flagm ssbs sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 "
                  "flagm2 frint svei8mm svebf16 i8mm bf16 dgh bti")


def w(rel, text):
    p = HERE / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def main():
    n = CPUS_PER_SOCKET * SOCKETS
    w("proc/cpuinfo", "\n".join(
        f"processor\t: {i}\nBogoMIPS\t: 2000.00\nFeatures\t: {GRACE_FEATURES}\n"
        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
        "CPU revision\t: 0\n" for i in range(n)))
    w("proc/sys/kernel/arch", "aarch64\n")
    w("proc/sys/kernel/ostype", "Linux\n")
    w("proc/sys/kernel/osrelease", "5.14.21-150500.55.65_13.0.73-cray_shasta_c_64k\n")
    w("proc/sys/kernel/yama/ptrace_scope", "0\n")
    w("sys/devices/system/cpu/online", f"0-{n - 1}\n")
    for i in range(n):
        w(f"sys/devices/system/cpu/cpu{i}/topology/physical_package_id", f"{i // CPUS_PER_SOCKET}\n")
        w(f"sys/devices/system/cpu/cpu{i}/topology/core_cpus_list", f"{i}\n")
    for idx, (level, ctype, size) in enumerate([(1, "Data", "64K"), (1, "Instruction", "64K"),
                                                (2, "Unified", "1024K"), (3, "Unified", "116736K")]):
        base = f"sys/devices/system/cpu/cpu0/cache/index{idx}"
        w(f"{base}/level", f"{level}\n")
        w(f"{base}/type", f"{ctype}\n")
        w(f"{base}/size", f"{size}\n")
    for s in range(SOCKETS):
        lo = s * CPUS_PER_SOCKET
        w(f"sys/devices/system/node/node{s}/cpulist", f"{lo}-{lo + CPUS_PER_SOCKET - 1}\n")
    for node in (4, 12, 20, 28):  # GPU HBM as CPU-less NUMA nodes
        w(f"sys/devices/system/node/node{node}/cpulist", "\n")
    w("proc/meminfo", "MemTotal:       479683200 kB\nMemFree:        401234560 kB\n"
      "HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:     524288 kB\n")
    w("proc/self/smaps", "aaaab0000000-aaaab0010000 r-xp 00000000 00:2f 1234  /usr/bin/python3.11\n"
      "Size:                 64 kB\nKernelPageSize:       64 kB\nMMUPageSize:          64 kB\n")
    for kb in (2048, 524288, 16777216):
        w(f"sys/kernel/mm/hugepages/hugepages-{kb}kB/nr_hugepages", "0\n")
    w("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n")
    w("sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n")
    w("proc/self/status", "Name:\tpython3.11\nUmask:\t0022\nState:\tR (running)\n"
      "NoNewPrivs:\t0\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
      "CapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n"
      "Seccomp:\t0\nSeccomp_filters:\t0\n")
    w("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_1234567/step_0/user/task_0\n")
    w("proc/self/ns/user", "user:[4026531837]\n")
    w("proc/self/ns/pid", "pid:[4026531836]\n")
    w("proc/driver/nvidia/version",
      "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  550.54.15  Release Build  "
      "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n"
      "GCC version:  gcc version 7.5.0 (SUSE Linux)\n")
    for i, bus in enumerate(("0009:01:00.0", "0019:01:00.0", "0029:01:00.0", "0039:01:00.0")):
        w(f"proc/driver/nvidia/gpus/{bus}/information",
          f"Model: \t\t NVIDIA GH200 120GB\nIRQ:   \t\t {300 + i}\n"
          f"GPU UUID: \t GPU-00000000-0000-0000-0000-00000000000{i}\nVideo BIOS: \t ??.??.??.??.??\n"
          f"Bus Type: \t PCIe\nDMA Size: \t 64 bits\nDMA Mask: \t 0xffffffffffffffff\n"
          f"Bus Location: \t {bus}\nDevice Minor: \t {i}\nGPU Excluded:\t No\n")
    # nvidia-smi --query-gpu=index,name,memory.total,compute_cap,driver_version
    #   --format=csv,noheader,nounits (memory.total in MiB)
    w("tools/nvidia-smi.csv", "".join(f"{i}, NVIDIA GH200 120GB, 97280, 9.0, 550.54.15\n"
                                      for i in range(4)))
    w("tools/mpi_library_version.txt",
      "MPI VERSION    : CRAY MPICH version 8.1.29 (ANL base 3.4a2)\n"
      "MPI BUILD INFO : Sat Feb 10  9:23 2024 (git hash 1fbc8e7) \n")
    w("tools/mpichversion.txt",
      "MPICH Version:\t3.4a2\nMPICH Release date:\tunreleased development copy\n"
      "MPICH ABI:\t0:0:0\nMPICH Device:\tch4:ofi\nMPICH configure:\t--with-device=ch4:ofi\n"
      "MPICH CC:\tgcc -O2\nMPICH CXX:\tg++ -O2\nMPICH F77:\tgfortran -O2\nMPICH FC:\tgfortran -O2\n")


if __name__ == "__main__":
    main()
