"""Fixtures of the emit tests: makes ``emit_fixtures`` (test profiles) importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
