#!/usr/bin/env bash
# Installs Apache Flink from the apache-flink package (its jars: the runtime, the DataStream
# API and the local MiniCluster) into its own virtual environment, .venv-flink, for the tests
# that check orderdoc's Flink rules against the real engine (tests/engines/real). The tests run
# a Java job on those jars with the machine's Java, so PyFlink's Python dependencies (pinned
# numpy, pandas, pyarrow, apache-beam..., which clash with the project's) are left out:
# --no-deps, about 315 MB to download, 360 MB installed. Idempotent: a stamp names the
# installed version. When it cannot be installed (no package registry) the Flink tests are
# skipped with the reason; the details are in .venv-flink/install.log.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${ORDERDOC_FLINK_VERSION:-2.2.0}"
VENV=.venv-flink
STAMP="$VENV/.installed-apache-flink-$VERSION"
PY="${PY:-python3}"
if [ -f "$STAMP" ]; then
  exit 0
fi
# One install at a time: `make test-all` (and CI) start one in the background beside the
# project's install and the lint, and scripts/run-tests.sh runs this again before the tests:
# that one waits here for the first, then finds its stamp (or, if it failed, installs itself
# and reports why).
mkdir -p "$VENV"
exec 9>"$VENV/.install.lock"
flock 9
if [ -f "$STAMP" ]; then
  exit 0
fi
echo "installing apache-flink $VERSION into $VENV for the real-engine tests (once; ~315 MB)..." >&2
test -x "$VENV/bin/python" || "$PY" -m venv "$VENV"
if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
  "apache-flink==$VERSION" "apache-flink-libraries==$VERSION" >"$VENV/install.log" 2>&1; then
  echo "note: apache-flink $VERSION could not be installed (see $VENV/install.log); the Flink engine tests will be skipped" >&2
  exit 0
fi
rm -f "$VENV"/.installed-apache-flink-*
touch "$STAMP"
