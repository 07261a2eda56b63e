#!/usr/bin/env bash
# Installs Debian's chromium for the end-to-end browser test, when it is missing.
# Playwright's own browser download cannot work on a closed network, so the test drives
# /usr/bin/chromium. Without root or apt the browser test is skipped with a reason.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: /usr/bin/chromium is missing and cannot be installed here; the browser test will be skipped" >&2
  exit 0
fi
echo "installing Debian's chromium for the browser test..." >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists are refreshed (the slow part) only when the present ones cannot install it.
apt-get install -y -qq chromium >/dev/null 2>&1 || {
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
}
