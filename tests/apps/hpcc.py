"""HPC Challenge (HPCC 1.5.0) built from Debian's source against the MPICH the tests run.

A real public HPC benchmark for the tests of ``advisor verify --app`` ("real parts, not mocks").
CI reaches only PyPI and Debian's archive, so the upstream tarball comes from Debian's ``hpcc``
source package (``apt-get source --download-only hpcc``: only the ``.orig.tar.gz`` and the
``.dsc`` are needed; the ``.debian.tar.xz`` is not).  The tarball's SHA-256 is checked against
the ``.dsc`` apt fetched (itself checked by apt against the signed Sources index) and against
the value pinned below.  ``scripts/system-deps.sh`` adds the ``deb-src`` entry, BLAS and a C
compiler where it has root.

Use from a test (``tests/`` is on ``pythonpath``)::

    from apps.hpcc import need_hpcc, run_hpcc
    exe = need_hpcc()                       # the cached binary, or pytest.skip(reason)
    summary = run_hpcc(exe, tmp_path)       # {"AvgPingPongBandwidth_GBytes": "10.54", ...}

HPCC reads ``hpccinf.txt`` from its working directory and APPENDS its results to
``hpccoutf.txt`` there; nothing useful goes to stdout.  A caller that wants a metric therefore
runs it in a fresh directory (``run_hpcc`` does) or, as a command for ``verify --app``, removes
the file first and prints it after (``hpcc_app_command``)::

    sh -c 'rm -f hpccoutf.txt && mpiexec -n 2 /path/hpcc && cat hpccoutf.txt'

and takes the metric with a regex such as ``^AvgPingPongBandwidth_GBytes=([0-9.eE+-]+)``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "1.5.0"
ORIG = f"hpcc_{VERSION}.orig.tar.gz"
#: SHA-256 of hpcc_1.5.0.orig.tar.gz, the Checksums-Sha256 line of Debian bookworm's
#: hpcc_1.5.0-3.dsc (apt-get source, 2026-12); Debian never changes an orig tarball of a version.
ORIG_SHA256 = "0a6fef7ab9f3347e549fed65ebb98234feea9ee18aea0c8f59baefbe3cf7ffb8"
#: the name of our HPL make include (hpl/Make.<ARCH>), chosen by us
ARCH = "advisor"
#: summary keys (``Key=value`` lines between "Begin of Summary section." and "End of Summary
#: section.") a tiny run always prints; the first three are the ones measured for spread
#: (tests/apps/README.md)
METRICS = ("AvgPingPongBandwidth_GBytes", "HPL_Tflops", "StarSTREAM_Triad",
           "MinPingPongBandwidth_GBytes", "AvgPingPongLatency_usec",
           "NaturallyOrderedRingBandwidth_GBytes", "StarDGEMM_Gflops", "MPIRandomAccess_GUPs")


#: The subprocess time limits below are hang guards, far above what was measured on a 2-core
#: VM (tests/apps/README.md): download 1 s, build 10 s quiet and 45 s loaded, one n=1000 run
#: 0.8 s quiet and 5.4 s at worst under load.


class HpccUnavailable(Exception):
    """HPCC cannot be had on this machine (no apt source, no network, no BLAS, no compiler):
    a reason to skip, never a test failure."""


def mpi_bin() -> Path:
    """The folder of the MPICH wheel's tools: the one next to ``sys.executable``."""
    return Path(sys.executable).parent


def mpich_version(bin_dir: Path | None = None) -> str:
    """``MPICH Version`` as ``mpichversion`` in ``bin_dir`` prints it (e.g. ``5.0.2``)."""
    tool = (bin_dir or mpi_bin()) / "mpichversion"
    if not tool.exists():
        raise HpccUnavailable(f"no mpichversion next to {sys.executable} (mpich wheel missing)")
    out = subprocess.run([str(tool)], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"MPICH Version:\s*(\S+)", out)
    if not m:
        raise HpccUnavailable(f"cannot read the MPICH version from {tool}: {out[:200]!r}")
    return m.group(1)


def cache_root() -> Path:
    """``$HPC_ADVISOR_TEST_CACHE`` or ``~/.cache/hpc-advisor-tests``, kept between runs."""
    env = os.environ.get("HPC_ADVISOR_TEST_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "hpc-advisor-tests"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dsc_sha256(dsc_text: str, name: str) -> str | None:
    """The SHA-256 a ``.dsc``'s ``Checksums-Sha256`` field gives for file ``name``."""
    m = re.search(r"^Checksums-Sha256:\n((?:[ \t].*\n?)+)", dsc_text, re.M)
    for line in (m.group(1).splitlines() if m else []):
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return parts[0]
    return None


def hpcc_tarball(dest_dir: Path | None = None) -> Path:
    """The verified upstream tarball, cached as ``<cache>/src/hpcc_1.5.0.orig.tar.gz``.

    Downloaded with ``apt-get source --download-only hpcc`` when missing.  apt exits non-zero
    when the ``.debian.tar.xz`` is missing from the mirror (a 404 seen on bookworm's mirror):
    that is tolerated, what counts is the tarball and its checksum.  Raises HpccUnavailable when
    apt cannot get it, RuntimeError when the tarball does not match (never used then)."""
    dest_dir = dest_dir or cache_root() / "src"
    dest = dest_dir / ORIG
    if dest.exists() and sha256(dest) == ORIG_SHA256:
        return dest
    apt = shutil.which("apt-get")
    if not apt:
        raise HpccUnavailable("no apt-get here: HPCC's source comes from Debian's hpcc package")
    dest_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest_dir) as tmp:
        done = subprocess.run([apt, "source", "--download-only", "-qq", "hpcc"], cwd=tmp,
                              capture_output=True, text=True, timeout=600)
        got = Path(tmp) / ORIG
        dscs = sorted(Path(tmp).glob(f"hpcc_{VERSION}-*.dsc"))
        if not got.exists() or not dscs:
            raise HpccUnavailable(
                f"apt-get source hpcc gave no {ORIG} and .dsc (exit {done.returncode}; run "
                f"scripts/system-deps.sh as root for the deb-src entry): "
                f"{done.stderr.strip()[-300:]}")
        want = dsc_sha256(dscs[0].read_text(errors="replace"), ORIG)
        have = sha256(got)
        if have != want or have != ORIG_SHA256:
            raise RuntimeError(f"{ORIG}: sha256 {have}, .dsc says {want}, pinned {ORIG_SHA256}")
        os.replace(got, dest)
    return dest


def make_arch_text(mpicc: Path, cflags: str = "-O2") -> str:
    """Our HPL make include ``hpl/Make.advisor``: the variables HPCC's build reads (names
    from HPL's build convention), values for the mpich wheel's ``mpicc`` and Debian's BLAS.

    The reference BLAS of Debian's libblas3 (>= 3.10) carries the CBLAS symbols, so HPL calls
    them directly (``-DHPL_CALL_CBLAS``) and links ``-lblas``; MPI comes with ``mpicc``, so no
    MPI include or library paths are set."""
    lines = [
        "# generated by tests/apps/hpcc.py for hpc-advisor's tests; do not edit",
        "SHELL     = /bin/sh",
        "CD        = cd",
        "CP        = cp",
        "LN_S      = ln -s",
        "MKDIR     = mkdir -p",
        "RM        = rm -f",
        "TOUCH     = touch",
        "ARCH      = $(arch)",
        "# the build runs in hpl/lib/arch/build, three levels below hpl/",
        "TOPdir    = ../../..",
        "INCdir    = $(TOPdir)/include",
        "LIBdir    = $(TOPdir)/lib/$(ARCH)",
        "HPLlib    = $(LIBdir)/libhpl.a",
        "HPL_OPTS  = -DHPL_CALL_CBLAS",
        "HPL_DEFS  = $(HPL_OPTS) -I$(INCdir)",
        f"CC        = {mpicc}",
        "# HPL_dlamch is compiled without optimisation (it probes the floating-point unit)",
        "CCNOOPT   = $(HPL_DEFS)",
        f"CCFLAGS   = $(HPL_DEFS) {cflags}",
        "LINKER    = $(CC)",
        "LINKFLAGS = $(CCFLAGS)",
        "HPL_LIBS  = $(HPLlib) -lblas -lm",
        "ARCHIVER  = ar",
        "ARFLAGS   = r",
        "RANLIB    = ranlib",
    ]
    return "\n".join(lines) + "\n"


def check_toolchain(mpicc: Path, work: Path) -> None:
    """Compile and link a one-line CBLAS call with ``mpicc -lblas``, or raise HpccUnavailable
    (no C compiler, no libblas-dev): what scripts/system-deps.sh installs."""
    src = work / "blascheck.c"
    src.write_text("double cblas_ddot(int, const double *, int, const double *, int);\n"
                   "int main(void) { double x = 1.0;\n"
                   "  return cblas_ddot(1, &x, 1, &x, 1) != 1.0; }\n")
    try:
        done = subprocess.run([str(mpicc), str(src), "-o", str(work / "blascheck"), "-lblas"],
                              capture_output=True, text=True, timeout=120)
    except OSError as exc:
        raise HpccUnavailable(f"cannot run {mpicc}: {exc}") from exc
    if done.returncode != 0:
        raise HpccUnavailable(f"mpicc cannot link a CBLAS call with -lblas (install libblas-dev "
                              f"and gcc: scripts/system-deps.sh): {done.stderr.strip()[-300:]}")


def build_hpcc(dest: Path, mpicc: Path, jobs: int | None = None) -> Path:
    """Unpack the tarball next to ``dest``, write ``hpl/Make.advisor``, ``make`` and move the
    binary to ``dest``.  Takes about 10 s on 2 cores (measured: 15 s of CPU, make -j2).
    Raises RuntimeError with the tail of the build log when the build itself fails."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix="build-") as tmp:
        work = Path(tmp)
        check_toolchain(mpicc, work)
        tarball = hpcc_tarball()
        with tarfile.open(tarball) as tf:
            # the "data" filter (no links out, no devices) where this Python has it
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tf.extractall(work, **safe)
        top = work / f"hpcc-{VERSION}"
        (top / "hpl" / f"Make.{ARCH}").write_text(make_arch_text(mpicc))
        log = work / "build.log"
        with log.open("w") as fh:
            done = subprocess.run(["make", f"-j{jobs or os.cpu_count() or 1}", f"arch={ARCH}"],
                                  cwd=top, stdout=fh, stderr=subprocess.STDOUT, timeout=900)
        exe = top / "hpcc"
        if done.returncode != 0 or not exe.exists():
            raise RuntimeError(f"hpcc build failed (make exit {done.returncode}):\n"
                               f"{log.read_text(errors='replace')[-2000:]}")
        os.replace(exe, dest)
    return dest


def hpcc_binary() -> Path:
    """The ``hpcc`` executable built with the mpicc next to ``sys.executable`` against Debian's
    BLAS, built once into ``<cache>/hpcc-1.5.0-mpich-<version>-<hash>/hpcc`` under a file lock
    (parallel test processes wait for one build).  The hash covers our make include, which
    names that mpicc: another venv (another rpath) or other flags get their own build.
    Raises HpccUnavailable (skip) or RuntimeError (a broken build: fail)."""
    from filelock import FileLock

    mpicc = mpi_bin() / "mpicc"
    if not mpicc.exists():
        raise HpccUnavailable(f"no mpicc next to {sys.executable} (mpich wheel missing)")
    key = hashlib.sha256(make_arch_text(mpicc).encode()).hexdigest()[:8]
    folder = cache_root() / f"hpcc-{VERSION}-mpich-{mpich_version()}-{key}"
    exe = folder / "hpcc"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not exe.exists():
            build_hpcc(exe, mpicc)
    return exe


def need_hpcc() -> Path:
    """``hpcc_binary()``, or skip the calling test with the reason HPCC cannot be had."""
    import pytest

    try:
        return hpcc_binary()
    except HpccUnavailable as exc:
        pytest.skip(f"HPCC {VERSION} unavailable: {exc}")


def hpccinf_text(n: int = 1000, nb: int = 80, p: int = 1, q: int = 2) -> str:
    """An ``hpccinf.txt`` for one small HPL problem (``n`` x ``n``, blocks of ``nb``) on a
    ``p`` x ``q`` process grid (p*q = the number of ranks), written by us.  nb=80 is not
    tuned (the block size HPCC's own example input uses); 1 x 2 suits ``mpiexec -n 2``.

    HPCC sizes STREAM, DGEMM, FFT and RandomAccess from HPL's matrix memory (8*n*n bytes over
    all ranks), so a small ``n`` makes every test small; n=1000 takes about 0.8 s with
    ``mpiexec -n 2`` here (tests/apps/README.md).  The ping-pong and ring tests always use
    8-byte and 2,000,000-byte messages whatever ``n`` is.  Values after the problem and grid
    are the usual HPL choices; line 32 is a separator HPCC skips; the last four lines add no
    extra PTRANS sizes (PTRANS then uses n/2)."""
    rows = [
        ("hpc-advisor test input (tests/apps/hpcc.py)", None),
        ("HPL + HPCC, one small problem", None),
        ("hpccoutf.txt", "output file (HPCC always writes hpccoutf.txt)"),
        ("8", "output device (HPCC forces the file)"),
        ("1", "number of problem sizes"), (str(n), "N"),
        ("1", "number of block sizes"), (str(nb), "NB"),
        ("0", "process map: row-major"),
        ("1", "number of process grids"), (str(p), "P"), (str(q), "Q"),
        ("16.0", "residual threshold"),
        ("1", "number of panel factorisations"), ("2", "PFACT: right-looking"),
        ("1", "number of recursion stops"), ("4", "NBMIN"),
        ("1", "number of recursion divisions"), ("2", "NDIV"),
        ("1", "number of recursive factorisations"), ("1", "RFACT: Crout"),
        ("1", "number of broadcasts"), ("1", "BCAST: increasing ring, modified"),
        ("1", "number of look-ahead depths"), ("1", "DEPTH"),
        ("2", "SWAP: mixed"), ("64", "swap threshold"),
        ("0", "L1 transposed"), ("0", "U transposed"),
        ("1", "equilibration on"), ("8", "alignment in doubles"),
        ("---- line 32: separator, skipped by HPCC ----", None),
        ("0", "extra PTRANS problem sizes"), ("0", "(their values)"),
        ("0", "extra PTRANS block sizes"), ("0", "(their values)"),
    ]
    out = [text if note is None else f"{text:<12} {note}" for text, note in rows]
    assert len(out) == 36 and all(len(line) < 80 for line in out)  # HPCC reads 82-byte lines
    return "\n".join(out) + "\n"


def write_hpccinf(directory: Path, **params) -> Path:
    """Write ``hpccinf_text(**params)`` as ``directory/hpccinf.txt``; returns its path."""
    path = Path(directory) / "hpccinf.txt"
    path.write_text(hpccinf_text(**params))
    return path


def parse_summary(text: str) -> dict[str, str]:
    """The ``Key=value`` lines of the LAST summary section of an ``hpccoutf.txt`` (the file is
    appended to, so an old file holds several)."""
    start = text.rfind("Begin of Summary section.")
    if start < 0:
        return {}
    end = text.find("End of Summary section.", start)
    body = text[start:end if end >= 0 else len(text)].splitlines()[1:]
    return dict(line.split("=", 1) for line in body if "=" in line)


def hpcc_app_command(exe: Path, np: int = 2) -> list[str]:
    """A command for ``verify --app`` run in a directory holding ``hpccinf.txt``: it starts
    from an empty ``hpccoutf.txt`` and prints it, so the metric regex sees one run only."""
    mpiexec = mpi_bin() / "mpiexec"
    run = f"rm -f hpccoutf.txt && {shlex.quote(str(mpiexec))} -n {int(np)} {shlex.quote(str(exe))}"
    return ["sh", "-c", f"{run} && cat hpccoutf.txt"]


def run_hpcc(exe: Path, workdir: Path, np: int = 2, env: dict | None = None,
             timeout: float = 120, **params) -> dict[str, str]:
    """Run ``mpiexec -n np exe`` in ``workdir`` (created; its ``hpccoutf.txt`` is removed
    first) with ``hpccinf_text(**params)``; returns the summary.  Raises RuntimeError with
    the output when it fails."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    write_hpccinf(workdir, **params)
    (workdir / "hpccoutf.txt").unlink(missing_ok=True)
    done = subprocess.run([str(mpi_bin() / "mpiexec"), "-n", str(np), str(exe)], cwd=workdir,
                          capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})
    out = workdir / "hpccoutf.txt"
    summary = parse_summary(out.read_text(errors="replace")) if out.exists() else {}
    if done.returncode != 0 or not summary:
        raise RuntimeError(f"hpcc failed (exit {done.returncode}): "
                           f"{(done.stdout + done.stderr).strip()[-1000:]}")
    return summary
