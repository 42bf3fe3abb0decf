package toolbridge

import (
	"bufio"
	"context"
	"fmt"
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

// TestProcessMapMatchesSecurityMd starts `lnk sandbox run --agent demo`
// for an agent holding a sealed secret and a tool (this binary as a real
// go-sdk MCP server) whose sandboxed client holds a session open, walks
// every process under lnk, and checks each against SECURITY.md's table:
// none unlisted, each listed one running (a row "with a display" or "at
// a file request" may be absent), none of lnk's session outside the
// tree, each one's parent,
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
	rows, procs, _ := runForMap(t, nil, nil)
	if bad := checkProcessMap(rows, procs, false); len(bad) > 0 {
		t.Errorf("the running processes differ from SECURITY.md's process map:\n  %s", strings.Join(bad, "\n  "))
	}
	wrongMaps(t, rows, procs)
}

// TestProcessMapOfAFlagRun is TestProcessMapMatchesSecurityMd for a run
// of flag grants (`lnk sandbox run --read … --command … --tool test
// --allow echo --internet-host api.localhost -- client mcp-hold`): a
// start of no agent whose proxy, ask broker and tool bridge are the
// kernel's children as an agent's are, and no key broker of an agent's
// sealed secrets runs. Each process is checked against SECURITY.md's
// second table; wrong copies of it fail.
func TestProcessMapOfAFlagRun(t *testing.T) {
	rows, procs, _ := runForMapOf(t, true, nil, nil)
	if bad := checkProcessMap(rows, procs, false); len(bad) > 0 {
		t.Errorf("the running processes differ from SECURITY.md's process map of a flag run:\n  %s", strings.Join(bad, "\n  "))
	}
	wrongFlagMaps(t, rows, procs)
}

// TestProcessMapWithADisplay is the same run on a desktop (a real Xvfb)
// with a question showing on a real zenity: the rows "with a display"
// (the ask broker's dialog launcher and its dialog) must then run, as
// the map says, and a map without the dialog's row fails.
func TestProcessMapWithADisplay(t *testing.T) {
	requireSandbox(t)
	desktop := testenv.Desktop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	shown := func() {
		if win, err := testenv.Xdotool(ctx, desktop...)("search", "--sync", "--onlyvisible", "--name", "^Link asks$"); err != nil || win == "" {
			t.Fatalf("the dialog never showed: %v", err)
		}
	}
	rows, procs, _ := runForMap(t, desktop, shown, "delete")
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
func runForMap(t *testing.T, env []string, ready func(), calls ...string) ([]mapRow, []*liveProc, *mapRun) {
	t.Helper()
	return runForMapOf(t, false, env, ready, calls...)
}

// runForMapOf is runForMap; with flags, the run is one of flag grants
// (no agent: the same tool and an internet host, as --tool and
// --internet-host give them), checked against SECURITY.md's second
// table.
func runForMapOf(t *testing.T, flags bool, env []string, ready func(), calls ...string) ([]mapRow, []*liveProc, *mapRun) {
	t.Helper()
	requireSandbox(t)
	text, err := os.ReadFile(filepath.Join("..", "..", "SECURITY.md"))
	if err != nil {
		t.Fatalf("SECURITY.md (scripts/test-as-user.sh copies it beside the packages): %v", err)
	}
	marker := mapMarker
	if flags {
		marker = flagMapMarker
	}
	rows, err := readProcessMap(string(text), marker)
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
	for _, name := range []string{"lnk", "lnk-init", "lnk-keybroker", "lnk-netbroker", "lnk-askbroker", "lnk-fsbroker", "lnk-toolbridge"} {
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
	client := filepath.Join(bin, "client")
	lnk("", "sandbox", "tool", "add", "test", "--env", "LNK_TEST_MCP_SERVER=1", "--env", "PATH=/usr/bin:/bin", "--", filepath.Join(bin, "mcp-server"))
	agentID := ""
	runArgs := []string{"sandbox", "run", "--read", bin, "--command", client, "--tool", "test", "--allow", "echo", "--internet-host", "api.localhost"}
	if !flags {
		made := regexp.MustCompile(`\(id ([^)]+)\)`).FindStringSubmatch(lnk("", "agent", "create", "demo"))
		if made == nil {
			t.Fatal("lnk agent create names no id")
		}
		agentID = made[1]
		lnk("sealed-value-5e1b\n", "secret", "create", "API_KEY", "--internet-host", "api.localhost")
		lnk("", "secret", "add", "API_KEY", "--agent", "demo")
		lnk("", "agent", "allow", "demo", "--read", bin, "--command", client)
		lnk("", "agent", "allow", "demo", "--tool", "test", "--allow", "echo")
		runArgs = []string{"sandbox", "run", "--agent", "demo"}
	}

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
	// The owner's kernel runs already (lnk kernel start, or its systemd
	// unit), as it holds the run's capabilities and is its brokers'
	// parent: no process of the run's. Started on demand by the run, it
	// would be lnk's child until lnk ends. Its pid is what it says.
	started := regexp.MustCompile(`pid ([0-9]+)`).FindStringSubmatch(lnk("", "kernel", "start"))
	if started == nil {
		t.Fatal("lnk kernel start names no pid")
	}
	kernelPID, _ := strconv.Atoi(started[1])
	args := append(append(runArgs, "--", client, "mcp-hold"), calls...)
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

	// Every process under lnk, then every process under the kernel: the
	// brokers are the kernel's children.
	if holder := lockHolder(t, filepath.Join(home, ".lnk", "run", "kernel.lock")); holder != kernelPID {
		t.Fatalf("the kernel (pid %d) does not hold its lock; pid %d does", kernelPID, holder)
	}
	if sid, ok := sessionOf(kernelPID); !ok || sid != kernelPID {
		t.Fatalf("the kernel (pid %d) leads no session of its own (%d)", kernelPID, sid)
	}
	procs := walkProcs(t, []int{run.Process.Pid, kernelPID}, owner, home, bin, agentID)
	// A broker the kernel started for this run may still be locking
	// itself down (its filter, not dumpable) as the client says READY:
	// the map is of each process as it runs, so the walk waits until
	// every broker has, for at most 20 s, then checks what it sees.
	for end := time.Now().Add(20 * time.Second); !brokersLocked(procs) && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		procs = walkProcs(t, []int{run.Process.Pid, kernelPID}, owner, home, bin, agentID)
	}
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
	return rows, procs, &mapRun{cmd: run, stderr: &errb}
}

// mapRun is runForMap's lnk sandbox run, still running.
type mapRun struct {
	cmd    *exec.Cmd
	stderr *strings.Builder // read once it has ended
}

// TestBridgeKilledEndsTheRun: the same run, its tool bridge
// (lnk-toolbridge, the kernel's child) killed with SIGKILL mid-session:
// the run ends closed — the sandbox killed, lnk failing and saying the
// bridge ended — and the tool's server it had asked for is gone with it
// (its life closed). A bridge is never started again.
func TestBridgeKilledEndsTheRun(t *testing.T) {
	_, procs, run := runForMap(t, nil, nil)
	var bridge, server int
	for _, p := range procs {
		switch p.name {
		case "lnk-toolbridge":
			bridge = p.pid
		case "mcp-server":
			server = p.pid
		}
	}
	if bridge == 0 || server == 0 {
		t.Fatalf("no bridge (%d) or tool server (%d) running", bridge, server)
	}
	if err := syscall.Kill(bridge, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- run.cmd.Wait() }()
	select {
	case err := <-ended:
		if err == nil {
			t.Errorf("lnk sandbox run succeeded after its tool bridge was killed:\n%s", run.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end within 60 s of its bridge's death (its client holds its session open)")
	}
	if msg := run.stderr.String(); !strings.Contains(msg, "its broker tools/") {
		t.Errorf("lnk did not say its tool bridge ended:\n%s", msg)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", server))
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool's server (pid %d) outlived the bridge that asked for it", server)
		}
	}
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
	wrong("lnk-netbroker under lnk, as it was before the kernel started it", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk-netbroker").parent = "lnk sandbox run"
		return rs
	})
	wrong("lnk-toolbridge without seccomp", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk-toolbridge").seccomp = false
		return rs
	})
	wrong("lnk-toolbridge dumpable", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk-toolbridge").dumpable = true
		return rs
	})
	wrong("lnk-toolbridge under lnk, as the bridge's goroutines were", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk-toolbridge").parent = "lnk sandbox run"
		return rs
	})
	wrong("the tool's server under lnk", func(rs []mapRow) []mapRow {
		rowNamed(rs, "mcp-server").parent = "lnk sandbox run"
		return rs
	})
	wrong("no row for lnk-toolbridge", func(rs []mapRow) []mapRow {
		var kept []mapRow
		for _, r := range rs {
			if r.proc != "lnk-toolbridge" {
				kept = append(kept, r)
			}
		}
		return kept
	})
	wrong("the tool's server under landlock", func(rs []mapRow) []mapRow {
		rowNamed(rs, "mcp-server").landlock = true
		return rs
	})
	wrong("lnk-askbroker under lnk", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk-askbroker").parent = "lnk sandbox run"
		return rs
	})
	wrong("the kernel under lnk", func(rs []mapRow) []mapRow {
		rowNamed(rs, "lnk kernel run").parent = "lnk sandbox run"
		return rs
	})
	// An fd the map does not allow, planted in what was read: a folder of
	// ~/.lnk in the netbroker, a TCP socket in the keybroker (whose fds,
	// unreadable to their owner, are then only the planted one).
	for _, plant := range []struct{ name, kind string }{{"lnk-netbroker", "~/.lnk/agents"}, {"lnk-keybroker", "socket:tcp"}, {"lnk-toolbridge", "~/.lnk/sandbox/tools"}, {"lnk-toolbridge", "memfd"}} {
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

// brokersLocked says whether every broker among procs (lnk-*broker) runs
// under its seccomp filter and is not dumpable: done with its start.
func brokersLocked(procs []*liveProc) bool {
	for _, p := range procs {
		if strings.HasPrefix(p.name, "lnk-") && strings.HasSuffix(p.name, "broker") && (!p.seccomp || p.dumpable) {
			return false
		}
	}
	return true
}
