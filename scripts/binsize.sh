#!/usr/bin/env bash
# Prints what each module costs in a granite binary ($1, default bin/granite):
# the bytes of its symbols in the file (code and data; zeroed memory, which
# takes no room on disk, is left out), from `go tool nm -size`, largest
# first, as a Markdown table. A symbol belongs to the longest module path
# (from `go version -m`) that prefixes its package; the rest is the standard
# library and the runtime. Needs an unstripped binary (make build, not make
# release, whose -s drops the symbol table).
set -euo pipefail
bin=${1:-bin/granite}
mods=$(go version -m "$bin" | awk '$1 == "mod" || $1 == "dep" {print $2}')
# The zeroed sections' address ranges, "start size" in hex, one per line.
nobits=$(readelf -SW "$bin" | awk '/NOBITS/ {for (i = 1; i <= NF; i++) if ($i == "NOBITS") print $(i+1), $(i+3)}')
go tool nm -size "$bin" | awk -v mods="$mods" -v nobits="$nobits" '
  function hex(s,   i, n) { n = 0; s = tolower(s); for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
  BEGIN {
    n = split(mods, m, "\n")
    z = split(nobits, zs, "\n")
    for (i = 1; i <= z; i++) { split(zs[i], f, " "); lo[i] = hex(f[1]); hi[i] = lo[i] + hex(f[2]) }
  }
  NF >= 4 {
    addr = hex($1)
    for (i = 1; i <= z; i++) if (addr >= lo[i] && addr < hi[i]) next
    name = $4
    sub(/^(type:\.?(eq\.|hash\.)?|go:(itab|link)\.|\*)+/, "", name)
    owner = "(standard library and runtime)"; best = 0
    for (i = 1; i <= n; i++)
      if (length(m[i]) > best && (index(name, m[i] ".") == 1 || index(name, m[i] "/") == 1)) { owner = m[i]; best = length(m[i]) }
    bytes[owner] += $2
  }
  END { for (k in bytes) printf "%d\t%s\n", bytes[k], k }' |
  sort -nr | awk -F'\t' '
    { rows[NR] = $0; total += $1 }
    END {
      print "| module | symbol bytes | share |"
      print "|---|---:|---:|"
      for (i = 1; i <= NR; i++) { split(rows[i], f, "\t"); printf "| %s | %.2f MB | %.1f%% |\n", f[2], f[1]/1e6, 100*f[1]/total }
      printf "| total | %.2f MB | |\n", total/1e6
    }'
