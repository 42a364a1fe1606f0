"""lint reads settings passed on a launch line of a job script (advisor.formats.launch):
``#SBATCH --export``, ``srun --export``, Hydra ``mpiexec -genv``/``-env``, Open MPI ``mpirun -x``
and ``--mca``, and ``env A=B cmd``; each entry has the script's path and the command's line."""

from __future__ import annotations

import pytest

from advisor import lint
from advisor.formats.launch import launch_settings
from support import BUILTIN_LIBRARIES, DATA

SCRIPT = DATA / "jobscripts" / "slurm-mpich-cma.sbatch"


def test_job_script_launch_lines_are_read():
    entries = lint.read_env_file(SCRIPT)
    got = [(e.name, e.value, e.line) for e in entries]
    assert got == [
        ("MPIR_CVAR_CH4_CMA_ENABLE", "1", 6),
        ("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 10),
        ("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "16384", 12),
        ("OMP_NUM_THREADS", None, 12),  # the caller's value: unknown here
        ("MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", "8192", 15),
        ("DLAF_UMPIRE_HOST_MEMORY_POOL_ALIGNMENT_BYTES", "2097152", 15),
        ("OMPI_MCA_btl_vader_single_copy_mechanism", "cma", 16),
        ("LD_LIBRARY_PATH", None, 16),
        ("OMPI_MCA_btl", "self,vader", 16),
        ("CUPY_GPU_MEMORY_LIMIT", "90%", 17),
        ("MPIR_CVAR_CH4_CMA_ENABLE", "0", 18),
    ]
    assert all(e.path == str(SCRIPT) and e.exported and e.problem is None for e in entries)


@pytest.mark.parametrize("line, want", [
    ("srun --export=A=1,B=2 cmd", [("A", "1"), ("B", "2")]),
    ("srun --export ALL,A=1 cmd", [("A", "1")]),
    ("srun --export=NONE cmd", []),
    ("mpiexec -genv A 1 -n 2 cmd", [("A", "1")]),
    ("mpiexec -env A 'x y' cmd", [("A", "x y")]),
    ("mpiexec -genvlist A,B cmd", [("A", None), ("B", None)]),
    ("mpirun -x A=1 -x B cmd", [("A", "1"), ("B", None)]),
    ("mpirun --mca btl_tcp_if_include eth0 cmd", [("OMPI_MCA_btl_tcp_if_include", "eth0")]),
    ("env A=B cmd", [("A", "B")]),
    ("env -i -u C A='q r' cmd", [("A", "q r")]),
    ("/usr/bin/env A=1 srun --export=B=2 cmd", [("A", "1"), ("B", "2")]),
    ("srun env A=1 cmd", [("A", "1")]),
    ("python3 -x A=1", []),
    # the program's own words are not the launcher's (a new user's podman line)
    ("mpirun -np 2 podman run --env NAME img ./a.out", []),
    ("mpirun -np 2 -x A=1 ./a.out -x B=2", [("A", "1")]),
    ("mpirun --oversubscribe -x A=1 python x.py -x B=2", [("A", "1")]),
    ("mpiexec -genv A 1 -n 2 -- prog -genv B 2", [("A", "1")]),
    ("srun -n 2 --export=ALL,A=1 ./a.out --export=B=2", [("A", "1")]),
    ("srun -n 2 hostname --export=B=2", []),
])
def test_launch_forms(line, want):
    import shlex

    assert launch_settings(shlex.split(line)) == want


def test_expansion_on_a_launch_line_is_unknown_and_leading_assignments_still_read():
    es = lint.parse_env_text('X=1 srun --export=A=$HOME,B="two words" prog\n', path="j.sh")
    assert [(e.name, e.value) for e in es] == [("X", "1"), ("A", None), ("B", "two words")]


def test_launch_line_findings_point_at_the_script(tmp_path):
    """A misspelt CVAR on an srun line is reported with the script's path and line."""
    from support import recorded_catalogues, recorded_facts

    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\nsrun --export=ALL,MPIR_CVAR_CH4_CMA_ENABEL=1 ./a.out\n")
    findings = lint.lint_entries(lint.read_env_file(script), facts=recorded_facts(),
                                 catalogues=recorded_catalogues(), libraries=BUILTIN_LIBRARIES)
    hit = [f for f in findings if f.name == "MPIR_CVAR_CH4_CMA_ENABEL"]
    assert hit and hit[0].path == str(script) and hit[0].line == 2


def _cma_findings(text: str, tmp_path):
    from advisor.plugins import load
    from support import recorded_catalogues, recorded_facts

    script = tmp_path / "job.sh"
    script.write_text(text)
    reg = load()
    findings = lint.lint_entries(lint.read_env_file(script), facts=recorded_facts(), knobs=reg.knobs,
                                 catalogues=recorded_catalogues(),
                                 probes={"mpich-cma": reg.probes["mpich-cma"]},
                                 libraries=BUILTIN_LIBRARIES)
    return [(f.finding.id, f.line) for f in findings if f.finding.id.startswith("cma-")]


def test_settings_of_two_launch_lines_never_meet(tmp_path):
    """A threshold on one srun line is not inert because another srun line turns CMA off:
    each launch line's settings reach only its own command (found by a new user)."""
    two = ("#!/bin/sh\n"
           "srun --export=ALL,MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=16384 ./a.out\n"
           "srun --export=ALL,MPIR_CVAR_CH4_CMA_ENABLE=0 ./b.out\n")
    assert ("cma-threshold-inert", 2) not in _cma_findings(two, tmp_path)
    one = ("#!/bin/sh\nsrun --export=ALL,MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=16384,"
           "MPIR_CVAR_CH4_CMA_ENABLE=0 ./a.out\n")
    assert ("cma-threshold-inert", 2) in _cma_findings(one, tmp_path)
    # a file-level export reaches every launch line after it
    base = ("#!/bin/sh\nexport MPIR_CVAR_CH4_CMA_ENABLE=0\n"
            "srun --export=ALL,MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD=16384 ./a.out\n")
    assert ("cma-threshold-inert", 3) in _cma_findings(base, tmp_path)


def test_the_same_name_on_two_launch_lines_is_no_duplicate(tmp_path):
    from support import recorded_catalogues, recorded_facts

    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\nsrun --export=ALL,MPIR_CVAR_CH4_CMA_ENABLE=1 ./a.out\n"
                      "srun --export=ALL,MPIR_CVAR_CH4_CMA_ENABLE=0 ./b.out\n")
    findings = lint.lint_entries(lint.read_env_file(script), facts=recorded_facts(),
                                 catalogues=recorded_catalogues(), libraries=BUILTIN_LIBRARIES)
    assert not [f for f in findings if f.finding.id == "duplicate"]
    es = lint.read_env_file(script)
    assert all(e.launch for e in es)
