package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/kernel/sandbox/probe"
)

// memoryHierarchy is the v1 memory hierarchy's mount, or "" (the test
// machine's; a v2-only one has its memory in the unified hierarchy).
func memoryHierarchy() string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) > 4 && len(g) > 2 && g[0] == "cgroup" && strings.Contains(","+g[2]+",", ",memory,") {
			return f[4]
		}
	}
	return ""
}

// makeCgroup makes a v1 memory cgroup limited to limit bytes, owned by
// uid, removed (with whatever lnk left in it) when the test ends.
func makeCgroup(t *testing.T, root string, limit int64, uid int) string {
	dir := filepath.Join(root, fmt.Sprintf("lnk-test-%d-%s-%d", os.Getpid(), t.Name(), uid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kids, _ := filepath.Glob(filepath.Join(dir, "lnk-sandbox-*"))
		for _, k := range kids {
			os.Remove(k)
		}
		// The sandbox's last processes may still be leaving it.
		var err error
		for range 500 {
			if err = os.Remove(dir); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("cgroup left: %v", err)
	})
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(fmt.Sprint(limit)), 0); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"", "cgroup.procs", "tasks"} {
		if err := os.Chown(filepath.Join(dir, n), uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// lnkIn runs lnk from cgroup dir: a shell moves itself there, then
// becomes lnk.
func lnkIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	return lnkInWith(t, dir, nil, args...)
}

// lnkInWith is lnkIn with stdin.
func lnkInWith(t *testing.T, dir string, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	return lnkInAs(t, dir, nil, stdin, args...)
}

// lnkInAs is lnkInWith as user u (nil: this process's), its HOME a
// folder of its own.
func lnkInAs(t *testing.T, dir string, u *user.User, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	testenv.Bin(t, "lnk-init")
	cmd := exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0"/cgroup.procs && exec "$@"`, dir, testenv.Bin(t, "lnk")}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Dir = t.TempDir()
	if u != nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		// t.TempDir's parent is root's alone: the user's folders are
		// made in the system's temporary folder.
		home, err := os.MkdirTemp("", "lnk-memtest-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(home) })
		if err := os.Chown(home, uid, gid); err != nil {
			t.Fatal(err)
		}
		cmd.Dir = home
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "USER=" + u.Username}
	}
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

func statusOf(t *testing.T, errs string) sandbox.Status {
	t.Helper()
	for _, line := range strings.Split(errs, "\n") {
		if strings.HasPrefix(line, `{"pid"`) {
			var st sandbox.Status
			if err := json.Unmarshal([]byte(line), &st); err != nil {
				t.Fatal(err)
			}
			return st
		}
	}
	t.Fatalf("no status in %q", errs)
	return sandbox.Status{}
}

func sandboxKids(t *testing.T, dir string) []string {
	kids, err := filepath.Glob(filepath.Join(dir, "lnk-sandbox-*"))
	if err != nil {
		t.Fatal(err)
	}
	return kids
}

// TestMemoryBoundInDelegatedCgroup: run from a memory cgroup this user
// owns (limited to 1 GiB), lnk says a bound of half that ("cgroup v1"), a
// command touching more than the bound (but less than the cgroup's own
// limit, so only the sandbox's bound can stop it) is killed, one staying
// under it completes, and the sandbox's cgroup is gone after each run
// (after an exec'd run, at the next run's sweep). From one another user
// owns, it says none.
func TestMemoryBoundInDelegatedCgroup(t *testing.T) {
	requireSandbox(t)
	root := memoryHierarchy()
	testenv.Require(t, root != "", "the cgroup v1 memory controller")
	if os.Getuid() != 0 {
		ownCgroupSaysItsBound(t, root)
		return
	}
	const limit = 1 << 30
	dir := makeCgroup(t, root, limit, 0)
	lnkBin := testenv.Bin(t, "lnk")
	// touch runs the check's own probe: it maps n bytes and writes each
	// page, and says "open" once all are written.
	touch := func(dir string, n int, status bool) (int, string, string) {
		spec, _ := json.Marshal(probe.Spec{Probes: []probe.Probe{{Name: "touch", Kind: "touch", Arg: fmt.Sprint(n), Expect: probe.Closed}}})
		args := []string{"sandbox", "run", "--internet=false", "--command", lnkBin}
		if status {
			args = append(args, "--json-status")
		}
		return lnkInWith(t, dir, spec, append(args, "--", lnkBin, "sandbox", "probe")...)
	}
	const done = `"result":"open"`
	code, out, errs := touch(dir, 32<<20, true)
	st := statusOf(t, errs)
	if st.Memory.By != "cgroup v1" || st.Memory.Max != limit/2 {
		t.Errorf("--json-status said memory %+v, want half of %d by cgroup v1", st.Memory, limit)
	}
	if code != 0 || !strings.Contains(out, done) {
		t.Errorf("32 MiB, under the bound: exit %d %q %q", code, out, errs)
	}
	if k := sandboxKids(t, dir); len(k) != 0 {
		t.Errorf("the sandbox's cgroup is left: %v", k)
	}
	code, out, errs = touch(dir, 768<<20, true)
	if code != 137 || strings.Contains(out, done) {
		t.Errorf("768 MiB, past the bound: exit %d %q %q, want killed (137)", code, out, errs)
	}
	if k := sandboxKids(t, dir); len(k) != 0 {
		t.Errorf("the sandbox's cgroup is left: %v", k)
	}
	code, out, _ = touch(dir, 768<<20, false) // lnk execs bubblewrap
	if code != 137 || strings.Contains(out, done) {
		t.Errorf("exec'd, 768 MiB, past the bound: exit %d %q, want killed (137)", code, out)
	}
	touch(dir, 1, true)
	if k := sandboxKids(t, dir); len(k) != 0 {
		t.Errorf("the exec'd sandbox's cgroup is not swept: %v", k)
	}

	// The unprivileged owner (lnktest), its cgroup delegated to it by
	// root as systemd would: the same bound, and the command past it
	// killed.
	if u, err := user.Lookup("lnktest"); err != nil {
		t.Log("no user lnktest: the unprivileged case not run (scripts/test-as-user.sh needs it too)")
	} else {
		uid, _ := strconv.Atoi(u.Uid)
		theirs := makeCgroup(t, root, limit, uid)
		spec, _ := json.Marshal(probe.Spec{Probes: []probe.Probe{{Name: "touch", Kind: "touch", Arg: fmt.Sprint(768 << 20), Expect: probe.Closed}}})
		code, out, errs := lnkInAs(t, theirs, u, spec, "sandbox", "run", "--internet=false", "--json-status", "--command", lnkBin, "--", lnkBin, "sandbox", "probe")
		if st := statusOf(t, errs); st.Memory.By != "cgroup v1" || st.Memory.Max != limit/2 {
			t.Errorf("as lnktest, --json-status said memory %+v", st.Memory)
		}
		if code != 137 || strings.Contains(out, done) {
			t.Errorf("as lnktest, 768 MiB, past the bound: exit %d %q %q, want killed (137)", code, out, errs)
		}
		if k := sandboxKids(t, theirs); len(k) != 0 {
			t.Errorf("as lnktest, the sandbox's cgroup is left: %v", k)
		}
	}

	// Another user's cgroup (nobody's) is not delegated to this one:
	// no bound, said, and the command still runs.
	other := makeCgroup(t, root, limit, 65534)
	code, out, errs = touch(other, 1, true)
	if st := statusOf(t, errs); st.Memory.By != "none" || st.Memory.Max != 0 || st.Memory.Why == "" {
		t.Errorf("from an undelegated cgroup, --json-status said memory %+v", st.Memory)
	}
	if code != 0 || !strings.Contains(out, done) {
		t.Errorf("undelegated: exit %d %q %q", code, out, errs)
	}
	if k := sandboxKids(t, other); len(k) != 0 {
		t.Errorf("a cgroup made where none is delegated: %v", k)
	}
}

// TestCheckProbesTheMemoryBound: lnk sandbox check, from a memory cgroup
// this user owns, touches 64 MiB past its sandbox's bound (its own, 512
// MiB at most) and finds it closed (the probe killed); from another
// user's, the probe is the known gap, named, and the check passes.
func TestCheckProbesTheMemoryBound(t *testing.T) {
	requireSandbox(t)
	root := memoryHierarchy()
	testenv.Require(t, root != "", "the cgroup v1 memory controller")
	if os.Getuid() != 0 {
		t.Log("only root makes the test's cgroups: run as root")
		return
	}
	w := newWorld(t)
	// Grants with no proxy: a check that needs one is a start of the
	// kernel's, whose kernel, started on demand from inside the test's
	// cgroup, would outlive the check there and keep the cgroup busy.
	inCgroup := func(uid int) func(*testing.T, ...string) (int, string, string) {
		dir := makeCgroup(t, root, 2<<30, uid)
		return func(t *testing.T, args ...string) (int, string, string) { return lnkIn(t, dir, args...) }
	}
	code, rs, errs := check(t, inCgroup(0), "--internet=false", "--read", w.data)
	mem := resultsOf(rs, "memory")
	if code != 0 || len(mem) != 1 || mem[0].Got != probe.Closed || mem[0].Arg != fmt.Sprint(512<<20+64<<20) {
		t.Errorf("delegated: exit %d, memory probe %+v: %s", code, mem, errs)
	}
	code, rs, errs = check(t, inCgroup(65534), "--internet=false", "--read", w.data)
	var gap []probe.Result
	for _, r := range resultsOf(rs, "skip") {
		if strings.HasPrefix(r.Name, "use memory past a bound") {
			gap = append(gap, r)
		}
	}
	if code != 0 || len(gap) != 1 || gap[0].Expect != probe.Gap || !strings.Contains(gap[0].Name, "no memory bound on this machine") || len(resultsOf(rs, "memory")) != 0 {
		t.Errorf("undelegated: exit %d, memory probe %+v: %s", code, gap, errs)
	}
}

// TestMemoryProbeFindsNoBoundOpen: the check's memory probe, in
// bubblewrap alone (no cgroup of its own: no bound), touches all it is
// told and says open; the check above finds it closed only because the
// bound holds.
func TestMemoryProbeFindsNoBoundOpen(t *testing.T) {
	requireSandbox(t)
	rs := probeIn(t, nil, probe.Probe{Name: "memory", Kind: "memory", Arg: fmt.Sprint(320 << 20), Expect: probe.Closed})
	if rs.Got != probe.Open {
		t.Fatalf("with no bound the memory probe said %s (%s), want open", rs.Got, rs.Detail)
	}
}

// ownCgroupSaysItsBound: a user who cannot make the test's cgroups runs
// lnk where it is: if its own memory cgroup is this user's, lnk says a
// bound by cgroup v1, else none, with why.
func ownCgroupSaysItsBound(t *testing.T, root string) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	own := ""
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 && strings.Contains(","+f[1]+",", ",memory,") {
			own = filepath.Join(root, f[2])
		}
	}
	fi, err := os.Stat(own)
	if err != nil {
		t.Fatal(err)
	}
	mine := fi.Sys().(*syscall.Stat_t).Uid == uint32(os.Getuid())
	code, _, errs := lnk(t, "sandbox", "run", "--internet=false", "--json-status", "--", "sh", "-c", ":")
	st := statusOf(t, errs)
	switch {
	case code != 0:
		t.Errorf("exit %d: %s", code, errs)
	case mine && (st.Memory.By != "cgroup v1" || st.Memory.Max <= 0):
		t.Errorf("its own cgroup %s is this user's, but --json-status said memory %+v", own, st.Memory)
	case !mine && (st.Memory.By != "none" || st.Memory.Why == ""):
		t.Errorf("its own cgroup %s is not this user's, but --json-status said memory %+v", own, st.Memory)
	}
}
