#!/usr/bin/env bash
# Installs Debian's prometheus-alertmanager for the watcher's end-to-end test, when missing.
# The test starts it on 127.0.0.1 (own config, own storage folder); the system service the
# package may start is not used. Without root or apt, or when the install fails, this warns
# and exits 0: the test is skipped with a reason.
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
# A failed install (no network, a broken mirror, a held package) must not fail `make test`:
# the Alertmanager test is then skipped with its reason, the other watcher tests still run.
# The package lists are refreshed (the slow part) only when the present ones cannot install it.
install() { apt-get install -y -qq --no-install-recommends prometheus-alertmanager >/dev/null 2>&1; }
if ! install && ! { apt-get update -qq >/dev/null && install; }; then
  echo "warning: installing prometheus-alertmanager failed; the Alertmanager test will be skipped" >&2
  exit 0
fi
