#!/usr/bin/env bash
# Runs every benchmark once. Each Link benchmark measures its baseline in
# the same run (bare bwrap, plain open, direct TCP, a direct call) and
# reports both beside the ratio: look for the "x-baseline" column.
set -euo pipefail
cd "$(dirname "$0")/.."
export LNK_BIN="$PWD/bin"
go test -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-1s}" -count 1 -timeout 30m ./... 2>&1 |
  grep -E '^(Benchmark|ok|FAIL|---|pkg:)|x-baseline|panic' || true
