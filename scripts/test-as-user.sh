#!/usr/bin/env bash
# Runs the sandbox suite again as an unprivileged owner (LNK_TEST_USER,
# default lnktest), since owners run lnk as themselves. With arguments,
# only those packages (and with LNK_TEST_RUN, only the tests it matches; a
# list line may name a -test.run pattern after its package). Test binaries and
# Link's binaries are built as the caller, copied to a world-readable
# folder with each package's testdata, and run there as the user.
set -euo pipefail
cd "$(dirname "$0")/.."
user=${LNK_TEST_USER:-lnktest}
if ! id "$user" >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then echo "test-as-user: no user $user (.ci/run makes it)"; exit 1; fi
  echo "test-as-user: no user $user; skipped (sudo useradd -m $user to run it)"; exit 0
fi
if [ "$(id -u)" -ne 0 ]; then echo "test-as-user: needs root to switch to $user; skipped"; exit 0; fi
work=$(mktemp -d /tmp/lnk-usersuite.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/bin" "$work/home"
cp bin/* "$work/bin/"
# go-sdk's conformance everything-server, built here from the module this
# checkout requires: the user has no Go toolchain or module cache.
go build -o "$work/bin/everything-server" github.com/modelcontextprotocol/go-sdk/conformance/everything-server
# cmd/lnk/mangen, which scripts/install.sh runs (MANGEN) where the user
# has no Go toolchain, for cmd/lnk's install tests (make install
# PREFIX=~/.local as an owner without root).
CGO_ENABLED=0 go build -trimpath -o "$work/bin/lnk-mangen" ./cmd/lnk/mangen
# The attacker's lnk-netbroker (-tags lnkattack), which
# cmd/lnk-netbroker's attack test runs confined; never in bin/ itself.
CGO_ENABLED=0 go build -trimpath -tags lnkattack -o "$work/bin/lnk-netbroker-attack" ./cmd/lnk-netbroker
# SECURITY.md where a package two folders down finds it (../../), for
# services/toolbridge's process-map test, which reads its table.
mkdir -p "$work/pkg"
cp SECURITY.md "$work/pkg/"
chown "$user" "$work/home"
chmod 700 "$work/home"
status=0
while read -r pkg only; do
  case "$pkg" in ''|'#'*) continue ;; esac
  [ -d "$pkg" ] || { echo "test-as-user: $pkg is listed but missing"; status=1; continue; }
  # The package's own path under $work/pkg, so a test that reads its
  # parent's testdata (../testdata) finds it there too.
  dir="$work/pkg/$pkg"
  mkdir -p "$dir"
  go test -c -o "$dir/pkg.test" "./$pkg"
  [ -f "$dir/pkg.test" ] || continue
  [ -d "$pkg/testdata" ] && cp -r "$pkg/testdata" "$dir/"
  parent=$(dirname "$pkg")
  if [ ! -d "$pkg/testdata" ] && [ -d "$parent/testdata" ] && [ ! -d "$work/pkg/$parent/testdata" ]; then
    cp -r "$parent/testdata" "$work/pkg/$parent/"
  fi
  chmod -R a+rX "$work/pkg"
  echo "== as $user: $pkg"
  if ! (cd "$dir" && runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work/home" MANGEN="$work/bin/lnk-mangen" \
      LNK_BIN="$work/bin" LNK_CONFORMANCE_SERVER="$work/bin/everything-server" LNK_REQUIRE_SANDBOX="${LNK_REQUIRE_SANDBOX:-}" CI="${CI:-}" LNK_TEST_AS_USER=1 \
      ./pkg.test -test.timeout 10m -test.count 1 ${only:+-test.run "$only"} ${LNK_TEST_RUN:+-test.run "$LNK_TEST_RUN"} 2>&1 | sed 's/^/    /'; exit "${PIPESTATUS[0]}"); then
    echo "FAIL as $user: $pkg"; status=1
  else
    echo "ok   as $user: $pkg"
  fi
done < <(if [ $# -gt 0 ]; then printf '%s\n' "$@"; else cat scripts/user-suite.txt; fi)
exit $status
