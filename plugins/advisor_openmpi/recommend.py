"""STUB (replaced by the probe work): the pure recommend of the openmpi probe."""
from advisor.models import Advice


def recommend(evidence, facts):
    return Advice()
