#!/usr/bin/env bash
# Installs what building and testing Link needs on a Debian machine, only
# what is missing: system packages (as root, or with sudo), then the npm
# test peers of every */testdata/npm folder.
set -euo pipefail
cd "$(dirname "$0")/.."
# systemd: systemd-analyze verify checks the unit files Link writes; man-db:
# it also checks the man page a unit names. dpkg-dev: make deb's
# dpkg-shlibdeps. openssh-server, socat: the move test runs its own sshd on
# the loopback of a network namespace it makes, and reaches it through socat.
# rclone: lnk bucket push|pull runs it (services/bucket).
pkgs=(bubblewrap libseccomp-dev pkg-config gcc tmux xvfb xauth zenity xdotool iproute2 curl python3 libnotify-bin dbus-x11 notification-daemon
  systemd man-db dpkg-dev openssh-server socat rclone)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
for d in $(find . -path ./node_modules -prune -o -type d -path '*/testdata/npm' -print); do
  if [ ! -d "$d/node_modules" ]; then
    echo "npm test peers in $d"
    # npm ci installs exactly the lock, never a newer version of any
    # package; where it refuses (a lock out of step with package.json),
    # stop with its reason: installing from package.json instead would
    # test against versions nobody reviewed.
    if ! log=$(cd "$d" && npm ci --no-audit --no-fund --loglevel=error 2>&1); then
      why=$(printf '%s\n' "$log" | grep -m1 -E 'Missing:|Invalid:' || printf '%s\n' "$log" | grep -m1 -E 'npm (error|ERR!)' || true)
      echo "install-deps: npm ci refused the lock in $d: ${why#npm error }" >&2
      echo "hint: run npm install --package-lock-only in $d, check the versions in its diff, and commit the lock" >&2
      exit 1
    fi
  fi
done
