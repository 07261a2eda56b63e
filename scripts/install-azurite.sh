#!/usr/bin/env bash
# Installs the Azurite storage emulator (npm package `azurite`, v3) into ./.azurite for the
# storage tests (tests/storage): they start its Blob service on 127.0.0.1 (a free port, a
# temporary folder, no telemetry) and upload the bundled samples to it. Idempotent: nothing
# happens when the pinned version is there. Node.js comes from Debian when it is missing.
# In CI (CI=true) the storage tests must run: a failed install fails here, loudly (exit 1).
# Elsewhere, without node, npm or the registry, the storage tests are skipped with a reason,
# so this warns and exits 0.
set -euo pipefail
# give_up MESSAGE: fail in CI, warn (the tests skip) elsewhere
give_up() {
  if [ "${CI:-}" = "true" ]; then
    echo "error: $1; CI runs the storage tests (tests/storage), so Azurite is required" >&2
    exit 1
  fi
  echo "warning: $1; the storage tests (Azurite) will be skipped" >&2
  exit 0
}
cd "$(dirname "$0")/.."
VERSION=3.37.0
DIR=.azurite
BIN="$DIR/node_modules/.bin/azurite-blob"
installed() {
  [ -x "$BIN" ] && grep -q "\"version\": \"$VERSION\"" "$DIR/node_modules/azurite/package.json" 2>/dev/null
}
if installed; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's nodejs and npm for the storage tests (Azurite)..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null 2>&1 || true
    }
  fi
  if ! command -v npm >/dev/null 2>&1; then
    give_up "npm is missing and cannot be installed here"
  fi
fi
echo "installing azurite $VERSION into $DIR for the storage tests..." >&2
mkdir -p "$DIR"
# a lock: two `make` runs at once install once
exec 9>"$DIR/.install.lock"
flock 9
if installed; then
  exit 0
fi
if ! npm install --prefix "$DIR" --no-audit --no-fund --no-save --loglevel=error \
  --engine-strict=false "azurite@$VERSION" >/dev/null; then
  give_up "installing azurite $VERSION with npm failed"
fi
if ! installed; then
  give_up "azurite $VERSION is not in $DIR after npm install"
fi
