#!/usr/bin/env bash
# make install / make uninstall, and the staging of make deb.
#
#   scripts/install.sh install     every binary of bin/ into $PREFIX/bin, the
#                                  shell completions and man pages under
#                                  $PREFIX/share, and a manifest of them
#   scripts/install.sh stage       the same without the manifest (a package's
#                                  own list replaces it: scripts/deb.sh)
#   scripts/install.sh uninstall   removes what the manifest lists, nothing more
#
# From the environment (the Makefile passes them): BIN (the built
# binaries), PREFIX (default /usr/local; ~/.local installs for one user
# without root), DESTDIR (a staging root for packaging), GO, and
# MANGEN: a built cmd/lnk/mangen to run instead of go run (an owner or a
# test user with no Go toolchain; scripts/test-as-user.sh builds one).
#
# Every binary goes into one folder: lnk finds its helpers (lnk-init,
# lnk-netbroker, …) beside its own file (os.Executable, links resolved).
# A file is placed by a rename, so a running lnk kernel keeps its old
# binary and never sees half of the new one.
set -euo pipefail
umask 022 # what it places is for every user of the machine to read
cd "$(dirname "$0")/.."

action=${1:-}
GO=${GO:-go}
BIN=${BIN:-$PWD/bin}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
# A shell that left PREFIX=~/.local unexpanded (zsh does) still means HOME.
case $PREFIX in "~") PREFIX=$HOME ;; "~/"*) PREFIX=$HOME/${PREFIX#\~/} ;; esac

die() {
  echo "install: $1" >&2
  [ -z "${2:-}" ] || echo "  hint: $2" >&2
  exit 1
}

case $PREFIX in
  /*) ;;
  *) die "PREFIX=$PREFIX is not an absolute path: the units Link writes name the installed lnk by it" "make install PREFIX=/usr/local (the default), or PREFIX=~/.local for yourself alone" ;;
esac
# Nor quotes or backslashes, which systemd refuses in the path of the
# program a unit starts (kernel/unit.go), nor / alone.
[[ "$PREFIX$DESTDIR" != *[[:space:]\'\"\\]* ]] || die "PREFIX and DESTDIR may not hold white space, a quote or a backslash" "make install PREFIX=/usr/local"
PREFIX=${PREFIX%/}
[ -n "$PREFIX" ] || die "PREFIX=/ would put Link's programs in /bin" "make install PREFIX=/usr/local"
root=$DESTDIR$PREFIX
manifest=share/lnk/install-manifest

# What install may place and uninstall may remove, relative to PREFIX.
# A manifest line naming anything else is refused whole.
dirs=(bin share share/man share/man/man1 share/bash-completion share/bash-completion/completions
  share/zsh share/zsh/site-functions share/fish share/fish/vendor_completions.d share/lnk)
allowed_file() {
  [[ $1 =~ ^bin/lnk(-[a-z0-9]+)*$ || $1 =~ ^share/man/man1/lnk(-[a-z0-9]+)*\.1\.gz$ ]] && return 0
  case $1 in
    share/bash-completion/completions/lnk | share/zsh/site-functions/_lnk | \
      share/fish/vendor_completions.d/lnk.fish | "$manifest") return 0 ;;
  esac
  return 1
}
allowed_dir() {
  local d
  [ "$1" = . ] && return 0
  for d in "${dirs[@]}"; do [ "$1" = "$d" ] && return 0; done
  return 1
}

# place SRC REL MODE puts SRC at $root/REL through a new file and a rename:
# whatever stood at REL (a file, or a link, which is not followed) is
# replaced whole.
place() {
  local dst=$root/$2 tmp
  tmp=$(dirname "$dst")/.$(basename "$dst").lnk-new.$$
  install -m "$3" "$1" "$tmp"
  mv -f -T "$tmp" "$dst"
}

install_all() {
  local with_manifest=$1 b name f rel d
  local binaries=()
  for d in cmd/*/; do
    b=$(basename "$d")
    [ -f "$BIN/$b" ] && [ -x "$BIN/$b" ] || die "$BIN/$b is missing: the install would lack one of Link's programs" "make install builds them first; or make build, then run this again"
    binaries+=("$b")
  done

  # Where the install goes must be writable before anything is made.
  local writable=1 up=$root
  while [ ! -e "$up" ]; do up=$(dirname "$up"); done
  [ -w "$up" ] || writable=0
  for d in "${dirs[@]}"; do
    [ ! -d "$root/$d" ] || [ -w "$root/$d" ] || writable=0
  done
  [ "$writable" = 1 ] || die "cannot write under $root" "sudo make install, or make install PREFIX=~/.local for yourself alone"

  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/man" "$work/home"
  # The completions come from lnk's own generator (cobra's), run with a
  # HOME of its own so that the install writes nothing of the caller's.
  for sh in bash zsh fish; do
    HOME=$work/home XDG_CONFIG_HOME= XDG_DATA_HOME= XDG_STATE_HOME= XDG_RUNTIME_DIR= \
      "$BIN/lnk" completion "$sh" >"$work/completion.$sh" || die "lnk completion $sh failed"
  done
  # The man pages come from the commands' own help (cmd/lnk/mangen), dated
  # by the commit so that two builds of one commit are the same.
  epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
  if [ -n "${MANGEN:-}" ]; then
    SOURCE_DATE_EPOCH=$epoch "$MANGEN" "$work/man" || die "generating the man pages failed ($MANGEN)"
  else
    SOURCE_DATE_EPOCH=$epoch CGO_ENABLED=0 "$GO" run ./cmd/lnk/mangen "$work/man" || die "generating the man pages failed"
  fi
  [ -f "$work/man/lnk.1" ] || die "the man pages were not generated (no lnk.1)"
  gzip -9n "$work"/man/*.1

  # Everything placed, relative to PREFIX: file lines, then the folders
  # this install made (removed again only while empty).
  local files=() made=()
  for b in "${binaries[@]}"; do files+=("bin/$b"); done
  for f in "$work"/man/*.1.gz; do files+=("share/man/man1/$(basename "$f")"); done
  files+=(share/bash-completion/completions/lnk share/zsh/site-functions/_lnk share/fish/vendor_completions.d/lnk.fish)
  [ "$with_manifest" = 0 ] || files+=("$manifest")
  for rel in "${files[@]}"; do allowed_file "$rel" || die "internal: $rel is not a name install may place"; done

  # An earlier install's manifest is read (and checked) before anything
  # is made or placed.
  if [ "$with_manifest" = 1 ] && [ -f "$root/$manifest" ]; then read_manifest; fi
  [ -d "$root" ] || made+=(.)
  for d in "${dirs[@]}"; do
    [ -d "$root/$d" ] || made+=("$d")
  done
  for d in "${dirs[@]}"; do
    [ "$with_manifest" = 1 ] || [ "$d" != share/lnk ] || continue
    mkdir -p "$root/$d"
  done

  if [ "$with_manifest" = 1 ]; then
    # The manifest is written before any file is placed and keeps what an
    # earlier install listed, so an install that stops half way, or one
    # of a version with more programs, is still undone whole.
    {
      for rel in "${m_files[@]}"; do echo "f $rel"; done
      for d in "${m_dirs[@]}"; do echo "d $d"; done
      for rel in "${files[@]}"; do echo "f $rel"; done
      for d in "${made[@]}"; do echo "d $d"; done
    } | sort -u >"$work/manifest"
    place "$work/manifest" "$manifest" 0644
  fi

  for b in "${binaries[@]}"; do place "$BIN/$b" "bin/$b" 0755; done
  for f in "$work"/man/*.1.gz; do place "$f" "share/man/man1/$(basename "$f")" 0644; done
  place "$work/completion.bash" share/bash-completion/completions/lnk 0644
  place "$work/completion.zsh" share/zsh/site-functions/_lnk 0644
  place "$work/completion.fish" share/fish/vendor_completions.d/lnk.fish 0644
  echo "installed Link into $root: ${#binaries[@]} programs in bin/, completions and man pages under share/"
  if [ "$with_manifest" = 1 ]; then
    echo "  make uninstall PREFIX=$PREFIX${DESTDIR:+ DESTDIR=$DESTDIR} removes them"
    case ":$PATH:" in *":$PREFIX/bin:"*) ;; *) echo "  note: $PREFIX/bin is not on your PATH" ;; esac
  fi
}

# read_manifest fills m_files and m_dirs from the manifest, checking
# every line first: a line naming anything install never places refuses
# the whole command, before anything is removed or rewritten.
m_files=()
m_dirs=()
read_manifest() {
  local kind rel
  while IFS=' ' read -r kind rel; do
    case $kind in
      f) allowed_file "$rel" || die "$root/$manifest lists $rel, which make install never places: nothing changed" "check the manifest, or remove Link's files by hand"
        m_files+=("$rel") ;;
      d) allowed_dir "$rel" || die "$root/$manifest lists the folder $rel, which make install never makes: nothing changed" "check the manifest, or remove Link's files by hand"
        m_dirs+=("$rel") ;;
      *) die "$root/$manifest has a line that is not 'f PATH' or 'd PATH': nothing changed" "check the manifest, or remove Link's files by hand" ;;
    esac
  done <"$root/$manifest"
}

uninstall_all() {
  local rel n=0
  [ -f "$root/$manifest" ] && [ ! -L "$root/$manifest" ] ||
    die "no manifest at $root/$manifest: make install did not install Link there, so nothing is removed" "make uninstall PREFIX=<the PREFIX you installed with>"
  read_manifest
  for rel in "${m_files[@]}"; do
    [ ! -d "$root/$(dirname "$rel")" ] || [ -w "$root/$(dirname "$rel")" ] ||
      die "cannot write under $root: nothing removed" "sudo make uninstall PREFIX=$PREFIX"
  done
  for rel in "${m_files[@]}"; do
    [ "$rel" != "$manifest" ] || continue
    if [ -d "$root/$rel" ] && [ ! -L "$root/$rel" ]; then
      die "$root/$rel is a folder, not what make install placed: left as it is" "remove it by hand if it is yours to remove"
    fi
    if [ -e "$root/$rel" ] || [ -L "$root/$rel" ]; then
      rm -f -- "$root/$rel"
      n=$((n + 1))
    fi
  done
  rm -f -- "$root/$manifest"
  # The folders install made, deepest first, each only while empty.
  [ ${#m_dirs[@]} -eq 0 ] || printf '%s\n' "${m_dirs[@]}" | awk '{ print gsub("/", "/"), $0 }' | sort -rn | cut -d' ' -f2- |
    while read -r rel; do
      if [ "$rel" = . ]; then rmdir -- "$root" 2>/dev/null || true; else rmdir -- "$root/$rel" 2>/dev/null || true; fi
    done
  echo "removed Link from $root: $n files and the manifest"
}

case $action in
  install) install_all 1 ;;
  stage) install_all 0 ;;
  uninstall) uninstall_all ;;
  *) die "usage: scripts/install.sh install|stage|uninstall" ;;
esac
