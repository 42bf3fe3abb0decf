package sandbox_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
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
			if name == "agent" {
				// An agent's check runs with the kernel's handles, as its run.
				log, _ := os.ReadFile(filepath.Join(w.home, ".lnk", "log", "audit.log"))
				if !strings.Contains(string(log), `"agent":"own","start":`) || !strings.Contains(string(log), `"request":"attach"`) {
					t.Fatalf("the agent's check did not run with the kernel's handles:\n%s", log)
				}
			}
			const hostNotice = `[network] mode = "host": the sandbox shares this machine's network`
			if host := name == "host network"; strings.Contains(errs, hostNotice) != host {
				t.Fatalf("host network %v, but the notice said so %v: %q", host, !host, errs)
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
	if code != 0 {
		t.Fatalf("--json-status: exit %d, %q", code, errs)
	}
	var st sandbox.Status
	for _, line := range strings.Split(errs, "\n") {
		if strings.HasPrefix(line, `{"pid"`) {
			if err := json.Unmarshal([]byte(line), &st); err != nil {
				t.Fatal(err)
			}
		}
	}
	// What it says was enforced: everything this kernel has, and no
	// namespace it lacks.
	wantNS := []string{"user", "pid", "ipc", "uts", "net"}
	if _, err := os.Stat("/proc/self/ns/cgroup"); err == nil {
		wantNS = append(wantNS, "cgroup")
	}
	slices.Sort(wantNS)
	gotNS := slices.Sorted(slices.Values(st.Namespaces))
	if st.Pid <= 0 || !st.Landlock || st.LandlockABI < 1 || !st.Seccomp || st.Degraded || !slices.Equal(gotNS, wantNS) {
		t.Fatalf("--json-status said %+v (namespaces %v, want %v)\n%s", st, gotNS, wantNS, errs)
	}
}

// TestSignalsEndTheWholeSandbox: SIGTERM or SIGINT (Ctrl-C) to lnk
// sandbox run ends the command and everything it started, and lnk ends
// by that signal (or 128+it): where lnk execs bubblewrap (no network)
// and where it waits beside the sandbox, forwarding (the proxy).
func TestSignalsEndTheWholeSandbox(t *testing.T) {
	for _, net := range []struct{ name, flag string }{{"exec", "--internet=false"}, {"beside", "--internet=true"}} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(net.name+"/"+sig.String(), func(t *testing.T) {
				w := newWorld(t)
				testenv.Bin(t, "lnk-init")
				testenv.Bin(t, "lnk-netbroker")
				mark := fmt.Sprintf("%d.%d", 200000+os.Getpid(), time.Now().UnixNano()%1000000)
				ready := filepath.Join(w.data, "ready")
				cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", net.flag, "--json-status", "--write", w.data, "--command", "sleep", "--",
					"sh", "-c", "sleep "+mark+" & : >"+ready+"; sleep "+mark)
				var errs testenv.SyncBuffer // read while lnk still writes it
				cmd.Stderr = &errs
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				deadline := time.Now().Add(30 * time.Second)
				for {
					// lnk's status line may come a moment after the
					// sandbox's command is ready: both are waited for.
					if _, err := os.Stat(ready); err == nil && len(processesWith(mark)) == 2 && strings.Contains(errs.String(), `"network":`) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the sandbox did not start: %v", processesWith(mark))
					}
					time.Sleep(20 * time.Millisecond)
				}
				wantNet := map[string]string{"exec": `"network":"none"`, "beside": `"network":"proxy"`}[net.name]
				if !strings.Contains(errs.String(), wantNet) {
					t.Fatalf("not the path under test: want %s in %s", wantNet, errs.String())
				}
				cmd.Process.Signal(sig)
				err := cmd.Wait()
				ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if err == nil || !(ws.Signaled() && ws.Signal() == sig || ws.ExitStatus() == 128+int(sig)) {
					t.Fatalf("lnk ended with %v, want %v\n%s", err, sig, errs.String())
				}
				for deadline = time.Now().Add(20 * time.Second); len(processesWith(mark)) > 0; time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("processes outlived %v: %v", sig, processesWith(mark))
					}
				}
			})
		}
	}
}

// TestExecPathReturns128PlusSignal: where lnk execs bubblewrap, a command
// killed by a signal comes back as 128+that signal.
func TestExecPathReturns128PlusSignal(t *testing.T) {
	newWorld(t)
	testenv.Bin(t, "lnk-init")
	code, _, errs := lnk(t, "sandbox", "run", "--internet=false", "--", "sh", "-c", "kill -TERM $$")
	if code != 143 {
		t.Fatalf("a command killed by SIGTERM came back as %d, want 143: %s", code, errs)
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
