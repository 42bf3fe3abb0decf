package toolbridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// The process map in SECURITY.md ("Process and trust map") is a table
// this test reads: one row per process of `lnk sandbox run --agent A`
// for an agent holding a sealed secret and a tool, with its parent, its
// seccomp, no_new_privs and dumpable state and the kinds of fd it may
// hold. The test starts that run for real and checks every process under
// lnk against it.

// mapMarker is the line above the table in SECURITY.md.
const mapMarker = "<!-- process map: read by services/toolbridge TestProcessMapMatchesSecurityMd -->"

// A mapRow is one row of the table.
type mapRow struct {
	proc, parent string // match keys: comm, then argv words it must hold
	optional     bool   // "with a display": may be absent
	seccomp      bool
	noNewPrivs   bool
	dumpable     bool
	fds          map[string]bool
	line         int
}

var keyRe = regexp.MustCompile("`([^`]+)`")

// readProcessMap parses the table after mapMarker in SECURITY.md.
func readProcessMap(text string) ([]mapRow, error) {
	_, after, ok := strings.Cut(text, mapMarker)
	if !ok {
		return nil, errors.New("SECURITY.md has no process map table (" + mapMarker + ")")
	}
	first := strings.Count(text[:len(text)-len(after)], "\n") + 1
	var rows []mapRow
	sc := bufio.NewScanner(strings.NewReader(after))
	n := first - 1
	started := false
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 8 {
			return nil, fmt.Errorf("SECURITY.md:%d: %d cells, want 8", n, len(cells))
		}
		if cells[0] == "process" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		yes := func(i int) (bool, error) {
			switch cells[i] {
			case "yes":
				return true, nil
			case "no":
				return false, nil
			}
			return false, fmt.Errorf("SECURITY.md:%d: cell %d is %q, want yes or no", n, i+1, cells[i])
		}
		r := mapRow{line: n, fds: map[string]bool{}}
		pm := keyRe.FindStringSubmatch(cells[0])
		if pm == nil {
			return nil, fmt.Errorf("SECURITY.md:%d: the process names no `key`", n)
		}
		r.proc = pm[1]
		if m := keyRe.FindStringSubmatch(cells[1]); m != nil {
			r.parent = m[1]
		}
		switch cells[2] {
		case "always":
		case "with a display":
			r.optional = true
		default:
			return nil, fmt.Errorf("SECURITY.md:%d: runs %q, want always or with a display", n, cells[2])
		}
		var err error
		for i, p := range []*bool{&r.seccomp, &r.noNewPrivs, &r.dumpable} {
			if *p, err = yes(3 + i); err != nil {
				return nil, err
			}
		}
		for _, m := range keyRe.FindAllStringSubmatch(cells[7], -1) {
			r.fds[m[1]] = true
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, errors.New("SECURITY.md's process map table has no rows")
	}
	return rows, nil
}

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

// matches reports whether key (comm, then words argv must hold) names p.
func (p *liveProc) matches(key string) bool {
	words := strings.Fields(key)
	if len(words) == 0 || p.name != words[0] {
		return false
	}
	for _, w := range words[1:] {
		found := false
		for _, a := range p.argv[1:] {
			if a == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// rowOf is the most specific row naming p with a parent naming pp.
func rowOf(rows []mapRow, p, pp *liveProc) *mapRow {
	var best *mapRow
	for i := range rows {
		r := &rows[i]
		if !p.matches(r.proc) {
			continue
		}
		if pp == nil != (r.parent == "") || pp != nil && !pp.matches(r.parent) {
			continue
		}
		if best == nil || len(strings.Fields(r.proc)) > len(strings.Fields(best.proc)) {
			best = r
		}
	}
	return best
}

// checkProcessMap is every way procs (root first) differ from rows; on
// a desktop the rows "with a display" must run too.
func checkProcessMap(rows []mapRow, procs []*liveProc, desktop bool) []string {
	var bad []string
	byPid := map[int]*liveProc{}
	for _, p := range procs {
		byPid[p.pid] = p
	}
	seen := map[*mapRow]bool{}
	for i, p := range procs {
		var pp *liveProc
		if i > 0 {
			pp = byPid[p.ppid]
		}
		r := rowOf(rows, p, pp)
		if r == nil {
			parent := "(none)"
			if pp != nil {
				parent = pp.name
			}
			bad = append(bad, fmt.Sprintf("process %d %q (parent %s) is in no row of the map", p.pid, strings.Join(p.argv, " "), parent))
			continue
		}
		seen[r] = true
		for _, c := range []struct {
			what      string
			got, want bool
		}{{"seccomp", p.seccomp, r.seccomp}, {"no_new_privs", p.noNewPrivs, r.noNewPrivs}, {"dumpable", p.dumpable, r.dumpable}} {
			if c.got != c.want {
				bad = append(bad, fmt.Sprintf("%s (pid %d, SECURITY.md:%d): %s is %v, the map says %v", r.proc, p.pid, r.line, c.what, c.got, c.want))
			}
		}
		if p.fds == nil {
			// Only an undumpable process's fds are kept from its owner.
			if r.dumpable || !errors.Is(p.fdsErr, fs.ErrPermission) {
				bad = append(bad, fmt.Sprintf("%s (pid %d): its fds could not be read: %v", r.proc, p.pid, p.fdsErr))
			}
			continue
		}
		for k := range p.fds {
			if !r.fds[k] {
				bad = append(bad, fmt.Sprintf("%s (pid %d, SECURITY.md:%d) holds an fd of kind %s the map does not allow", r.proc, p.pid, r.line, k))
			}
		}
	}
	for i := range rows {
		if r := &rows[i]; !seen[r] && (!r.optional || desktop) {
			bad = append(bad, fmt.Sprintf("%s under %s (SECURITY.md:%d) is not running", r.proc, r.parent, r.line))
		}
	}
	return bad
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
	case strings.HasPrefix(target, home+"/"):
		rel := strings.TrimPrefix(target, home+"/")
		if agentID != "" {
			rel = strings.ReplaceAll(rel, agentID, "<agent id>")
		}
		return "~/" + rel
	case strings.HasPrefix(target, bin+"/"):
		return "<bin>/" + strings.TrimPrefix(target, bin+"/")
	}
	return target
}

// walkProcs is root and every process under it, parents first.
func walkProcs(t *testing.T, root int, owner uint32, home, bin, agentID string) []*liveProc {
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
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		pids = append(pids, pid)
		sort.Ints(children[pid])
		queue = append(queue, children[pid]...)
	}
	// lnk leads a session of its own: a process of that session outside
	// the tree (one that left it, reparented) is named too.
	in := map[int]bool{}
	for _, pid := range pids {
		in[pid] = true
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || in[pid] {
			continue
		}
		if sid, ok := sessionOf(pid); ok && sid == root {
			t.Errorf("process %d is in lnk's session but not under lnk", pid)
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
		if p, ok := readProc(pid, owner, home, bin, agentID, families); ok {
			procs = append(procs, p) // one ended since has nothing to check
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

func readProc(pid int, owner uint32, home, bin, agentID string, families map[string]string) (*liveProc, bool) {
	dir := fmt.Sprintf("/proc/%d", pid)
	_, ppid, ok := statOf(pid)
	comm, err1 := os.ReadFile(dir + "/comm")
	cmdline, err2 := os.ReadFile(dir + "/cmdline")
	status, err3 := os.ReadFile(dir + "/status")
	var st syscall.Stat_t
	err4 := syscall.Stat(dir+"/environ", &st)
	if !ok || err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil, false
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
		return p, true
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
	return p, true
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

// TestProcessMapMatchesSecurityMd starts `lnk sandbox run --agent demo`
// for an agent holding a sealed secret and a tool (this binary as a real
// go-sdk MCP server) whose sandboxed client holds a session open, walks
// every process under lnk, and checks each against SECURITY.md's table:
// none unlisted, each listed one running (a row "with a display" may be
// absent), none of lnk's session outside the tree, each one's parent,
// its seccomp and no_new_privs (/proc/PID/status), whether it is
// dumpable (who owns /proc/PID/environ), and that it holds no fd of a
// kind its row does not allow (a socket by its family). Then the same
// processes are checked against wrong copies of the table (a row's
// seccomp flipped, a row dropped, an fd kind taken from a row), each of
// which must fail. The run is never root's (root's /proc/PID is root's
// either way): as root the test runs lnk as the user lnktest and reads
// every fd; as an unprivileged owner (scripts/test-as-user.sh) it checks
// that an undumpable process's fds are refused to it.
func TestProcessMapMatchesSecurityMd(t *testing.T) {
	rows, procs := runForMap(t, nil, nil)
	if bad := checkProcessMap(rows, procs, false); len(bad) > 0 {
		t.Errorf("the running processes differ from SECURITY.md's process map:\n  %s", strings.Join(bad, "\n  "))
	}
	wrongMaps(t, rows, procs)
}

// TestProcessMapWithADisplay is the same run on a desktop (a real Xvfb)
// with a question showing on a real zenity: the rows "with a display"
// (the ask broker's dialog launcher and its dialog) must then run, as
// the map says, and a map without the dialog's row fails.
func TestProcessMapWithADisplay(t *testing.T) {
	requireSandbox(t)
	display := testenv.StartX(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	shown := func() {
		if win, err := testenv.Xdotool(ctx, display)("search", "--sync", "--onlyvisible", "--name", "^Link asks$"); err != nil || win == "" {
			t.Fatalf("the dialog never showed: %v", err)
		}
	}
	rows, procs := runForMap(t, []string{display}, shown, "delete")
	if bad := checkProcessMap(rows, procs, true); len(bad) > 0 {
		t.Errorf("the running processes differ from SECURITY.md's process map:\n  %s", strings.Join(bad, "\n  "))
	}
	var kept []mapRow
	for _, r := range rows {
		if r.proc != "zenity" {
			kept = append(kept, r)
		}
	}
	if len(kept) == len(rows) {
		t.Fatal("the map has no row zenity")
	}
	if bad := checkProcessMap(kept, procs, true); len(bad) == 0 {
		t.Error("a map with no row for the dialog passed")
	}
}

// runForMap starts the run (env added to lnk's, the client calling
// echo and then each of calls without waiting), calls ready (if any)
// once the client holds its session, and returns SECURITY.md's rows and
// the processes under lnk.
func runForMap(t *testing.T, env []string, ready func(), calls ...string) ([]mapRow, []*liveProc) {
	t.Helper()
	requireSandbox(t)
	text, err := os.ReadFile(filepath.Join("..", "..", "SECURITY.md"))
	if err != nil {
		t.Fatalf("SECURITY.md (scripts/test-as-user.sh copies it beside the packages): %v", err)
	}
	rows, err := readProcessMap(string(text))
	if err != nil {
		t.Fatal(err)
	}
	home := testenv.Home(t)
	var cred *syscall.Credential
	owner := uint32(os.Geteuid())
	if owner == 0 {
		u, err := user.Lookup("lnktest")
		testenv.Require(t, err == nil, "the unprivileged user lnktest (useradd -m lnktest)")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		owner = uint32(uid)
		if err := os.Chown(home, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.MkdirTemp("", "lnk-procmap-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		t.Fatal(err)
	}
	os.Chmod(bin, 0o755)
	for _, name := range []string{"lnk", "lnk-init", "lnk-keybroker", "lnk-netbroker", "lnk-askbroker"} {
		copyExec(t, testenv.Bin(t, name), filepath.Join(bin, name))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The same test binary twice, so the map tells them apart by name:
	// the tool's server and the sandboxed client.
	copyExec(t, self, filepath.Join(bin, "mcp-server"))
	copyExec(t, self, filepath.Join(bin, "client"))
	as := func(cmd *exec.Cmd) *exec.Cmd {
		cmd.Env = append([]string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
		cmd.Dir = home
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setsid: true}
		return cmd
	}
	lnk := func(stdin string, args ...string) string {
		t.Helper()
		cmd := as(exec.Command(filepath.Join(bin, "lnk"), args...))
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("lnk %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	made := regexp.MustCompile(`\(id ([^)]+)\)`).FindStringSubmatch(lnk("", "agent", "create", "demo"))
	if made == nil {
		t.Fatal("lnk agent create names no id")
	}
	agentID := made[1]
	lnk("sealed-value-5e1b\n", "secret", "create", "API_KEY", "--internet-host", "api.localhost")
	lnk("", "secret", "add", "API_KEY", "--agent", "demo")
	lnk("", "sandbox", "tool", "add", "test", "--env", "LNK_TEST_MCP_SERVER=1", "--env", "PATH=/usr/bin:/bin", "--", filepath.Join(bin, "mcp-server"))
	lnk("", "agent", "allow", "demo", "--read", bin, "--command", filepath.Join(bin, "client"))
	lnk("", "agent", "allow", "demo", "--tool", "test", "--allow", "echo")

	if ready != nil {
		// A question unanswered ends sooner than the default two minutes:
		// the walk is done while it shows.
		set := filepath.Join(home, ".lnk", "settings.toml")
		if err := os.WriteFile(set, []byte("ask_wait = \"15s\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if cred != nil {
			if err := os.Chown(set, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := append([]string{"sandbox", "run", "--agent", "demo", "--", filepath.Join(bin, "client"), "mcp-hold"}, calls...)
	run := as(exec.Command(filepath.Join(bin, "lnk"), args...))
	stdin, err := run.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	run.Stderr = &errb // a pipe, as a terminal's would be a tty
	run.WaitDelay = 30 * time.Second
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); run.Wait() })
	if sc := bufio.NewScanner(stdout); !sc.Scan() || sc.Text() != "READY" {
		stdin.Close()
		run.Wait()
		t.Fatalf("the sandbox's client did not hold a session: %q\n%s", sc.Text(), errb.String())
	}
	if ready != nil {
		ready()
	}
	if sid, ok := sessionOf(run.Process.Pid); !ok || sid != run.Process.Pid {
		t.Fatalf("lnk (pid %d) leads no session of its own (%d): the check of its session would see nothing", run.Process.Pid, sid)
	}

	procs := walkProcs(t, run.Process.Pid, owner, home, bin, agentID)
	var seen strings.Builder
	for _, p := range procs {
		var kinds []string
		for k := range p.fds {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		fmt.Fprintf(&seen, "  %d ppid %d (%s) %s seccomp=%v nnp=%v dumpable=%v fds=%v %v\n", p.pid, p.ppid, p.comm, strings.Join(p.argv, " "), p.seccomp, p.noNewPrivs, p.dumpable, kinds, p.fdsErr)
	}
	t.Logf("the processes under lnk:\n%s", seen.String())
	return rows, procs
}

// wrongMaps: wrong copies of the map each fail against the same
// processes (the negative controls).
func wrongMaps(t *testing.T, rows []mapRow, procs []*liveProc) {
	t.Helper()
	wrong := func(what string, change func([]mapRow) []mapRow) {
		t.Helper()
		cp := make([]mapRow, len(rows))
		for i, r := range rows {
			cp[i] = r
			cp[i].fds = map[string]bool{}
			for k := range r.fds {
				cp[i].fds[k] = true
			}
		}
		if bad := checkProcessMap(change(cp), procs, false); len(bad) == 0 {
			t.Errorf("a map with %s passed", what)
		}
	}
	rowNamed := func(rs []mapRow, key string) *mapRow {
		for i := range rs {
			if rs[i].proc == key {
				return &rs[i]
			}
		}
		t.Fatalf("the map has no row %s", key)
		return nil
	}
	wrong("lnk-netbroker without seccomp", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk-netbroker").seccomp = false
		return rs
	})
	wrong("lnk-keybroker dumpable", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk-keybroker").dumpable = true
		return rs
	})
	wrong("no row for the tool's server", func(rs []mapRow) []mapRow {
		var kept []mapRow
		for _, r := range rs {
			if r.proc != "mcp-server" {
				kept = append(kept, r)
			}
		}
		return kept
	})
	wrong("the sandboxed command's pipes not allowed", func(rs []mapRow) []mapRow {
		delete(rowNamed(rs, "client mcp-hold").fds, "pipe")
		return rs
	})
	wrong("lnk-netbroker's parent changed", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk-netbroker").parent = "bwrap"
		return rs
	})
	// An fd the map does not allow, planted in what was read: a folder of
	// ~/.lnk in the netbroker, a TCP socket in the keybroker (whose fds,
	// unreadable to their owner, are then only the planted one).
	for _, plant := range []struct{ name, kind string }{{"lnk-netbroker", "~/.lnk/agents"}, {"lnk-keybroker", "socket:tcp"}} {
		planted := false
		for i, p := range procs {
			if p.name != plant.name {
				continue
			}
			cp := *p
			cp.fds = map[string]bool{plant.kind: true}
			for k := range p.fds {
				cp.fds[k] = true
			}
			withPlant := append([]*liveProc{}, procs...)
			withPlant[i] = &cp
			if bad := checkProcessMap(rows, withPlant, false); len(bad) == 0 {
				t.Errorf("%s holding an fd of kind %s passed", plant.name, plant.kind)
			}
			planted = true
		}
		if !planted {
			t.Errorf("no %s to plant an fd in", plant.name)
		}
	}
}

// copyExec copies an executable, world-readable, for the run's owner.
func copyExec(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
