"""Tests of advisor.formats: makes tests/emit's helpers (emit_fixtures, consumers) importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "emit"))
