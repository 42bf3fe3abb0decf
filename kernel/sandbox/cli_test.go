package sandbox_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox/probe"
)

// lnk runs the built lnk (with lnk-init beside it) and returns its exit
// code, stdout and stderr.
func lnk(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	testenv.Bin(t, "lnk-init") // built beside lnk, as is the proxy
	testenv.Bin(t, "lnk-netbroker")
	cmd := exec.Command(testenv.Bin(t, "lnk"), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 20 * time.Second // a process left holding our pipes fails the test, never hangs it
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("lnk %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestCheckUnderSeveralSpecs runs lnk sandbox check under each spec: it
// must pass, with every probe that should be closed tried and closed.
func TestCheckUnderSeveralSpecs(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.data, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(w.home, "ro")
	if err := os.Mkdir(ro, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := caps.CreateAgent(w.home, "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := caps.CreateAgent(w.home, "own"); err != nil {
		t.Fatal(err)
	}
	specs := map[string][]string{
		"read":           {"--read", w.data},
		"write and read": {"--write", w.data, "--read", ro},
		"host network":   {"--network-mode", "host", "--port", "*", "--read", w.data},
		"any command":    {"--command", "*", "--write", w.data},
		"agent":          {"--agent", "own"},
	}
	for name, flags := range specs {
		t.Run(name, func(t *testing.T) {
			code, out, errs := lnk(t, append([]string{"sandbox", "check", "--json"}, flags...)...)
			var rs []probe.Result
			if err := json.Unmarshal([]byte(out), &rs); err != nil {
				t.Fatalf("exit %d, no JSON: %v\n%s\n%s", code, err, out, errs)
			}
			closed := 0
			for _, r := range rs {
				if r.Expect == probe.Closed && r.Got == probe.Closed {
					closed++
				}
				if (r.Expect == probe.Closed || r.Expect == probe.Open) && r.Got != r.Expect {
					t.Errorf("%s: expected %s, got %s (%s)", r.Name, r.Expect, r.Got, r.Detail)
				}
			}
			if code != 0 || closed < 20 {
				t.Fatalf("exit %d with %d probes closed\n%s", code, closed, errs)
			}
		})
	}
}

func TestRunReturnsExitCodeAndRefusesUnlisted(t *testing.T) {
	newWorld(t)
	if code, _, errs := lnk(t, "sandbox", "run", "--", "sh", "-c", "exit 5"); code != 5 {
		t.Fatalf("exit 5 came back as %d: %s", code, errs)
	}
	code, _, errs := lnk(t, "sandbox", "run", "--", "id")
	if code != 3 || !strings.Contains(errs, "[commands]") {
		t.Fatalf("an unlisted command: exit %d, %q", code, errs)
	}
	code, _, errs = lnk(t, "sandbox", "run", "--json-status", "--", "sh", "-c", "exit 0")
	if code != 0 || !strings.Contains(errs, `"landlock_abi"`) || !strings.Contains(errs, `"pid"`) {
		t.Fatalf("--json-status: exit %d, %q", code, errs)
	}
}

// TestSIGTERMEndsTheWholeSandbox: SIGTERM to lnk sandbox run ends the
// command and everything it started.
func TestSIGTERMEndsTheWholeSandbox(t *testing.T) {
	w := newWorld(t)
	testenv.Bin(t, "lnk-init")
	mark := fmt.Sprintf("%d.%d", 200000+os.Getpid(), time.Now().UnixNano()%1000000)
	ready := filepath.Join(w.data, "ready")
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--write", w.data, "--command", "sleep", "--",
		"sh", "-c", "sleep "+mark+" & : >"+ready+"; sleep "+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil && len(processesWith(mark)) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox did not start: %v", processesWith(mark))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !(ws.Signaled() && ws.Signal() == syscall.SIGTERM || ws.ExitStatus() == 143) {
		t.Fatalf("lnk ended with %v, want SIGTERM", err)
	}
	for deadline = time.Now().Add(20 * time.Second); len(processesWith(mark)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived SIGTERM: %v", processesWith(mark))
		}
	}
}

// TestAgentsOwnFoldersUnderAGrantedHome: with --read '~', the agent's own
// Home (and its written folder) are there, bound again over the empty
// ~/Link/Agents, which can be passed through but not listed; another
// agent's folder is not there.
func TestAgentsOwnFoldersUnderAGrantedHome(t *testing.T) {
	w := newWorld(t)
	for _, n := range []string{"a", "b"} {
		if _, err := caps.CreateAgent(w.home, n); err != nil {
			t.Fatal(err)
		}
	}
	agents := filepath.Join(w.home, "Link", "Agents")
	write(t, filepath.Join(agents, "b", "Home", "theirs"), "other-agent-secret")
	if code, _, errs := lnk(t, "agent", "allow", "a", "--read", "~"); code != 0 {
		t.Fatalf("allow: %d %s", code, errs)
	}
	if code, _, errs := lnk(t, "agent", "deny", "a", "--internet"); code != 0 {
		t.Fatalf("deny --internet: %d %s", code, errs)
	}
	script := `cat "$1/b/Home/theirs"; ls "$1" && echo LISTED; echo mine > "$1/a/Home/work/mine" && echo WROTE; pwd`
	code, out, errs := lnk(t, "sandbox", "run", "--agent", "a", "--", "sh", "-c", script, "sh", agents)
	if code != 0 || !strings.Contains(out, "WROTE") || !strings.Contains(out, filepath.Join(agents, "a", "Home")) {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	if strings.Contains(out, "other-agent-secret") || strings.Contains(out, "LISTED") {
		t.Fatalf("another agent's folder, or the listing of ~/Link/Agents, was reachable: %q", out)
	}
}
