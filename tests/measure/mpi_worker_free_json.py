"""Worker for test_launch: ``python -m mpi_worker_free_json`` reports {"ok": true}."""

from advisor.measure.worker import report

report({"ok": True})
