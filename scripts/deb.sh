#!/usr/bin/env bash
# make deb: a Debian package of Link, lnk_<version>_<arch>.deb, built with
# dpkg-deb from a tree staged by scripts/install.sh (PREFIX=/usr): the
# binaries in /usr/bin, the completions and man pages under /usr/share.
#
# From the environment: BIN (the built binaries), OUT (where the package
# goes; default BIN), GO. It prints the package's path as its last line.
#
# Depends: bubblewrap, which every sandbox runs in, and the shared
# libraries the brokers built with cgo link (libseccomp2, libc6), as
# dpkg-shlibdeps reads them from the binaries themselves. Recommends: a
# dialog program and notify-send, through which Link asks its owner on
# the desktop (it asks in the terminal without them).
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}
OUT=${OUT:-$BIN}

die() {
  echo "deb: $1" >&2
  [ -z "${2:-}" ] || echo "  hint: $2" >&2
  exit 1
}
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || die "$tool is missing" "make deps installs it (Debian package dpkg-dev)"
done

# The package's version: a release tag as it is (v1.2.0 → 1.2.0); before
# the first tag, 0~git<commits>.g<commit>, which sorts below any release
# and rises with every commit. +dirty marks a tree with changes.
desc=$(git describe --always --dirty 2>/dev/null) || die "not a git checkout: the package's version is the commit's" "build the package from a clone of Link's repository"
if tag=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
  version=${tag#v}
  version=${version//-/+}
else
  version=0~git$(git rev-list --count HEAD).g$(git rev-parse --short HEAD)
  [[ $desc != *-dirty ]] || version+=+dirty
fi
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/lnk
DESTDIR=$stage PREFIX=/usr scripts/install.sh stage >/dev/null
# Debian's zsh reads packaged completions from vendor-completions.
mkdir -p "$stage/usr/share/zsh/vendor-completions"
mv "$stage/usr/share/zsh/site-functions/_lnk" "$stage/usr/share/zsh/vendor-completions/_lnk"
rmdir "$stage/usr/share/zsh/site-functions"

# dpkg-shlibdeps reads a control file beside the binaries' tree.
mkdir -p "$work/debian"
printf 'Source: lnk\n\nPackage: lnk\nArchitecture: any\n' >"$work/debian/control"
# A package whose Depends lacks them would install where the brokers
# cannot start: no answer from dpkg-shlibdeps stops the build.
out=$(cd "$work" && dpkg-shlibdeps -O $(find lnk/usr/bin -type f -printf '-e%p ') 2>"$work/shlibdeps.err") ||
  die "dpkg-shlibdeps failed: $(grep -m1 error "$work/shlibdeps.err")"
shlibs=$(sed -n 's/^shlibs:Depends=//p' <<<"$out")
[ -n "$shlibs" ] || die "dpkg-shlibdeps named no library the binaries link"

mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<EOF
Package: lnk
Version: $version
Architecture: $arch
Maintainer: Link's maintainers <link@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: bubblewrap, $shlibs
Recommends: zenity | kdialog, libnotify-bin
Section: admin
Priority: optional
Description: runs AI agents and their tools, each confined to what its owner granted
 Link runs an agent, the programs it starts and the tools it calls in
 sandboxes of bubblewrap, landlock and seccomp, so that nothing an agent
 reads can widen what it may do. A small kernel holds the folder and
 socket handles and passes them to single-purpose brokers.
EOF
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"

mkdir -p "$OUT"
deb=$OUT/lnk_${version}_${arch}.deb
# gzip: read by every dpkg, and quick to make on a small machine.
dpkg-deb --root-owner-group -Zgzip --build "$stage" "$deb" >/dev/null
echo "$deb"
