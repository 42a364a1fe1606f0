"""STUB (replaced by the format/lint work): Open MPI's mca-params.conf format."""
NAME = "mca-params"
DESCRIPTION = "Open MPI parameter file (mca-params.conf)"
EXTENSION = ".conf"


def render(profile, options) -> str:
    return "\n"


def parse(text, path):
    return []
