#!/usr/bin/env bash
# granite view's browser tests drive Debian's chromium; they fail, never
# skip, when it is missing (only outside CI may GRANITE_NO_BROWSER=1 skip
# them). make test runs this first so a fresh machine has it.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${GRANITE_CHROMIUM:-}" ] || [ "${GRANITE_NO_BROWSER:-}" = 1 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "make test: granite view's browser tests need chromium; install Debian's chromium package (or set GRANITE_NO_BROWSER=1 outside CI)" >&2
    exit 1
  fi
  sudo="sudo"
fi
echo "make test: installing Debian's chromium for granite view's browser tests" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium
