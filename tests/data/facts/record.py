"""Record the inputs of advisor.facts from the live machine into a tree for tests (stdlib only).

    python tests/data/facts/record.py tests/data/facts/<machine-name>

Copies the /proc and /sys files the detectors read (same relative paths; /proc/self/ns/* links are
stored as text files holding the link target) and stores tool outputs under ``tools/``:
``mpichversion.txt``, ``mpi_library_version.txt`` (MPI_Get_library_version through mpi4py, MPI
not initialised), ``mpivars_head.txt`` (first lines of ``mpivars``), ``nvidia-smi.csv``,
``glibc.txt``, ``archspec.txt``, ``uname.txt``.  A missing input is skipped silently.
"""

import glob
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

FILES = [
    "proc/cpuinfo", "proc/meminfo", "proc/self/status", "proc/self/cgroup",
    "proc/sys/kernel/yama/ptrace_scope", "proc/sys/kernel/osrelease", "proc/sys/kernel/ostype",
    "proc/sys/kernel/arch", "sys/devices/system/cpu/online",
    "sys/kernel/mm/transparent_hugepage/enabled", "sys/kernel/mm/transparent_hugepage/defrag",
    ".dockerenv", "run/.containerenv", "proc/driver/nvidia/version",
]
GLOBS = [
    "sys/devices/system/node/node*/cpulist",
    "sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id",
    "sys/devices/system/cpu/cpu[0-9]*/topology/core_cpus_list",
    "sys/devices/system/cpu/cpu0/cache/index*/level",
    "sys/devices/system/cpu/cpu0/cache/index*/type",
    "sys/devices/system/cpu/cpu0/cache/index*/size",
    "sys/kernel/mm/hugepages/hugepages-*/nr_hugepages",
    "proc/driver/nvidia/gpus/*/information",
]
LINKS = ["proc/self/ns/user", "proc/self/ns/pid"]


def tool(name):
    cand = Path(sys.executable).parent / name
    return str(cand) if cand.exists() else shutil.which(name)


def run(argv, timeout=30):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout).stdout
    except Exception:
        return None


def main(dest):
    dest = Path(dest)
    rels = list(FILES)
    for pattern in GLOBS:
        rels += [p[1:] for p in glob.glob("/" + pattern)]
    for rel in rels:
        src = Path("/") / rel
        try:
            data = src.read_bytes()
        except OSError:
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    for rel in LINKS:
        try:
            target = os.readlink("/" + rel)
        except OSError:
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(target + "\n")
    # the first mapping's KernelPageSize is enough for the base page size
    try:
        with open("/proc/self/smaps") as fh:
            head = [next(fh) for _ in range(25)]
        (dest / "proc/self/smaps").write_text("".join(head))
    except Exception:
        pass
    tools = dest / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    outputs = {
        "uname.txt": " ".join(platform.uname()) + "\n",
        "glibc.txt": (os.confstr("CS_GNU_LIBC_VERSION") or "") + "\n",
    }
    if tool("mpichversion"):
        outputs["mpichversion.txt"] = run([tool("mpichversion")])
    if tool("mpivars"):
        text = run([tool("mpivars")])
        outputs["mpivars_head.txt"] = "".join(text.splitlines(True)[:40]) if text else None
    outputs["mpi_library_version.txt"] = run([sys.executable, "-c",
        "import sys, mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; "
        "sys.stdout.write(MPI.Get_library_version())"])
    if tool("nvidia-smi"):
        outputs["nvidia-smi.csv"] = run([tool("nvidia-smi"),
            "--query-gpu=index,name,memory.total,compute_cap,driver_version",
            "--format=csv,noheader,nounits"])
    outputs["archspec.txt"] = run([sys.executable, "-c",
        "import archspec.cpu; print(archspec.cpu.host().name)"])
    for name, text in outputs.items():
        if text:
            (tools / name).write_text(text)


if __name__ == "__main__":
    main(sys.argv[1])
