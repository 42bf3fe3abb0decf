package netbroker

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A proxy's socket and a run's one-run folder are removed when the run
// ends ([Socket.Remove]). A run killed outright (SIGKILL, a crash, the
// machine's power) leaves them behind in ~/.lnk/agents/.net. The next
// run to end sweeps them: a proxy-<hex>.sock that no socket of this
// network namespace is bound to (/proc/net/unix), and that is older than
// staleAfter, is removed, then each run-<hex> folder left empty.
// Nothing there is followed: each folder is opened with O_NOFOLLOW below
// the held .net folder, only sockets are removed, and only names Link
// makes are looked at.
const staleAfter = time.Minute

// sweepStale removes stale proxy sockets and empty one-run folders below
// the .net folder netFD, sparing the names in live and any socket younger
// than minAge.
func sweepStale(netFD int, live map[string]bool, minAge time.Duration) {
	for _, name := range readNames(netFD) {
		agent := isAgentID(name)
		if !agent && !isRunName(name) {
			continue
		}
		fd, err := unix.Openat(netFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		for _, sock := range readNames(fd) {
			if !isSocketName(sock) || live[sock] {
				continue
			}
			var st unix.Stat_t
			if unix.Fstatat(fd, sock, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
				continue
			}
			if time.Since(time.Unix(st.Mtim.Unix())) < minAge {
				continue
			}
			unix.Unlinkat(fd, sock, 0)
		}
		unix.Close(fd)
		if !agent {
			unix.Unlinkat(netFD, name, unix.AT_REMOVEDIR) // only if empty
		}
	}
}

// readNames lists the folder fd (a duplicate is read, so fd's offset is
// untouched).
func readNames(fd int) []string {
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(d), "")
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return names
}

// boundSockets is the base name of every proxy socket some socket of
// this network namespace is bound to, from /proc/net/unix. Link binds
// through /proc/self/fd/N/<name>, so a path's base name is what is
// compared; the names carry 64 random bits.
func boundSockets() map[string]bool {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	live := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		if name := filepath.Base(fields[7]); isSocketName(name) {
			live[name] = true
		}
	}
	if sc.Err() != nil {
		return nil
	}
	return live
}

func isRunName(s string) bool {
	return len(s) == len("run-")+24 && strings.HasPrefix(s, "run-") && lowerHex(s[4:])
}

func isSocketName(s string) bool {
	return len(s) == len("proxy-")+16+len(".sock") && strings.HasPrefix(s, "proxy-") &&
		strings.HasSuffix(s, ".sock") && lowerHex(s[6:22])
}

// lowerHex reports whether s is lowercase hex digits, as
// hex.EncodeToString writes them.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
