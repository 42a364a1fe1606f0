"""MVAPICH, as far as the advisor knows it: how it names itself.  No library record
(``advisor.libraries.record.Library``) yet: its ``MV2_*`` settings are not read, so this module
only identifies it (``advisor.facts.mpi``)."""

from __future__ import annotations

import re

#: ``MpiFacts.implementation`` of MVAPICH (MVAPICH2 included).
NAME = "mvapich"
#: ``MPI_Get_library_version`` banners of MVAPICH ("MVAPICH2 Version      :	2.3.7"), with
#: the flavour they mean.
BANNERS = ((re.compile(r"MVAPICH2?\s+Version\s*:\s*([0-9][\w.]*)", re.I), NAME),)
