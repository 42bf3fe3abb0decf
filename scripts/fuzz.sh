#!/usr/bin/env bash
# Runs every Fuzz target in the repository for FUZZTIME each (default 30s).
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-30s}
grep -rlE '^func Fuzz\w+\(f \*testing\.F\)' --include='*_test.go' . | while read -r f; do
  pkg=./$(dirname "${f#./}")
  for fn in $(grep -oE '^func Fuzz\w+' "$f" | cut -d' ' -f2); do
    echo "== $pkg $fn ($t)"
    go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$t" "$pkg"
  done
done
