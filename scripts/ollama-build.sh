#!/usr/bin/env bash
# Builds the Ollama server that `make ollama-test` runs granite against, from
# the Go module at exactly the version go.mod pins for github.com/ollama/ollama
# (the version whose ollama/api granite speaks), and prints the binary's path
# on stdout; everything else goes to stderr.
#
# The module zip lacks llama/llama.cpp/vendor/ (Go leaves vendor folders out
# of module zips), so a writable copy of the module gets
# third_party/ollama-llama.cpp-vendor/ there, and `go build` with cgo makes
# the CPU backend; no cmake. The binary is cached under the Go build cache,
# keyed by the Ollama version, the Go version, GOARCH and a hash of the
# vendor files and of this recipe, so a second run only checks that it is
# there.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "ollama-build: $*" >&2; exit 1; }

vendor=third_party/ollama-llama.cpp-vendor
# The headers llama.cpp includes, in the order their hash is taken. A
# header over 1 MiB is committed gzipped (miniaudio.h: 4.1 MB, 0.6 MB
# compressed), since no tracked file outside testdata/ may be that large;
# header prints each as it is installed.
headers="miniaudio/miniaudio.h nlohmann/json.hpp nlohmann/json_fwd.hpp stb/stb_image.h"
header() { if [ -f "$vendor/$1" ]; then cat "$vendor/$1"; else gzip -dc "$vendor/$1.gz"; fi; }
for h in $headers; do
  [ -f "$vendor/$h" ] || [ -f "$vendor/$h.gz" ] || die "$vendor/$h is missing: llama.cpp includes it and Ollama's module zip lacks it; restore it from git (git checkout -- $vendor)"
done

version=$(go list -m -f '{{.Version}}' github.com/ollama/ollama) ||
  die "go.mod does not require github.com/ollama/ollama (go list -m failed)"
goversion=$(go env GOVERSION)
goarch=$(go env GOARCH)
# What goes into the binary besides the module: how it is built. Changing a
# flag here changes the key, so a stale binary is never reused.
tags=""
ldflags="-w -s -X=github.com/ollama/ollama/version.Version=${version#v} -X=github.com/ollama/ollama/server.mode=release"
cflags="-O2"
recipe="tags=$tags ldflags=$ldflags cflags=$cflags"
# The headers alone: the README and license texts change nothing built.
hash=$({ for h in $headers; do printf '%s  ./%s\n' "$(header "$h" | sha256sum | cut -d' ' -f1)" "$h"; done; echo "$recipe"; } | sha256sum | cut -c1-12)
key="$version-$goversion-$goarch-$hash"
dir="$(go env GOCACHE)/granite-ollama/$key"
bin="$dir/ollama"

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

echo "ollama-build: building Ollama $version (cgo, CPU backend) into $dir; the first build takes about 5 minutes on 2 cores (4.5 with Go's own packages already cached), later runs reuse it" >&2

# cgo needs gcc and g++ (make test's cgo already needs gcc); on Debian
# they are installed when missing, as scripts/ensure-chromium.sh does.
need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v g++ >/dev/null 2>&1 || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! command -v apt-get >/dev/null 2>&1 || { [ -n "$sudo" ] && ! command -v sudo >/dev/null 2>&1; }; then
    die "${need[*]} missing: Ollama's llama.cpp and ggml are C and C++17 built with cgo; install ${need[*]}"
  fi
  echo "ollama-build: installing Debian's ${need[*]} for Ollama's C and C++ code" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
printf '#include <stdio.h>\nint main(void){return 0;}\n' | gcc -x c -o /dev/null - 2>/dev/null ||
  die "gcc cannot compile and link a C program (stdio.h or the C library is missing): install Debian's libc6-dev"
printf '#include <thread>\n#include <string>\nint main(){std::string s; return (int)s.size();}\n' | g++ -std=c++17 -x c++ -o /dev/null - 2>/dev/null ||
  die "g++ cannot compile and link a C++17 program (<thread> or <string> is missing): install Debian's libstdc++-12-dev (pulled in by g++)"

info=$(go mod download -json "github.com/ollama/ollama@$version") ||
  die "go mod download github.com/ollama/ollama@$version failed: $info"
moddir=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -n "$moddir" ] && [ -f "$moddir/main.go" ] ||
  die "go mod download gave no module directory for github.com/ollama/ollama@$version: $info"

# One build at a time per key: a second caller waits, then finds the binary.
mkdir -p "$dir"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir/.lock"
  flock 9
fi
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

src="$dir/src"
rm -rf "$src"
cp -R "$moddir" "$src"
chmod -R u+w "$src"
for h in $headers; do
  mkdir -p "$src/llama/llama.cpp/vendor/$(dirname "$h")"
  header "$h" > "$src/llama/llama.cpp/vendor/$h"
done

# Ollama's cgo directives set their own optimisation for ggml's CPU code;
# CGO_CFLAGS from the caller (granite's Makefile exports warnings-only flags)
# would replace cgo's default -O2 for everything else, so the recipe sets them.
start=$(date +%s)
(
  cd "$src"
  export CGO_ENABLED=1 CGO_CFLAGS="$cflags" CGO_CXXFLAGS="$cflags" GOFLAGS=-mod=readonly GOWORK=off
  nice -n 10 go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$bin.tmp" .
) >&2 || die "go build of github.com/ollama/ollama@$version in $src failed (see the compiler's message above)"
mv "$bin.tmp" "$bin"
rm -rf "$src"
echo "ollama-build: built $bin in $(( $(date +%s) - start )) s ($(( $(stat -c %s "$bin") / 1000000 )) MB)" >&2
echo "$bin"
