package netbroker

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// A proxy's socket and a run's one-run folder are removed when the run
// ends ([Socket.Remove]). A run killed outright (SIGKILL, a crash, the
// machine's power) leaves them behind in ~/.lnk/agents/.net. The next
// run to end sweeps them: a proxy-<hex>.sock older than staleAfter that
// no socket of this network namespace is bound to (/proc/net/unix, read
// only once some socket is that old: on a desktop it lists thousands of
// sockets), then each run-<hex> folder left empty that was older than
// staleAfter before the sweep, never one a run starting now has just
// made and not yet bound its socket in. Nothing there is followed: each
// folder is opened with O_NOFOLLOW below the held .net folder, only
// sockets are removed, and only names Link makes are looked at.
const staleAfter = time.Minute

// sweepStale removes stale proxy sockets and empty one-run folders below
// the .net folder netFD, sparing any socket or folder younger than
// minAge and the sockets bound says are bound; bound is asked once, and
// only if some socket is old enough. A nil answer from it spares every
// socket.
func sweepStale(netFD int, bound func() map[string]bool, minAge time.Duration) {
	var live map[string]bool
	asked := false
	old := func(st *unix.Stat_t) bool { return time.Since(time.Unix(st.Mtim.Unix())) >= minAge }
	for _, name := range readNames(netFD) {
		agent := isAgentID(name)
		if !agent && !isRunName(name) {
			continue
		}
		fd, err := ownerfile.OpenDir(netFD, name, unix.O_RDONLY)
		if err != nil {
			continue
		}
		var dir unix.Stat_t
		oldDir := unix.Fstat(fd, &dir) == nil && old(&dir)
		for _, sock := range readNames(fd) {
			if !isSocketName(sock) {
				continue
			}
			var st unix.Stat_t
			if unix.Fstatat(fd, sock, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK || !old(&st) {
				continue
			}
			if !asked {
				live, asked = bound(), true
			}
			if live == nil || live[sock] {
				continue
			}
			unix.Unlinkat(fd, sock, 0)
		}
		unix.Close(fd)
		if !agent && oldDir {
			unix.Unlinkat(netFD, name, unix.AT_REMOVEDIR) // only if empty
		}
	}
}

// readNames lists the folder fd (a duplicate is read, so fd's offset is
// untouched).
func readNames(fd int) []string {
	d, err := ownerfile.OpenDir(fd, ".", unix.O_RDONLY)
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
