"""Make tests/property/strategies.py importable from the test files here, and set Hypothesis
up for a shared machine.

Inputs stay random (other inputs of the same kinds are the point), but nothing here depends on
how fast the machine is: no per-example deadline and no "data generation too slow" health
check, which a loaded CI machine can trip without any fault in the code under test.
"""

import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

_here = str(Path(__file__).resolve().parent)
if _here not in sys.path:
    sys.path.insert(0, _here)

settings.register_profile(
    "advisor", deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.load_profile("advisor")
