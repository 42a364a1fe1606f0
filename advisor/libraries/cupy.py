"""CuPy as a library record: the ``CUPY_`` environment variables (docs.cupy.dev, "Environment
variables"); its version is the installed ``cupy*`` distribution (``cupy-cuda12x``, ...)."""

from __future__ import annotations

from advisor import hookimpl
from advisor.libraries.record import Library, python_package_version

NAME = "cupy"


def record() -> Library:
    return Library(name=NAME, prefixes=("CUPY_",), version=python_package_version(NAME),
                   description="CuPy environment variables",
                   packages=(("spack", "py-cupy"), ("easybuild", "CuPy")),
                   source="docs.cupy.dev/en/stable/reference/environment.html")


@hookimpl
def advisor_register_libraries(register):
    register(record())
