#!/usr/bin/env bash
# The whole test suite with one core kept busy by another process, RUNS times in a row
# (default 3): the check that live tests hold on a loaded 2-core machine.
#   bash scripts/test-loaded.sh [RUNS]      (after `make test` has built .venv-test)
# The busy loop is a plain Python process started here and stopped by its PID at exit.
# Prints one line per run on stderr: run number, exit status, seconds.
set -u
cd "$(dirname "$0")/.."
runs=${1:-3}
py=${TVENV:-.venv-test}/bin/python
[ -x "$py" ] || { echo "test-loaded: $py missing; run 'make test' first" >&2; exit 2; }
python3 -c 'while True: pass' &
hog=$!
trap 'kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null' EXIT
rc_all=0
for i in $(seq 1 "$runs"); do
  t0=$(date +%s)
  PATH="$PWD/${TVENV:-.venv-test}/bin:$PATH" "$py" -m pytest -q ${PYTEST_ARGS:-}
  rc=$?
  echo "test-loaded: run $i/$runs exit $rc in $(( $(date +%s) - t0 )) s (one core busy, pid $hog)" >&2
  [ "$rc" = 0 ] || rc_all=$rc
done
exit "$rc_all"
