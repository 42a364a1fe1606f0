"""MPICH's entry to the shared 2-rank worker (``advisor.measure.mpi.rank``, whose docstring
describes the identity, smoke, sweep and paired modes): runs under the launcher and adds what
only MPICH has.

Usage::

    python -m advisor_mpich_cma.workers.rank identity|smoke|sweep|paired ...
    python -m advisor_mpich_cma.workers.rank route --checks 1:16384,16384:16384,16384:16383

* the paired mode's switch: the threshold ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD`` written at
  run time through MPI_T (``advisor_mpich_cma.mpit``) on both ranks, launched with CMA enabled:
  1 (CMA at every size: ``cma-on``) or 2**30 (the copy path: ``cma-off``); when MPI_T is
  missing or a write fails on any rank the result has ``mpit_error`` and no sizes (the probe then
  falls back to separate launches);
* ``env``: the MPICH settings of the environment that shape the single-copy path;
* ``route``: ``--checks T:N,...``; per phase the threshold ``T`` written through MPI_T and
  messages of ``N`` bytes each way, nothing timed: the probe runs it under ``strace`` and counts
  each phase's CMA calls (``advisor_mpich_cma.trust``, code: ``workers.route``).
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

#: The environment variables recorded as ``env``: MPICH's CVAR prefixes, names about single copy.
ENV_PREFIXES = ("MPIR_CVAR_", "MPICH_", "MPIR_PARAM_")
ENV_WORDS = ("CMA", "SINGLE_COPY", "IPC", "CELL_SIZE", "GPU_SUPPORT")


def env_cvars() -> dict:
    """The MPICH single-copy settings of this process's environment (``ENV_PREFIXES`` and
    ``ENV_WORDS``), name -> value."""
    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith(ENV_PREFIXES) and any(w in k for w in ENV_WORDS)}


class ThresholdSwitch:
    """The paired mode's switch: the CMA threshold CVAR of this rank's libmpi through MPI_T
    (``read() -> int``, ``write(bytes)``, ``close()``, ``path``: the library loaded).  Raises
    ``advisor.measure.mpi.paired.SwitchError`` where MPI_T refuses."""

    def __init__(self) -> None:
        from advisor_mpich_cma.knobs import CMA_THRESHOLD
        from advisor_mpich_cma.mpit import Mpit

        self._mpit = _checked(Mpit)
        self._cvar = _checked(self._mpit.cvar, CMA_THRESHOLD)
        self.path = self._mpit.path

    def read(self) -> int:
        """The threshold (bytes) this rank's library holds now."""
        return _checked(self._cvar.read)

    def write(self, value: int) -> None:
        """Write the threshold (bytes); every rank must write the same value (scope ALL_EQ)."""
        _checked(self._cvar.write, value)

    def close(self) -> None:
        """End the MPI_T session."""
        self._mpit.close()


def _checked(fn, *args):
    """``fn(*args)``, an ``MpitError`` raised as the shared worker's ``SwitchError``."""
    from advisor.measure.mpi.paired import SwitchError

    from advisor_mpich_cma.mpit import MpitError

    try:
        return fn(*args)
    except MpitError as exc:
        raise SwitchError(str(exc)) from exc


def main(argv: Sequence[str]) -> int:
    """The shared worker's ``main`` with MPICH's switch, ``env`` and ``route`` mode."""
    from advisor.measure.mpi.rank import main as run

    from advisor_mpich_cma.workers.route import route_mode

    return run(argv, open_switch=ThresholdSwitch, extra={"route": route_mode},
               env_of=env_cvars, prog="python -m advisor_mpich_cma.workers.rank")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
