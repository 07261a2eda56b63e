#!/usr/bin/env bash
# Installs Apache Flink from the apache-flink package (its jars: the runtime, the DataStream
# API and the local MiniCluster), one virtual environment per Flink version under .venv-flink
# (.venv-flink/2.2.0, .venv-flink/2.1.3), for the tests that check orderdoc's Flink rules
# against the real engine (tests/engines/real): orderdoc models Flink 2.1's and 2.2's rules
# (--flink-version; they differ when every split is idle), so each is checked against its own
# jars. The tests run a Java job on those jars with the machine's Java, so PyFlink's Python
# dependencies (pinned numpy, pandas, pyarrow, apache-beam..., which clash with the project's)
# are left out: --no-deps, about 315 MB to download and 360 MB installed per version.
#
# Idempotent: a stamp in each version's folder says it is installed. When a version cannot be
# installed (no package registry) its tests are skipped with the reason; the details are in
# .venv-flink/<version>/install.log. ORDERDOC_FLINK_VERSIONS overrides the versions (the
# tests expect these two: tests/engines/real/flink_engine.py, FLINK_JARS).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSIONS="${ORDERDOC_FLINK_VERSIONS:-2.2.0 2.1.3}"
ROOT=.venv-flink
PY="${PY:-python3}"
mkdir -p "$ROOT"
# The single-venv layout of earlier checkouts (2.2.0 directly in .venv-flink): removed, as
# nothing reads it any more (360 MB).
if compgen -G "$ROOT/.installed-apache-flink-*" >/dev/null; then
  rm -rf "$ROOT/bin" "$ROOT/lib" "$ROOT/lib64" "$ROOT/include" "$ROOT/share" \
    "$ROOT/pyvenv.cfg" "$ROOT/engine-check" "$ROOT/install.log" "$ROOT"/.installed-apache-flink-*
fi
# One install at a time, per version: `make test-all` (and CI) start one in the background
# beside the project's install and the lint, and scripts/run-tests.sh runs this again before
# the tests: that one waits for the first, then finds its stamps (or, if one failed, installs
# it itself and reports why). Every version's lock is taken first, in order, and each is let go
# as soon as its version is installed: the tests of the first version can start while the
# second downloads (they wait on their version's lock: tests/engines/real/flink_engine.py).
fd=9
declare -A LOCK_FD
for version in $VERSIONS; do
  mkdir -p "$ROOT/$version"
  eval "exec $fd>\"$ROOT/$version/.install.lock\""
  flock "$fd"
  LOCK_FD[$version]=$fd
  fd=$((fd - 1))
done
for version in $VERSIONS; do
  venv="$ROOT/$version"
  stamp="$venv/.installed"
  if [ ! -f "$stamp" ]; then
    echo "installing apache-flink $version into $venv for the real-engine tests (once; ~315 MB)..." >&2
    if { test -x "$venv/bin/python" || "$PY" -m venv "$venv"; } &&
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        --no-compile "apache-flink==$version" "apache-flink-libraries==$version" \
        >"$venv/install.log" 2>&1; then
      touch "$stamp"
    else
      echo "note: apache-flink $version could not be installed (see $venv/install.log); its Flink engine tests will be skipped" >&2
    fi
  fi
  eval "exec ${LOCK_FD[$version]}>&-"
done
