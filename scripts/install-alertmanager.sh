#!/usr/bin/env bash
# Installs Debian's prometheus-alertmanager for the watcher's end-to-end test, when missing.
# The test starts it on 127.0.0.1 (own config, own storage folder); the system service the
# package may start is not used. Without root or apt the test is skipped with a reason.
set -euo pipefail
if [ -x /usr/bin/prometheus-alertmanager ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: /usr/bin/prometheus-alertmanager is missing and cannot be installed here; the Alertmanager test will be skipped" >&2
  exit 0
fi
echo "installing Debian's prometheus-alertmanager for the watcher test..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends prometheus-alertmanager >/dev/null
