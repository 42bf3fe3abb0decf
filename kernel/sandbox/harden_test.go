package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/kernel/sandbox/probe"
)

// TestCheckProbesLoaderMemfdAndForks: lnk sandbox check tries to run a
// program [commands] does not list through ld.so (copied into /tmp and
// into the granted folder it writes: closed, those mounts are noexec;
// installed in /usr: open, the known gap) and from a memfd (closed; a
// memfd sealed noexec, the control, is made), and forks past the
// sandbox's process bound (closed, at the default 4,096: threads, which
// the bound counts as it counts processes, and start far faster).
func TestCheckProbesLoaderMemfdAndForks(t *testing.T) {
	w := newWorld(t)
	code, rs, errs := check(t, lnk, "--write", w.data)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ldso := resultsOf(rs, "ldso")
	if len(ldso) != 3 {
		t.Fatalf("%d ld.so probes, want /tmp, %s and the installed one: %+v", len(ldso), w.data, ldso)
	}
	for _, r := range ldso {
		want := probe.Closed
		if r.Expect == probe.Gap {
			want = probe.Open // the known gap: the probe must still see it
		}
		if r.Got != want {
			t.Errorf("%s: got %s (%s), want %s", r.Name, r.Got, r.Detail, want)
		}
	}
	for kind, want := range map[string]string{"memfd": probe.Closed, "memfd-sealed": probe.Open, "tasks": probe.Closed} {
		got := resultsOf(rs, kind)
		if len(got) != 1 || got[0].Got != want {
			t.Errorf("%s: %+v, want %s", kind, got, want)
		}
	}
	if f := resultsOf(rs, "tasks"); len(f) == 1 && f[0].Arg != "4096" {
		t.Errorf("the process probe tried a bound of %s, want 4096", f[0].Arg)
	}
}

// TestCheckFailsWithoutNoexec: on a kernel without mount_setattr lnk
// sandbox check refuses (exit 5) naming it; with --degraded it runs
// without noexec mounts, and the ld.so probes find the way open, name
// it and fail (exit 1).
func TestCheckFailsWithoutNoexec(t *testing.T) {
	w := newWorld(t)
	code, out, errs := lnkWithout(t, "noexec", "sandbox", "check", "--internet=false", "--write", w.data)
	if code != 5 || !strings.Contains(errs, "mount_setattr") {
		t.Fatalf("without mount_setattr: exit %d, %q %q; want 5 naming it", code, out, errs)
	}
	code, out, errs = lnkWithout(t, "noexec", "sandbox", "check", "--internet=false", "--degraded", "--write", w.data)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	for _, name := range []string{"run a program not in [commands] through ld.so, copied into /tmp", "run a program not in [commands] through ld.so, copied into " + w.data} {
		if line := lineWith(out, name); !strings.Contains(line, "OPEN") || !strings.Contains(line, "FAIL") {
			t.Errorf("%q not named open: %q\n%s", name, line, out)
		}
	}
}

// TestCheckFailsWithoutTheMemfdRule: without seccomp (--degraded), the
// memfd probe runs a program from a memfd, names it open and fails.
func TestCheckFailsWithoutTheMemfdRule(t *testing.T) {
	w := newWorld(t)
	code, out, errs := lnkWithout(t, "seccomp", "sandbox", "check", "--internet=false", "--degraded", "--read", w.data)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	if line := lineWith(out, "run a program not in [commands] from a memfd"); !strings.Contains(line, "OPEN") || !strings.Contains(line, "FAIL") {
		t.Errorf("the memfd probe did not find it open: %q\n%s", line, out)
	}
}

// TestProcessProbeFindsNoBoundOpen: the check's process probe, run as
// `lnk sandbox check` runs it but in bubblewrap alone (its own pid
// namespace, no lnk-init: no bound), starts all 4,096 and says open; the
// check above finds it closed only because the bound holds.
func TestProcessProbeFindsNoBoundOpen(t *testing.T) {
	requireSandbox(t)
	rs := probeIn(t, nil, probe.Probe{Name: "tasks", Kind: "tasks", Arg: "4096", Expect: probe.Closed})
	if rs.Got != probe.Open {
		t.Fatalf("with no bound the process probe said %s (%s), want open", rs.Got, rs.Detail)
	}
}

// TestForkBombEndsAtTheBound: in lnk sandbox run, processes forked one
// after another (each alive, none reaped) are refused (EAGAIN) short of
// 4,096, and only just short: the sandbox's few other tasks take the
// rest (the control, so a fork failing for another reason cannot pass).
// Without the bound the same probe forks all 4,096: the process probe's
// test above shows the bound gone is seen, with threads, far cheaper.
func TestForkBombEndsAtTheBound(t *testing.T) {
	w := newWorld(t)
	lnkBin := testenv.Bin(t, "lnk")
	fork := probe.Probe{Name: "fork", Kind: "fork", Arg: "4096", Expect: probe.Closed}
	in := probeIn(t, []string{"sandbox", "run", "--internet=false", "--read", filepath.Dir(lnkBin), "--read", w.data, "--command", lnkBin, "--"}, fork)
	var n int
	if _, err := fmt.Sscanf(in.Detail, "fork refused (EAGAIN) after %d", &n); in.Got != probe.Closed || err != nil || n < 4000 || n >= 4096 {
		t.Fatalf("in the sandbox: %s (%s), want refused after 4,000 to 4,095 forks", in.Got, in.Detail)
	}
}

// probeIn runs `lnk sandbox probe` with the one probe p, under `lnk
// <via> lnk sandbox probe`, or with via nil in bubblewrap alone (its own
// user and pid namespaces), and returns its result.
func probeIn(t *testing.T, via []string, p probe.Probe) probe.Result {
	t.Helper()
	lnkBin := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	spec, _ := json.Marshal(probe.Spec{Probes: []probe.Probe{p}})
	argv := []string{"bwrap", "--unshare-user", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		// lnk again where it is, should /tmp hold it (the user suite's copy)
		"--ro-bind", filepath.Dir(lnkBin), filepath.Dir(lnkBin), lnkBin, "sandbox", "probe"}
	if via != nil {
		argv = append(append([]string{lnkBin}, via...), lnkBin, "sandbox", "probe")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(spec)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var rs []probe.Result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil || len(rs) != 1 {
		t.Fatalf("%v: %s", err, out.String())
	}
	return rs[0]
}

// TestStatusSaysNoexecAndBounds: --json-status names the mounts made
// noexec (/tmp, /dev, each granted folder) and the bound on processes
// (4,096, and how) and on memory; inside, those mounts are noexec, and a
// program [commands] names inside a granted folder still runs (bound
// again at its own path), while a copy of it beside it does not.
func TestStatusSaysNoexecAndBounds(t *testing.T) {
	w := newWorld(t)
	bin := filepath.Join(w.data, "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(bin, "tool")
	b, err := os.ReadFile("/usr/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tool, filepath.Join(bin, "copy")} {
		if err := os.WriteFile(p, b, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	script := `grep -E " (/tmp|/dev|` + w.data + `) " /proc/self/mountinfo; ` + tool + ` && echo TOOL-RAN; ` + bin + `/copy || echo COPY-REFUSED`
	code, out, errs := lnk(t, "sandbox", "run", "--json-status", "--internet=false", "--write", w.data, "--command", tool, "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	var st sandbox.Status
	for _, line := range strings.Split(errs, "\n") {
		if strings.HasPrefix(line, `{"pid"`) {
			if err := json.Unmarshal([]byte(line), &st); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, m := range []string{"/tmp", "/dev", w.data} {
		if !slices.Contains(st.NoExec, m) {
			t.Errorf("--json-status's noexec %v lacks %s", st.NoExec, m)
		}
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 5 && f[4] == m {
				line = l
			}
		}
		if !strings.Contains(line, "noexec") {
			t.Errorf("%s is not mounted noexec inside: %q", m, line)
		}
	}
	if st.Processes.Max != sandbox.DefaultMaxProcs || (st.Processes.By != "pid_max" && st.Processes.By != "rlimit") || st.Memory.By == "" {
		t.Errorf("--json-status said processes %+v, memory %+v", st.Processes, st.Memory)
	}
	if !strings.Contains(out, "TOOL-RAN") || !strings.Contains(out, "COPY-REFUSED") {
		t.Errorf("the listed tool must run and its unlisted copy must not: %q %q", out, errs)
	}
}

// TestRelativePathFromRootRefused: from /, a relative path (tmp, which
// would be the host's /tmp) is refused, with a hint; from a folder, the
// same relative path is taken against it (the control).
func TestRelativePathFromRootRefused(t *testing.T) {
	w := newWorld(t)
	run := func(dir string, args ...string) (int, string) {
		cmd := exec.Command(testenv.Bin(t, "lnk"), args...)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := run("/", "sandbox", "run", "--internet=false", "--read", "tmp", "--", "sh", "-c", "exit 0")
	if code != 3 || !strings.Contains(out, "relative path from /") || !strings.Contains(out, "hint: ") {
		t.Fatalf("from /: exit %d, %q; want 3 refusing the relative path", code, out)
	}
	code, out = run(w.home, "sandbox", "run", "--internet=false", "--read", "data", "--", "cat", filepath.Join(w.data, "f"))
	if code != 0 || !strings.Contains(out, "granted-content") {
		t.Fatalf("from HOME: exit %d, %q", code, out)
	}
}

// TestSystemFolderGrantStaysExecutable: a granted folder inside the
// system's (/usr/share) is never made noexec, where the libraries every
// program maps live; the command still runs, and the status says only
// /tmp and /dev.
func TestSystemFolderGrantStaysExecutable(t *testing.T) {
	newWorld(t)
	code, out, errs := lnk(t, "sandbox", "run", "--json-status", "--internet=false", "--read", "/usr/share", "--", "sh", "-c", "echo RAN")
	if code != 0 || !strings.Contains(out, "RAN") {
		t.Fatalf("exit %d, %q %q", code, out, errs)
	}
	if strings.Contains(errs, `"/usr/share"`) || !strings.Contains(errs, `"noexec":["/tmp","/dev"]`) {
		t.Fatalf("--json-status: %s", errs)
	}
}
