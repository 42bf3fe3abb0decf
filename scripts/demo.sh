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

for part in scripts/demo.d/*.sh; do
  [ -f "$part" ] && . "$part"
done
printf '\ndemo done (HOME was %s, now removed)\n' "$demo_home"
