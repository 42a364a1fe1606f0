"""UCX as a library record (STUB, completed by the library work): ``UCX_*`` environment
variables.  Registered by the plugin that drives UCX (``advisor_openmpi``), not a built-in."""

from __future__ import annotations

from advisor.libraries.record import Library

NAME = "ucx"


def record() -> Library:
    return Library(name=NAME, prefixes=("UCX_",), description="UCX configuration variables",
                   source="openucx.readthedocs.io 'UCX environment parameters'")
