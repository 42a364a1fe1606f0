"""STUB (replaced by the probe work): evidence ids and the fleet headline."""


def headline(evidence) -> dict:
    return {}
