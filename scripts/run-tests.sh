#!/usr/bin/env bash
# Runs lint and the tests in .venv. Used by `make test`, `make test-all` and .ci/run.
#
# Which tests (README, "Tests"):
#   make test       every test except those marked slow (end-to-end cases that start JVMs in
#                   subprocesses, servers, a browser or a cluster); no wheel check
#   make test-all   every test, then the wheel check (scripts/check_wheel.py)
#   CI=true         (set by .ci/run) the same as make test-all
# ORDERDOC_TESTS=all|fast overrides the choice; arguments go to pytest (e.g. tests/logs -x).
# The tests run on ORDERDOC_TEST_WORKERS pytest-xdist workers (default 2; 0: one process);
# each test file goes whole to one of them, heaviest files first (tests/conftest.py).
# ORDERDOC_TEST_TIMES=<file> records every test's wall and CPU time there (tests/timing.py;
# scripts/test_times.py sums it up per worker, folder and file).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export SPARK_LOCAL_IP=127.0.0.1
export PYTHONHASHSEED=0
# Python may write bytecode here (__pycache__ is ignored by git): the many commands the tests
# start as new processes then import orderdoc compiled once, not each time.
unset PYTHONDONTWRITEBYTECODE
tests="${ORDERDOC_TESTS:-}"
if [ -z "$tests" ]; then
  if [ "${CI:-}" = "true" ]; then tests=all; else tests=fast; fi
fi
case "$tests" in
  all) select=() ;;
  fast) select=(-m "not slow") ;;
  *) echo "ORDERDOC_TESTS: '$tests' is not a test set (all, fast)" >&2; exit 2 ;;
esac
$BIN/ruff check . || exit 1
$BIN/ruff format --check . || exit 1
$BIN/mypy || exit 1   # over diagnostics/, configured in pyproject.toml
echo "running the $tests test set (README, \"Tests\")" >&2
if [ "$tests" = "all" ]; then
  # the real-engine tests (tests/engines/real) need apache-flink in .venv-flink
  bash scripts/install-flink.sh
fi
workers="${ORDERDOC_TEST_WORKERS:-2}"
$BIN/python -m pytest -q -p no:cacheprovider -p tests.timing --durations=30 \
  -n "$workers" --dist loadfile \
  "${select[@]}" "$@"
code=$?
if [ "$code" = "5" ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
[ "$code" = "0" ] || exit $code
if [ "$tests" = "all" ]; then
  # the wheel installed into a fresh venv outside the checkout runs rules check and the demo
  $BIN/python scripts/check_wheel.py
fi
