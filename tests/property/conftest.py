"""Make tests/property/strategies.py importable from the test files here.  (Hypothesis'
settings for a shared machine are in tests/conftest.py, for every folder.)"""

import sys
from pathlib import Path

_here = str(Path(__file__).resolve().parent)
if _here not in sys.path:
    sys.path.insert(0, _here)
