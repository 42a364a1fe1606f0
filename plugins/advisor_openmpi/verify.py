"""STUB (replaced by the probe work): advised vs defaults."""


def verify(recommendation, ctx):
    return None
