# The module of its own for settings every program reads (docs/deploy.md, "Spack"):
# `advisor emit -f spack-modules` with `[spack] every_program = "separate"` writes them into
# the environment block of this package's module.

from spack.package import *


class HpcAdvisorTunables(BundlePackage):
    """A module of its own for the settings hpc-advisor measured that every program reads
    (GLIBC_TUNABLES): this bundle installs nothing; its module's environment comes from the
    modules.yaml `advisor emit -f spack-modules` writes with [spack] every_program = "separate".
    Sites load it (or make it a default module) where the settings should apply."""

    homepage = "https://hpc-advisor.invalid/"

    license("BSD-3-Clause")

    version("1.0")
