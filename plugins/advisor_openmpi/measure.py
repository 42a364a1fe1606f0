"""STUB (replaced by the probe work): check and measure of the openmpi probe."""
from advisor.probe import Applicability


def check(facts):
    return Applicability(usable=False, reason="not implemented yet")


def measure(ctx):
    return []
