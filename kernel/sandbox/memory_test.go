package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
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
	dir := filepath.Join(root, fmt.Sprintf("lnk-test-%d-%d", os.Getpid(), uid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kids, _ := filepath.Glob(filepath.Join(dir, "lnk-sandbox-*"))
		for _, k := range kids {
			os.Remove(k)
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("cgroup left: %v", err)
		}
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

// lnkIn runs lnk sandbox run from cgroup dir: a shell moves itself
// there, then becomes lnk.
func lnkIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	testenv.Bin(t, "lnk-init")
	cmd := exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0"/cgroup.procs && exec "$@"`, dir, testenv.Bin(t, "lnk"), "sandbox", "run"}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Dir = t.TempDir()
	cmd.Run()
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
// owns (limited to 512 MiB), lnk says a bound of half that ("cgroup
// v1"), a command touching more than the bound is killed, one staying
// under it completes, and the sandbox's cgroup is gone after each run
// (after an exec'd run, at the next run's sweep). From one another user
// owns, it says none.
func TestMemoryBoundInDelegatedCgroup(t *testing.T) {
	requireSandbox(t)
	root := memoryHierarchy()
	testenv.Require(t, root != "", "the cgroup v1 memory controller")
	if os.Getuid() != 0 {
		t.Log("only root makes the test's cgroups: run as root (scripts/test-as-user.sh runs the rest)")
		return
	}
	const limit = 512 << 20
	dir := makeCgroup(t, root, limit, 0)
	perl := func(dir string, n int, status bool) (int, string, string) {
		args := []string{"--internet=false", "--command", "/usr/bin/perl"}
		if status {
			args = append(args, "--json-status")
		}
		return lnkIn(t, dir, append(args, "--", "perl", "-e", fmt.Sprintf(`$x = "a" x %d; print "DONE\n"`, n))...)
	}
	code, out, errs := perl(dir, 32<<20, true)
	st := statusOf(t, errs)
	if st.Memory.By != "cgroup v1" || st.Memory.Max != limit/2 {
		t.Errorf("--json-status said memory %+v, want half of %d by cgroup v1", st.Memory, limit)
	}
	if code != 0 || !strings.Contains(out, "DONE") {
		t.Errorf("32 MiB, under the bound: exit %d %q %q", code, out, errs)
	}
	if k := sandboxKids(t, dir); len(k) != 0 {
		t.Errorf("the sandbox's cgroup is left: %v", k)
	}
	code, out, errs = perl(dir, 384<<20, true)
	if code != 137 || strings.Contains(out, "DONE") {
		t.Errorf("384 MiB, past the bound: exit %d %q %q, want killed (137)", code, out, errs)
	}
	if k := sandboxKids(t, dir); len(k) != 0 {
		t.Errorf("the sandbox's cgroup is left: %v", k)
	}
	code, out, _ = perl(dir, 384<<20, false) // lnk execs bubblewrap
	if code != 137 || strings.Contains(out, "DONE") {
		t.Errorf("exec'd, 384 MiB, past the bound: exit %d %q, want killed (137)", code, out)
	}
	perl(dir, 1, true)
	if k := sandboxKids(t, dir); len(k) != 0 {
		t.Errorf("the exec'd sandbox's cgroup is not swept: %v", k)
	}

	// Another user's cgroup (nobody's) is not delegated to this one:
	// no bound, said, and the command still runs.
	other := makeCgroup(t, root, limit, 65534)
	code, out, errs = perl(other, 1, true)
	if st := statusOf(t, errs); st.Memory.By != "none" || st.Memory.Max != 0 || st.Memory.Why == "" {
		t.Errorf("from an undelegated cgroup, --json-status said memory %+v", st.Memory)
	}
	if code != 0 || !strings.Contains(out, "DONE") {
		t.Errorf("undelegated: exit %d %q %q", code, out, errs)
	}
	if k := sandboxKids(t, other); len(k) != 0 {
		t.Errorf("a cgroup made where none is delegated: %v", k)
	}
}
