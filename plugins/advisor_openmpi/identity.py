"""STUB (replaced by the probe work): which Open MPI is installed, its components."""


def detect() -> dict:
    return {}
