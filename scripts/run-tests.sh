#!/usr/bin/env bash
# Runs lint and the whole test suite in .venv. Used by `make test` and by .ci/run.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export SPARK_LOCAL_IP=127.0.0.1
export PYTHONHASHSEED=0
$BIN/ruff check . || exit 1
$BIN/ruff format --check . || exit 1
$BIN/mypy || exit 1   # over diagnostics/, configured in pyproject.toml
$BIN/python -m pytest -q -p no:cacheprovider "$@"
code=$?
if [ "$code" = "5" ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
[ "$code" = "0" ] || exit $code
# the wheel installed into a fresh venv outside the checkout runs rules check and the demo
$BIN/python scripts/check_wheel.py
