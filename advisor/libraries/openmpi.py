"""Open MPI as a library record: MCA parameters as ``OMPI_MCA_<name>`` (Open MPI docs, "Setting
MCA parameter values"), the vader -> sm rename of 5.0, and the knob records lint checks them with.

The catalogue reader is a stub: ``ompi_info --all --parsable`` would list every MCA parameter of
the installed build, but no Open MPI is installed where this project is tested, so the reader
returns None when ``ompi_info`` is absent (always, here) and lint falls back to the knob records.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Optional

from advisor import hookimpl
from advisor.knobs import Knob
from advisor.libraries.record import Catalogue, Library

if TYPE_CHECKING:  # pragma: no cover
    from advisor.models import Facts

NAME = "openmpi"
#: ``MPI_Get_library_version`` banner of Open MPI (the library's own text).
BANNER = r"Open MPI v([0-9][\w.]*)"

#: Source: docs.open-mpi.org v5.0.x "Shared Memory" (the vader BTL was renamed sm in 5.0.0;
#: vader_ parameters are only aliases in 5.0.x, "will likely disappear"; single copy moved to the
#: smsc framework: xpmem, cma, knem) and background.md section 3.
SM_DOC = ("docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/shared-memory.html; "
          "Open MPI v5.0.0 release notes")
KNOBS: tuple[Knob, ...] = (
    Knob(library=NAME, name="OMPI_MCA_btl_vader_single_copy_mechanism", type="enum",
         allowed=["cma", "xpmem", "knem", "none"], versions="<5", renamed_to="OMPI_MCA_smsc",
         description="Open MPI <= 4.1 single-copy mechanism of the vader BTL; 5.x selects it "
                     "with the smsc framework (OMPI_MCA_smsc=cma|xpmem|knem)",
         source=SM_DOC),
    Knob(library=NAME, name="OMPI_MCA_smsc", type="str", versions=">=5",
         description="Open MPI 5 single-copy framework selection (cma, xpmem, knem; ^name "
                     "excludes)", source=SM_DOC),
)
#: Open MPI 5.0 renamed every ``btl_vader_*`` parameter to ``btl_sm_*`` (same source); the old
#: names stay aliases in 5.0.x.
RENAMED_PREFIXES = (("OMPI_MCA_btl_vader_", "OMPI_MCA_btl_sm_", "5"),)


def version(facts: "Facts") -> Optional[str]:
    return facts.mpi.version if facts.mpi.implementation == NAME else None


def catalogue(facts: Optional["Facts"]) -> Optional[Catalogue]:
    """Stub: None when ``ompi_info`` is absent; reading ``ompi_info --all --parsable`` is not
    implemented yet (no Open MPI to test against), so it is None in every case."""
    if shutil.which("ompi_info") is None:
        return None
    return None


def record() -> Library:
    return Library(name=NAME, prefixes=("OMPI_MCA_",), version=version, catalogue=catalogue,
                   knobs=KNOBS, renamed_prefixes=RENAMED_PREFIXES, version_field="mpi.version",
                   description="Open MPI MCA parameters", source=SM_DOC)


@hookimpl
def advisor_register_libraries(register):
    register(record())
