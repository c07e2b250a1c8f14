#!/usr/bin/env bash
# Writes docs/bench.md (or $1) from one `make bench` run: the machine and
# date, the size of the binary `make build` makes, and every benchmark's
# figures, package by package. The performance figures of the README and
# the guides in docs/ point here, so they are all from one recorded run
# rather than typed in.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/bench.md}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

make --no-print-directory build >&2
# The newcomer's first wait: the binary from an empty build cache (the
# module cache stays warm), in a throwaway cache so nothing else is cold.
cold=$(mktemp -d)
start=$(date +%s.%N)
GOCACHE=$cold go build -o /dev/null ./cmd/granite
cold_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b-a}')
rm -rf "$cold"
make --no-print-directory bench 2>&1 | tee "$log" >&2

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || uname -m)
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo 2>/dev/null || echo "unknown memory")
size=$(stat -c %s bin/granite)
{
  echo "# Benchmark figures"
  echo
  echo "Written by \`make bench-doc\` (scripts/bench-doc.sh) from one \`make bench\` run;"
  echo "the performance figures of the README and docs/ come from here. Rerun it to refresh them."
  echo
  echo "- date: $(date -u +%Y-%m-%d)"
  echo "- machine: $cpu, $(nproc) cores, $mem, $(uname -sm)"
  echo "- go: $(go env GOVERSION); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- first \`go build ./cmd/granite\` from an empty build cache: ${cold_s} s"
  echo "- \`make build\` binary: $(awk -v b="$size" 'BEGIN {printf "%.1f MB (%d bytes)", b/1e6, b}')"
  echo
  awk '
    function flush() { if (rows != "") { print "\n## " pkg "\n\n| benchmark | figures |\n|---|---|" rows; rows = "" } }
    /^pkg: / { flush(); pkg = $2; next }
    /^Benchmark/ && NF >= 4 {
      name = $1; sub(/-[0-9]+$/, "", name)
      figs = ""
      for (i = 3; i < NF; i += 2) figs = figs (figs == "" ? "" : ", ") $i " " $(i+1)
      rows = rows "\n| " name " | " figs " |"
    }
    /^--- FAIL|^FAIL/ { failed = 1 }
    END { flush(); if (failed) { print "\nA benchmark failed in this run; see make bench." } }
  ' "$log"
  echo
  echo "## What each dependency costs in the binary"
  echo
  echo 'Symbol bytes of `make build`'"'"'s binary by module (scripts/binsize.sh); DWARF and'
  echo 'the symbol table itself, which `make release` strips, come on top.'
  echo
  scripts/binsize.sh bin/granite
} > "$out"
echo "bench-doc: wrote $out" >&2
