#!/usr/bin/env bash
# Builds the release binaries (scripts/release.sh) and runs both arm64 ones
# under qemu-user: granite version, granite verify and the smoke experiment
# must do exactly what the native build does (cmd/granite's
# TestReleaseBinaryUnderEmulation). Installs Debian's qemu-user and the
# arm64 C library for the dynamic (cgo) build when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user)
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || need+=(libc6-arm64-cross)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "edge-test: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

DIST=${DIST:-dist} scripts/release.sh
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"
# The CGO-free build keeps compiling, tests included, and its meters work.
CGO_ENABLED=0 go vet -tags nonvml ./...
CGO_ENABLED=0 go test -count=1 -tags nonvml ./harness/meter
for bin in granite-linux-arm64 granite-linux-arm64-static; do
  echo "edge-test: $bin under qemu-aarch64" >&2
  GRANITE_EDGE_BIN="$PWD/${DIST:-dist}/$bin" GRANITE_EDGE_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu" \
    go test -count=1 -v -run '^TestReleaseBinaryUnderEmulation$' ./cmd/granite
done
