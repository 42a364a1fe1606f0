"""STUB (replaced by the format/lint work): Open MPI lint findings."""


def lint(env, facts) -> list:
    return []
