"""Intel MPI, as far as the advisor knows it: how it names itself and how it is launched.  No
library record (``advisor.libraries.record.Library``) yet: its ``I_MPI_*`` settings are not
read, so this module only identifies it (``advisor.facts.mpi``, ``advisor.measure.launch``)."""

from __future__ import annotations

import re

from advisor.libraries.mpich import HYDRA

#: ``MpiFacts.implementation`` of Intel MPI.
NAME = "intelmpi"
#: ``MPI_Get_library_version`` banners of Intel MPI ("Intel(R) MPI Library 2021.10 for
#: Linux*"), with the flavour they mean.
BANNERS = ((re.compile(r"Intel\(R\) MPI Library\s+([0-9][\w.]*)", re.I), "intel"),)
#: Its ``mpiexec`` is ``mpiexec.hydra``, MPICH's process manager (``advisor.libraries.mpich``
#: knows how to recognise and start it).
LAUNCHER_FAMILY = HYDRA
