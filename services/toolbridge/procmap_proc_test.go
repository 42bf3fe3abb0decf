package toolbridge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The processes under lnk as /proc shows them, for the process map's
// check (procmap_test.go).

// A liveProc is a process found under lnk, as /proc shows it.
type liveProc struct {
	pid, ppid  int
	comm, name string
	argv       []string
	seccomp    bool
	noNewPrivs bool
	dumpable   bool
	fds        map[string]bool // nil: unreadable (undumpable, read as its owner)
	fdsErr     error
}

var nsRe = regexp.MustCompile(`^([a-z_]+):\[[0-9]+\]$`)

// fdKind names what an fd's link target is, in the map's words.
func fdKind(target, home, bin, agentID string) string {
	switch {
	case nsRe.MatchString(target):
		return nsRe.FindStringSubmatch(target)[1] // socket, pipe, net, …
	case strings.HasPrefix(target, "anon_inode:"):
		return strings.Trim(strings.TrimPrefix(target, "anon_inode:"), "[]")
	case strings.HasPrefix(target, "/memfd:"):
		return "memfd"
	case target == "/dev/tty" || target == "/dev/ptmx" || strings.HasPrefix(target, "/dev/pts/"):
		return "tty"
	case strings.HasPrefix(target, "/sys/fs/cgroup/"):
		return "cgroup" // the Go runtime's CPU limit files
	case target == home:
		return "~"
	case strings.HasPrefix(target, home+"/"):
		rel := strings.TrimPrefix(target, home+"/")
		if agentID != "" {
			rel = strings.ReplaceAll(rel, agentID, "<agent id>")
		}
		rel = oneRunNet.ReplaceAllString(rel, "${1}run-<random>") // a start of no agent's
		return "~/" + rel
	case target == bin:
		return "<bin>"
	case strings.HasPrefix(target, bin+"/"):
		return "<bin>/" + strings.TrimPrefix(target, bin+"/")
	}
	return target
}

// walkProcs is each root (lnk, the kernel) and every process under it,
// parents first.
func walkProcs(t *testing.T, roots []int, owner uint32, home, bin, agentID string) []*liveProc {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := statOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var pids []int
	queue := append([]int{}, roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		pids = append(pids, pid)
		sort.Ints(children[pid])
		queue = append(queue, children[pid]...)
	}
	// lnk and the kernel each lead a session of their own: a process of
	// either session outside the trees (one that left, reparented) is
	// named too.
	in := map[int]bool{}
	for _, pid := range pids {
		in[pid] = true
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || in[pid] {
			continue
		}
		for _, root := range roots {
			if sid, ok := sessionOf(pid); ok && sid == root {
				t.Errorf("process %d is in the session of %d but not under it", pid, root)
			}
		}
	}
	// A socket may live in another process's network namespace (the
	// sandbox's listener the netbroker holds, a tool call's connection
	// passed to lnk): the families of every namespace in the tree.
	families := map[string]string{}
	for _, pid := range pids {
		for ino, f := range socketFamilies(pid) {
			families[ino] = f
		}
	}
	var procs []*liveProc
	for _, pid := range pids {
		p, err := readProc(pid, owner, home, bin, agentID, families)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH):
			// Ended since: nothing to check.
		case err != nil:
			t.Errorf("process %d: %v", pid, err) // what can't be read is not "nothing to check"
		default:
			procs = append(procs, p)
		}
	}
	return procs
}

// sessionOf is /proc/pid/stat's session.
func sessionOf(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 4 {
		return 0, false
	}
	sid, err := strconv.Atoi(f[3])
	return sid, err == nil
}

// statOf is /proc/pid/stat's state and ppid.
func statOf(pid int) (string, int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return f[0], ppid, err == nil
}

// readProc is what /proc says of pid; an error wrapping fs.ErrNotExist
// or ESRCH when it has ended.
func readProc(pid int, owner uint32, home, bin, agentID string, families map[string]string) (*liveProc, error) {
	dir := fmt.Sprintf("/proc/%d", pid)
	_, ppid, ok := statOf(pid)
	if !ok {
		return nil, fs.ErrNotExist
	}
	comm, err := os.ReadFile(dir + "/comm")
	if err != nil {
		return nil, err
	}
	cmdline, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return nil, err
	}
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir+"/environ", &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: dir + "/environ", Err: err}
	}
	if len(cmdline) == 0 {
		return nil, fs.ErrNotExist // a zombie, or one exiting
	}
	p := &liveProc{pid: pid, ppid: ppid, comm: strings.TrimSpace(string(comm)),
		argv: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")}
	// brokerproc starts a broker through /proc/self/fd (its comm is
	// "exe"), and an undumpable one's exe link is root's: its name is
	// argv[0]'s last element, which lnk sets to the binary's path.
	p.name = filepath.Base(p.argv[0])
	for _, l := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(l, ":")
		switch v = strings.TrimSpace(v); k {
		case "Seccomp":
			p.seccomp = v == "2"
		case "NoNewPrivs":
			p.noNewPrivs = v == "1"
		}
	}
	// /proc/PID/environ (not /proc/PID, which keeps the owner's uid)
	// belongs to root while the process is undumpable, to its owner while
	// it is dumpable (the run is never root's: see the test).
	p.dumpable = st.Uid == owner
	ents, err := os.ReadDir(dir + "/fd")
	if err != nil {
		p.fdsErr = err
		return p, nil
	}
	p.fds = map[string]bool{}
	for _, e := range ents {
		target, err := os.Readlink(dir + "/fd/" + e.Name())
		if err != nil {
			continue // closed since
		}
		kind := fdKind(target, home, bin, agentID)
		if kind == "socket" {
			// socket:[INODE]: its family, from the tables of the
			// network namespaces in the tree; one in none of them
			// (raw, packet, …) stays plain "socket", which no row names.
			ino := strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")
			if f, ok := families[ino]; ok {
				kind = "socket:" + f
			}
		}
		p.fds[kind] = true
	}
	return p, nil
}

// socketFamilies maps each socket inode in pid's network namespace to
// its family: unix, tcp, udp or netlink (/proc/PID/net/*).
func socketFamilies(pid int) map[string]string {
	m := map[string]string{}
	for _, tab := range []struct {
		file, family string
		col          int // the inode's column
	}{{"unix", "unix", 6}, {"tcp", "tcp", 9}, {"tcp6", "tcp", 9}, {"udp", "udp", 9}, {"udp6", "udp", 9}, {"netlink", "netlink", 9}} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, tab.file))
		if err != nil {
			continue
		}
		for i, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if i == 0 || len(f) <= tab.col {
				continue
			}
			m[f[tab.col]] = tab.family
		}
	}
	return m
}

// lockHolder is the pid holding the flock on path, from /proc/locks (its
// device and inode), or 0 for none.
func lockHolder(t *testing.T, path string) int {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF": pid, then
	// major:minor:inode, the device in hex.
	want := fmt.Sprintf(":%d", st.Ino)
	for _, line := range strings.Split(string(locks), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" || !strings.HasSuffix(f[5], want) {
			continue
		}
		dev := strings.Split(f[5], ":")
		major, err1 := strconv.ParseUint(dev[0], 16, 32)
		minor, err2 := strconv.ParseUint(dev[1], 16, 32)
		if err1 != nil || err2 != nil || uint32(major) != unix.Major(uint64(st.Dev)) || uint32(minor) != unix.Minor(uint64(st.Dev)) {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err == nil {
			return pid
		}
	}
	return 0
}
