"""Launch lines read for what their wrapper does to the ranks (issue 28, part 6).

A wrapper that starts each rank in its own user namespace, PID or IPC namespace, or with a fresh
environment, is recognised on a job script's launch lines and on ``verify --app``'s command;
settings that need the ranks to share what it takes away are flagged at the launch line.  The
premise is shown on this machine first: process_vm_readv(2) (CMA) from a process in its own user
namespace (``unshare -U``) fails with EPERM, and succeeds between processes of one namespace.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import textwrap

import pytest


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, timeout=120)

#: A target process: prints its PID and the address of a 17-byte marker, then waits.
TARGET = """
import ctypes, os, time
buf = ctypes.create_string_buffer(b"advisor-cma-probe", 64)
print(os.getpid(), ctypes.addressof(buf), flush=True)
time.sleep(30)
"""
#: A reader: process_vm_readv(2) of the target's marker; prints the bytes read or the errno.
READER = """
import ctypes, os, sys
pid, addr = int(sys.argv[1]), int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
out = ctypes.create_string_buffer(64)
local, remote = iovec(ctypes.cast(out, ctypes.c_void_p), 17), iovec(addr, 17)
n = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print(out.value.decode() if n == 17 else os.strerror(ctypes.get_errno()))
"""


def _userns_ok() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode == 0


def _read_across(tmp_path, target_wrap: list[str], reader_wrap: list[str]) -> str:
    (tmp_path / "t.py").write_text(TARGET)
    (tmp_path / "r.py").write_text(READER)
    target = subprocess.Popen([*target_wrap, sys.executable, str(tmp_path / "t.py")],
                              stdout=subprocess.PIPE, text=True)
    try:
        pid, addr = target.stdout.readline().split()
        r = subprocess.run([*reader_wrap, sys.executable, str(tmp_path / "r.py"), pid, addr],
                           capture_output=True, text=True, timeout=60)
        return r.stdout.strip()
    finally:
        target.kill()
        target.wait()


@pytest.mark.skipif(not _userns_ok(), reason="unshare -U (a user namespace) is not permitted "
                    "here")
def test_cma_across_user_namespaces_fails_for_real(tmp_path):
    """What ``isolated-ranks`` rests on, measured: two ranks each in its own user namespace
    cannot read each other's memory with process_vm_readv(2); in one namespace they can."""
    assert _read_across(tmp_path, [], []) == "advisor-cma-probe"
    assert _read_across(tmp_path, ["unshare", "-U"], ["unshare", "-U"]) == \
        "Operation not permitted"


@pytest.mark.parametrize("line, wrapper, takes, certain, drops", [
    ("srun apptainer exec img.sif ./app", "apptainer exec", {"ptrace"}, False, False),
    ("srun apptainer exec --userns img.sif ./app", "apptainer exec --userns", {"ptrace"}, True,
     False),
    ("mpirun -n 4 singularity exec -C img ./app", "singularity exec -C", {"pid", "ipc"}, True,
     True),
    ("mpirun -np 2 docker run --rm img ./app", "docker run", {"pid", "ipc"}, True, True),
    ("mpirun -np 2 docker run --ipc=host --pid=host img ./app", "docker run", set(), True, True),
    ("srun podman run img ./app", "podman run", {"pid", "ipc", "ptrace"}, True, True),
    ("srun podman run --pid=host --ipc=host img ./app", "podman run", {"ptrace"}, False, True),
    ("srun unshare -Ur ./app", "unshare -U -r", {"ptrace"}, True, False),
    ("srun --container-image=nvcr.io/img ./app", "srun --container-image (pyxis/enroot)",
     {"ptrace"}, False, False),
    ("srun ch-run /img -- ./app", "ch-run", {"ptrace"}, True, False),
    ("mpirun -x A=1 sudo -u bob ./app", "sudo", set(), True, True),
    ("time srun --mpi=pmix env -i B=2 ./app", "env -i", set(), True, True),
    ("srun --export=NONE /bin/app", "srun --export=NONE", set(), True, True),
    ("srun -n 2 --export=HOME,A=1 ./app", "srun --export=HOME,A=1", set(), True, True),
    ("srun --export=NONE apptainer exec --userns img ./app",
     "srun --export=NONE + apptainer exec --userns", {"ptrace"}, True, True),
])
def test_wrappers_are_recognised_after_the_launcher(line, wrapper, takes, certain, drops):
    from advisor.formats.wrappers import wrapper_of

    found = wrapper_of(shlex.split(line))
    assert found is not None
    assert (found.wrapper, set(found.takes), found.certain, found.drops_env) == (
        wrapper, takes, certain, drops)


@pytest.mark.parametrize("line", [
    "srun ./app", "mpirun -n 2 ./apptainer", "mpirun sudo -E ./app", "echo apptainer exec x",
    "srun --export=ALL,A=1 ./app", "srun ./app --export=NONE",
])
def test_no_wrapper_no_finding(line):
    from advisor.formats.wrappers import wrapper_of

    found = wrapper_of(shlex.split(line))
    assert found is None or not (found.takes or found.drops_env)


def test_a_container_passes_the_names_it_is_given():
    """``-e NAME`` / ``--env NAME`` take the caller's value into the container: not dropped."""
    from advisor.formats.wrappers import wrapper_of

    found = wrapper_of(shlex.split("mpirun -x UCX_TLS=cma podman run -e UCX_TLS --env A "
                                   "--env=B -e C=1 img ./app"))
    assert found is not None and found.drops_env
    assert {"UCX_TLS", "A", "B", "C"} <= found.kept


def test_srun_keeps_what_its_export_list_or_a_later_env_names():
    from advisor.formats.wrappers import wrapper_of

    found = wrapper_of(shlex.split("srun --export=A,B=2 env C=3 ./app"))
    assert found is not None and found.drops_env and {"A", "B", "C"} <= found.kept
    # a script's #SBATCH --export is srun's own unless the line gives one
    assert wrapper_of(["srun", "./app"], batch_export="NONE").drops_env
    assert wrapper_of(["srun", "--export=ALL", "./app"], batch_export="NONE") is None


def test_a_wrapper_around_the_launcher_takes_nothing_from_one_rank():
    """``apptainer exec --pid img mpirun ./app``: every rank is in the same container."""
    from advisor.formats.wrappers import wrapper_of

    found = wrapper_of(shlex.split("apptainer exec --pid img mpirun -n 2 ./app"))
    assert found is not None and not found.takes


JOB = textwrap.dedent("""\
    #!/bin/bash
    #SBATCH --nodes=1
    export MPIR_CVAR_CH4_CMA_ENABLE=1
    export UCX_TLS=posix,self
    srun apptainer exec --userns img.sif ./app
    srun \\
      podman run img ./app
    mpirun -n 4 -x OMPI_MCA_smsc=cma unshare --pid --fork ./app
    mpirun -x MPIR_CVAR_CH4_CMA_ENABLE=0 sudo -u bob ./app
    srun ./app
    """)


def test_lint_flags_settings_the_wrapper_takes_away(tmp_path):
    job = tmp_path / "job.sh"
    job.write_text(JOB)
    r = run_cli("lint", "--json", str(job))
    assert r.returncode == 1, r.stderr
    found = {(f["line"], f["name"], f["id"], f["severity"]) for f in json.loads(r.stdout)
             if f["id"] in ("isolated-ranks", "wrapper-drops-env")}
    assert found == {
        # line 5: --userns, certain: CMA needs ptrace; posix shm needs nothing it takes
        (5, "MPIR_CVAR_CH4_CMA_ENABLE", "isolated-ranks", "error"),
        # line 6 (continued on 7): podman's own environment; nothing reaches the ranks
        (6, "MPIR_CVAR_CH4_CMA_ENABLE", "wrapper-drops-env", "warning"),
        (6, "UCX_TLS", "wrapper-drops-env", "warning"),
        # line 8: a PID namespace per rank: CMA needs the peers' PIDs
        (8, "MPIR_CVAR_CH4_CMA_ENABLE", "isolated-ranks", "error"),
        (8, "OMPI_MCA_smsc", "isolated-ranks", "error"),
        # line 9: sudo resets the environment
        (9, "MPIR_CVAR_CH4_CMA_ENABLE", "wrapper-drops-env", "warning"),
        (9, "UCX_TLS", "wrapper-drops-env", "warning"),
    }


def test_a_possible_isolation_is_a_warning(tmp_path):
    job = tmp_path / "job.sh"
    job.write_text("export UCX_TLS=sm\nsrun apptainer exec img.sif ./app\n")
    r = run_cli("lint", "--json", str(job))
    (f,) = [f for f in json.loads(r.stdout) if f["id"] == "isolated-ranks"]
    assert (f["line"], f["severity"]) == (2, "warning")
    assert "depends on the installation" in f["message"]


def test_verify_app_warns_about_the_commands_wrapper():
    from advisor.lint.wrappers import command_findings
    from advisor.plugins import load

    reg = load()
    words = ["mpirun", "-n", "2", "apptainer", "exec", "-u", "img", "./app"]
    (f,) = command_findings(words, {"UCX_TLS": "cma,self", "OMPI_MCA_btl_sm_eager_limit": "8192"},
                            knobs=reg.knobs, libraries=reg.libraries)
    assert (f.name, f.finding.id, f.severity) == ("UCX_TLS", "isolated-ranks", "error")
    # sm names cma among other shared-memory transports: UCX may take another for such a peer
    (f,) = command_findings(words, {"UCX_TLS": "sm"}, knobs=reg.knobs, libraries=reg.libraries)
    assert (f.severity, "may select" in f.finding.message) == ("warning", True)
    # private PID and IPC namespaces (-p -i): sm's segments certainly fail
    words[5:6] = ["-p", "-i"]
    (f,) = command_findings(words, {"UCX_TLS": "sm"}, knobs=reg.knobs, libraries=reg.libraries)
    assert (f.severity, "shared-memory transport" in f.finding.message) == ("error", True)
    assert command_findings(["mpirun", "-n", "2", "./app"], {"UCX_TLS": "sm"},
                            knobs=reg.knobs, libraries=reg.libraries) == []
