#!/usr/bin/env bash
# Runs lint and the tests in .venv. Used by `make test`, `make test-all` and .ci/run.
#
# Which tests (README, "Tests"):
#   make test       every test except those marked slow (end-to-end cases that start JVMs in
#                   subprocesses, servers, a browser or a cluster); no wheel check
#   make test-all   every test, and the wheel check (scripts/check_wheel.py) beside the lint
#                   and them
#   CI=true         (set by CI, which runs .ci/run) the same as make test-all
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
# Seconds since the last call, for the step lines below (what each step took).
step_start=$SECONDS
took() { echo "run-tests: $1 took $((SECONDS - step_start)) s" >&2; step_start=$SECONDS; }
background=()
if [ "$tests" = "all" ]; then
  # Set-up for the full set, in the background beside the lint (mypy keeps one core busy)
  # and, for Flink, the tests:
  # apache-flink for the real-engine tests (tests/engines/real) into .venv-flink (`make
  # test-all` may have started it already: install-flink.sh then waits for that one), and
  # the class archive the tests' Spark JVMs map their classes from (tests/jvm_archive.py;
  # `make test-all` and CI start it already after the venv's install, beside the Debian
  # installs: this one then waits for that one).
  bash scripts/install-flink.sh &
  flink=$!
  $BIN/python -m tests.jvm_archive &
  archive=$!
  # The wheel check (the wheel installed into a fresh venv outside the checkout runs rules
  # check, the demo and the app) needs nothing of the lint or the tests: it starts now,
  # niced, so it takes the core the lint and the archive leave and less from the tests; its
  # output is shown after theirs.
  wheel_log=$(mktemp)
  nice -n 10 $BIN/python scripts/check_wheel.py >"$wheel_log" 2>&1 &
  wheel=$!
  background=("$flink" "$archive" "$wheel")
fi
lint() {
  $BIN/ruff check . && $BIN/ruff format --check . && $BIN/mypy # mypy: diagnostics/, pyproject.toml
}
if ! lint; then
  # the set-up and the wheel check stop too (and the commands they run)
  for pid in "${background[@]}"; do pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
  exit 1
fi
took "lint (ruff, mypy)"
echo "running the $tests test set (README, \"Tests\")" >&2
if [ "$tests" = "all" ]; then
  # apache-flink may still be installing: the tests that need it (marked flink) are handed
  # out after the other slow files and wait for its lock (tests/engines/real/flink_engine.py)
  # without the archive the tests run as they do in a plain pytest, only slower
  wait "$archive" || echo "run-tests: warning: no class archive for the tests' JVMs (tests/jvm_archive.py); the tests run without it" >&2
  took "waiting for the class archive"
fi
workers="${ORDERDOC_TEST_WORKERS:-2}"
$BIN/python -m pytest -q -p no:cacheprovider -p tests.timing --durations=30 \
  -n "$workers" --dist loadfile \
  "${select[@]}" "$@"
code=$?
took pytest
if [ "$code" = "5" ]; then
  echo "pytest collected no tests" >&2
  code=1
fi
if [ "$tests" = "all" ]; then
  if ! wait "$flink"; then
    echo "run-tests: installing apache-flink failed (scripts/install-flink.sh)" >&2
    [ "$code" != "0" ] || code=1
  fi
  wait "$wheel"
  wheel_code=$?
  cat "$wheel_log"
  rm -f "$wheel_log"
  took "the wheel check's rest after the tests"
  if [ "$wheel_code" != "0" ]; then
    echo "run-tests: the wheel check failed (scripts/check_wheel.py, output above)" >&2
    [ "$code" != "0" ] || code=1
  fi
fi
[ "$code" = "0" ] || echo "run-tests: pytest failed (exit code $code)" >&2
exit $code
