"""DLA-Future as a library record: it reads ``DLAF_<NAME>`` for each of its configuration
options (eth-cscs/DLA-Future ``src/init.cpp``); its version is the installed Python distribution
when one is recorded (a plugin that knows better may register its own record instead)."""

from __future__ import annotations

from advisor import hookimpl
from advisor.libraries.record import Library, python_package_version

NAME = "dla-future"


def record() -> Library:
    return Library(name=NAME, prefixes=("DLAF_",), version=python_package_version(NAME),
                   description="DLA-Future configuration variables",
                   packages=(("spack", "dla-future"), ("easybuild", "DLA-Future")),
                   source="github.com/eth-cscs/DLA-Future src/init.cpp")


@hookimpl
def advisor_register_libraries(register):
    register(record())
