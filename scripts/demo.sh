#!/usr/bin/env bash
# make demo: Link's main job on a built-in default, under a throwaway HOME.
# It never touches the real HOME: everything happens in a folder it makes
# and removes, checked by its pattern before removal.
set -euo pipefail
cd "$(dirname "$0")/.."
LNK="$PWD/bin/lnk"
demo_home=$(mktemp -d /tmp/lnk-demo.XXXXXX)
cleanup() { case "$demo_home" in /tmp/lnk-demo.*) rm -rf "$demo_home" ;; esac; }
trap cleanup EXIT
export HOME="$demo_home"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { step "$*"; "$@" || echo "(exit $?)"; }
# shown is run, its output (stdout and stderr) also kept in $shown_out
# for the checks that follow it.
shown() { step "$*"; shown_out=$("$@" 2>&1) || shown_out+=$'\n'"(exit $?)"; printf '%s\n' "$shown_out"; }
# fail ends the demo saying what did not hold: a demo that shows a way
# out open, or a refusal missing, must not pass for one that worked.
fail() { printf '\n\033[1;31mdemo: %s\033[0m\n' "$*" >&2; exit 1; }
# holds WHAT PATTERN: the last shown output matches PATTERN (grep -E),
# else the demo fails saying WHAT did not happen; lacks: never matches.
holds() { grep -qE -- "$2" <<<"$shown_out" || fail "$1"; }
lacks() { ! grep -qE -- "$2" <<<"$shown_out" || fail "$1"; }

for part in scripts/demo.d/*.sh; do
  [ -f "$part" ] && . "$part"
done
printf '\ndemo done (HOME was %s, now removed)\n' "$demo_home"
