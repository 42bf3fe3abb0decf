package sandbox_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestKilledLnkLeavesNothing: lnk sandbox run with a proxy (lnk waits
// beside bubblewrap, the relay runs inside), SIGKILLed at points of its
// start, leaves no process of that run behind once lnk-init has started:
// not bubblewrap, not its PID 1, not lnk-init, the relay or the command.
// bubblewrap's own --die-with-parent comes too late in its child to cover
// this; the lifeline (lnk-init --lifeline-fd) does.
func TestKilledLnkLeavesNothing(t *testing.T) {
	w := newWorld(t)
	lnkBin := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	// The run needs a proxy, which the kernel starts: the owner's kernel
	// runs already (lnk kernel start), no process of the run's; when lnk
	// is killed its connection closes, and the kernel ends the start and
	// kills what it recorded.
	if code, _, errs := lnk(t, "kernel", "start"); code != 0 {
		t.Fatal(errs)
	}
	t.Cleanup(func() { lnk(t, "kernel", "stop") })
	lnk := lnkBin
	// Not "bubblewrap started": killed before lnk-init runs, bubblewrap's
	// child itself now and then lives on (seen spinning, or exiting for
	// seconds, before it execs anything), which no lifeline of lnk-init's
	// can reach.
	points := []string{"at once", "lnk-init started", "lnk-init started", "lnk-init started",
		"lnk-init started", "command runs", "command runs"}
	for i, at := range points {
		t.Run(fmt.Sprintf("%d %s", i, at), func(t *testing.T) {
			killDuringStart(t, lnk, w, at, fmt.Sprintf("30.%06d", 1000+i))
		})
	}
}

// killDuringStart starts one run of `sleep secs`, SIGKILLs lnk once at is
// seen (polled, never timed), then polls until nothing of the run is left.
func killDuringStart(t *testing.T, lnk string, w world, at, secs string) {
	cmd := exec.Command(lnk, "sandbox", "run", "--read", w.data, "--command", "sleep", "--internet-host", "example.com", "--", "sleep", secs)
	// bubblewrap's command line names no folder (its options come in an
	// fd): the run's processes are told by this variable, which lnk and
	// bubblewrap inherit.
	cmd.Env = append(os.Environ(), "LNK_TEST_RUN="+w.home)
	errf, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	cmd.Stderr = errf // a file: what the sandbox keeps open never delays Wait
	errb := stderrOf{errf.Name()}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	if at != "at once" {
		deadline := time.Now().Add(20 * time.Second)
		for !startReached(cmd.Process.Pid, w.home, at, secs) {
			select {
			case <-done:
				t.Fatalf("%s: lnk ended first: %s", at, errb.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: never seen: %s", at, errb.String())
			}
			time.Sleep(time.Millisecond)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	run := map[string]bool{} // the run's pid namespaces seen so far
	var left []string
	deadline := time.Now().Add(15 * time.Second)
	for {
		left = runProcesses(w.home, run)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range left {
		if pr, err := os.FindProcess(atoi(p)); err == nil {
			pr.Kill() // not to leave them to the next test
		}
	}
	t.Fatalf("killed at %q, still running 15 s later: %s", at, strings.Join(describe(left), "; "))
}

// startReached reports whether the run has got to at.
func startReached(lnkPid int, marker, at, secs string) bool {
	for _, p := range procs() {
		argv := cmdline(p)
		switch at {
		case "bubblewrap started":
			if ppid(p) == fmt.Sprint(lnkPid) && marked(p, argv, marker) {
				return true
			}
		case "lnk-init started":
			// or later: lnk-init may have exec'd the command between polls
			if strings.HasPrefix(argv, "/run/lnk/init\x00--plan-fd") && ppid(ppid(ppid(p))) == fmt.Sprint(lnkPid) ||
				argv == "sleep\x00"+secs+"\x00" {
				return true
			}
		case "command runs":
			if argv == "sleep\x00"+secs+"\x00" {
				return true
			}
		}
	}
	return false
}

// runProcesses lists the processes of the run: those whose command line
// names marker (bubblewrap, its PID 1) and every process in a pid
// namespace one of them has, other than this test's own. ns gathers those
// namespaces across calls.
func runProcesses(marker string, ns map[string]bool) []string {
	own, _ := os.Readlink("/proc/self/ns/pid")
	all := procs()
	for _, p := range all {
		if marked(p, cmdline(p), marker) {
			if n, err := os.Readlink(filepath.Join("/proc", p, "ns", "pid")); err == nil && n != own {
				ns[n] = true
			}
		}
	}
	var left []string
	for _, p := range all {
		n, _ := os.Readlink(filepath.Join("/proc", p, "ns", "pid"))
		argv := cmdline(p)
		if strings.Contains(argv, "lnk-netbroker") || strings.Contains(argv, "\x00kernel\x00run\x00") || statField(p, 3) == "Z" {
			// The proxy (the kernel's child, not the sandbox's: it ends
			// with the start), the owner's kernel, which outlives every
			// run, and what has exited already (runs nothing).
			continue
		}
		if (marked(p, argv, marker) || ns[n]) && !ended(p, argv) {
			left = append(left, p)
		}
	}
	sort.Strings(left)
	return left
}

func procs() []string {
	ents, _ := os.ReadDir("/proc")
	var ps []string
	for _, e := range ents {
		if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
			ps = append(ps, e.Name())
		}
	}
	return ps
}

// marked reports whether process p (command line argv) names marker on
// its command line or in the environment it started with.
func marked(p, argv, marker string) bool {
	if strings.Contains(argv, marker) {
		return true
	}
	env, _ := os.ReadFile(filepath.Join("/proc", p, "environ"))
	return bytes.Contains(env, []byte(marker))
}

func cmdline(p string) string {
	b, _ := os.ReadFile(filepath.Join("/proc", p, "cmdline"))
	return string(b)
}

// statField is field n (3: state, 4: ppid) of /proc/p/stat, "" if gone.
func statField(p string, n int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", p, "stat"))
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < n-2 {
		return ""
	}
	return f[n-3]
}

type stderrOf struct{ name string }

func (e stderrOf) String() string { b, _ := os.ReadFile(e.name); return string(b) }

func ppid(p string) string { return statField(p, 4) }

// ended reports whether p runs nothing any more: gone, a zombie, or exiting
// (its memory released, so no command line, waiting in the kernel: a pid
// namespace's PID 1 does so until the namespace's last process is reaped).
func ended(p, argv string) bool {
	s := statField(p, 3)
	return s == "Z" || s == "X" || s == "" || s == "D" && argv == ""
}

func atoi(s string) (n int) { fmt.Sscan(s, &n); return n }
func describe(ps []string) []string {
	var out []string
	for _, p := range ps {
		stat, _ := os.ReadFile(filepath.Join("/proc", p, "stat"))
		out = append(out, strings.Join(strings.Fields(string(stat)), " ")[:min(len(stat), 60)]+" ["+strings.ReplaceAll(strings.TrimRight(cmdline(p), "\x00"), "\x00", " ")+"]")
	}
	return out
}
