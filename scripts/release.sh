#!/usr/bin/env bash
# Builds the release binaries into dist/ (or $DIST): granite for linux/amd64
# and linux/arm64 with cgo (NVML), and static CGO-free ones (-tags nonvml)
# for both, then SHA256SUMS. Builds are reproducible: -trimpath, no build
# ID, no VCS stamp (the version and commit are passed explicitly), so two
# runs on the same commit give byte-identical files.
set -euo pipefail
cd "$(dirname "$0")/.."

DIST=${DIST:-dist}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
CC_ARM64=${CC_ARM64:-aarch64-linux-gnu-gcc}

# The arm64 cgo build needs Debian's cross compiler; install it when missing.
if ! command -v "$CC_ARM64" >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "release: installing gcc-aarch64-linux-gnu for the arm64 cgo build" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross
fi

pkg=github.com/mcpgranite/granite/harness
ldflags="-s -w -buildid= -X $pkg.Version=$VERSION -X $pkg.Commit=$COMMIT"
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"

# Every build resolves host names and users in Go (netgo, osusergo), the
# cgo ones too: cgo is there for NVML alone. So the two binaries of an
# architecture behave alike on a node, and they share every compiled
# package but NVML's and the few above the meter: the static build after
# the cgo one takes seconds instead of a full compile.
# GOGC=400 lets the compiler collect garbage less often (~2.3 GB at most);
# it does not change what the source means, and it is deterministic.
export GOGC=${GOGC:-400}
build() { # GOARCH CGO_ENABLED CC TAGS OUT
  echo "release: $5" >&2
  GOOS=linux GOARCH=$1 CGO_ENABLED=$2 CC=$3 go build -trimpath -buildvcs=false \
    -tags "netgo,osusergo$4" -ldflags "$ldflags" -o "$DIST/$5" ./cmd/granite
}

mkdir -p "$DIST"
rm -f "$DIST"/granite-* "$DIST/SHA256SUMS"
build amd64 1 gcc "" granite-linux-amd64
build amd64 0 gcc ,nonvml granite-linux-amd64-static
build arm64 1 "$CC_ARM64" "" granite-linux-arm64
build arm64 0 "$CC_ARM64" ,nonvml granite-linux-arm64-static
(cd "$DIST" && sha256sum granite-* > SHA256SUMS)
cat "$DIST/SHA256SUMS"
# Each binary's size, the figure an edge node pays in flash and in copying.
for f in "$DIST"/granite-*; do
  awk -v f="$f" -v b="$(stat -c %s "$f")" 'BEGIN {printf "release: %-40s %6.1f MB\n", f, b/1e6}' >&2
done
