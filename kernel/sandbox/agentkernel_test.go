package sandbox_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// An agent's sandbox runs with what the kernel holds (cli's
// sandbox_kernel.go): these run the real lnk, its kernel started on
// demand, and real bubblewrap.

// agentWorld is newWorld with agent demo granted w.data read, and sh
// and sleep; the kernel lnk starts on demand is stopped at cleanup.
func agentWorld(t *testing.T, agents ...string) world {
	t.Helper()
	w := newWorld(t)
	t.Cleanup(func() { lnk(t, "kernel", "stop") })
	for _, a := range append([]string{"demo"}, agents...) {
		if code, _, errs := lnk(t, "agent", "create", a); code != 0 {
			t.Fatal(errs)
		}
		if code, _, errs := lnk(t, "agent", "allow", a, "--read", w.data, "--command", "sleep"); code != 0 {
			t.Fatal(errs)
		}
	}
	return w
}

// running is a lnk sandbox run --agent in the background, whose command
// said "ready" and then sleeps with a marker no other process has.
type running struct {
	cmd    *exec.Cmd
	marker string
	stderr bytes.Buffer
	done   chan struct{}
}

func runAgent(t *testing.T, agent string) *running {
	t.Helper()
	testenv.Bin(t, "lnk-init")
	r := &running{marker: fmt.Sprintf("600.%d%d", os.Getpid(), rand.IntN(1e6)), done: make(chan struct{})}
	r.cmd = exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--agent", agent, "--",
		"sh", "-c", "echo ready; exec sleep "+r.marker)
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	go func() { r.cmd.Wait(); close(r.done) }()
	if line != "ready\n" {
		<-r.done
		t.Fatalf("the sandbox said %q; lnk: %s", line, r.stderr.String())
	}
	return r
}

// exit waits for lnk to exit (30 s at most) and returns its code.
func (r *running) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("lnk sandbox run did not exit; it said: %s", r.stderr.String())
	}
	return r.cmd.ProcessState.ExitCode()
}

// sandboxProcs walks /proc for live processes running r's command.
func sandboxProcs(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Equal(cl, []byte("sleep\x00"+marker+"\x00")) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && st[i+2] == 'Z' {
				continue // dead, not yet reaped
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// gone waits (30 s at most) for every process of marker's to end.
func gone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(sandboxProcs(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("sandbox processes %v still run", sandboxProcs(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kernelStarts is what lnk kernel status lists: agent → sandbox pid.
func kernelStarts(t *testing.T, home string) (int, map[string]int) {
	t.Helper()
	c, err := client.Connect(home)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, s := range st.Starts {
		m[s.Agent] = s.PID
	}
	return st.PID, m
}

// attached waits (30 s at most) until the kernel lists agent's start
// with its sandbox's pid, and returns it.
func attached(t *testing.T, home, agent string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, m := kernelStarts(t, home); m[agent] != 0 {
			return m[agent]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kernel lists no sandbox of %s", agent)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAgentSandboxIsRecordedAndEndedByTheKernel: while an agent's
// sandbox runs, lnk kernel status lists its start with bubblewrap's pid;
// lnk kernel end kills that sandbox (every process of it) and lnk run
// says the kernel ended it; another agent's sandbox, the control, runs on.
func TestAgentSandboxIsRecordedAndEndedByTheKernel(t *testing.T) {
	w := agentWorld(t, "other")
	demo := runAgent(t, "demo")
	other := runAgent(t, "other")
	pid := attached(t, w.home, "demo")
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); string(comm) != "bwrap\n" {
		t.Fatalf("the start's pid %d is %q, not bubblewrap", pid, comm)
	}
	code, out, errs := lnk(t, "kernel", "status")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("sandbox pid %d", pid)) {
		t.Fatalf("lnk kernel status (exit %d) lists no sandbox pid %d:\n%s%s", code, pid, out, errs)
	}
	attached(t, w.home, "other")

	code, out, errs = lnk(t, "kernel", "end", "demo")
	if code != 0 || !strings.Contains(out, "1 sandbox(es) killed") {
		t.Fatalf("lnk kernel end demo: exit %d\n%s%s", code, out, errs)
	}
	if code := demo.exit(t); code != 1 || !strings.HasPrefix(demo.stderr.String(), "lnk: the kernel ended the sandbox: agent demo was ended") ||
		!strings.Contains(demo.stderr.String(), "\n  hint: ") {
		t.Fatalf("lnk sandbox run exited %d, saying:\n%s", code, demo.stderr.String())
	}
	gone(t, demo.marker)
	if _, m := kernelStarts(t, w.home); m["demo"] != 0 || m["other"] == 0 {
		t.Fatalf("after the end of demo the kernel lists %v", m)
	}
	if len(sandboxProcs(other.marker)) != 1 {
		t.Fatal("ending demo ended the other agent's sandbox")
	}
	if code, out, _ := lnk(t, "kernel", "end", "demo"); code != 0 || !strings.Contains(out, "no running start") {
		t.Fatalf("a second end: exit %d, %s", code, out)
	}
	if code, _, errs := lnk(t, "kernel", "end", "../demo"); code != 3 || !strings.HasPrefix(errs, "lnk: refused: agent name \"../demo\" is not") ||
		!strings.Contains(errs, "\n  hint: lnk agent list") {
		t.Fatalf("a bad name: exit %d, %s", code, errs)
	}
	lnk(t, "kernel", "end", "other")
	other.exit(t)
	gone(t, other.marker)
}

// TestKernelKilledDuringARunLeavesNoSandbox: the kernel killed with
// SIGKILL while an agent's sandbox runs, lnk kills the sandbox at once
// and exits saying why; a run after it starts a kernel again, which has
// every grant (they live in the agent's files).
func TestKernelKilledDuringARunLeavesNoSandbox(t *testing.T) {
	w := agentWorld(t)
	r := runAgent(t, "demo")
	attached(t, w.home, "demo")
	kpid, _ := kernelStarts(t, w.home)
	if err := syscall.Kill(kpid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := r.exit(t); code != 1 || !strings.HasPrefix(r.stderr.String(), "lnk: the kernel's connection ended while the sandbox ran: the sandbox was killed") {
		t.Fatalf("lnk sandbox run exited %d, saying:\n%s", code, r.stderr.String())
	}
	gone(t, r.marker)
	if log, _ := os.ReadFile(filepath.Join(w.home, ".lnk", "log", "audit.log")); !strings.Contains(string(log), "the kernel's connection ended while the sandbox ran: the sandbox was killed") {
		t.Fatalf("no audit line says lnk killed the sandbox:\n%s", log)
	}
	code, out, errs := lnk(t, "sandbox", "run", "--agent", "demo", "--", "sh", "-c", "read l < "+filepath.Join(w.data, "f")+"; echo $l")
	if code != 0 || out != "granted-content\n" {
		t.Fatalf("a run after the kernel's death: exit %d, %q %s", code, out, errs)
	}
}

// TestKernelRefusalReachesTheOwner: a start the kernel refuses (the
// agent's folder open to others' writes, which lnk's own compile lets
// by) is one line saying so, and a hint; the folder mended, it runs.
func TestKernelRefusalReachesTheOwner(t *testing.T) {
	w := agentWorld(t)
	adir := filepath.Join(w.home, "Link", "Agents", "demo")
	if err := os.Chmod(adir, 0o777); err != nil {
		t.Fatal(err)
	}
	code, out, errs := lnk(t, "sandbox", "run", "--agent", "demo", "--", "sh", "-c", "echo ran")
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if code != 3 || out != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "lnk: refused: the kernel refused agent demo's start: ") ||
		!strings.HasPrefix(lines[1], "  hint: lnk agent show demo") {
		t.Fatalf("exit %d, out %q, said:\n%s", code, out, errs)
	}
	os.Chmod(adir, 0o700)
	if code, out, errs := lnk(t, "sandbox", "run", "--agent", "demo", "--", "sh", "-c", "echo ran"); code != 0 || out != "ran\n" {
		t.Fatalf("the folder mended: exit %d, %q %s", code, out, errs)
	}
}

// TestFlagSandboxNeedsNoKernel: a sandbox of flag grants that needs no
// broker (the internet off, no tool) holds nothing of the kernel's: it
// runs without a kernel, and starts none. One that needs a broker is a
// start of the kernel's (TestGrantsRunBrokersAreTheKernels).
func TestFlagSandboxNeedsNoKernel(t *testing.T) {
	w := newWorld(t)
	if code, out, errs := lnk(t, "sandbox", "run", "--internet=false", "--read", w.data, "--", "sh", "-c", "echo ran"); code != 0 || out != "ran\n" {
		t.Fatalf("exit %d, %q %s", code, out, errs)
	}
	if _, err := os.Lstat(filepath.Join(w.home, ".lnk", "run", "kernel.sock")); !os.IsNotExist(err) {
		t.Fatalf("a flag sandbox started a kernel: %v", err)
	}
}

// TestSandboxBindsTheKernelsHandleNotThePath: the granted folder is
// swapped (another folder, then a link to ~/.ssh) after the kernel opened
// it and before bubblewrap starts: the sandbox sees the folder the kernel
// opened. Opened again by its path (no Held), the same build refuses.
func TestSandboxBindsTheKernelsHandleNotThePath(t *testing.T) {
	w := agentWorld(t)
	comp, err := caps.CompileAgent(w.home, "demo")
	if err != nil {
		t.Fatal(err)
	}
	held := startHeld(t, w.home, "demo")
	if held[w.data] == nil {
		t.Fatalf("the kernel holds no handle of %s: %v", w.data, held)
	}
	read := []string{"sh", "-c", "read l < " + filepath.Join(w.data, "f") + "; echo $l"}
	if err := os.Rename(w.data, w.data+".kernel-opened"); err != nil {
		t.Fatal(err)
	}
	for _, swap := range []struct {
		name string
		make func() error
	}{
		{"another folder", func() error {
			if err := os.Mkdir(w.data, 0o700); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(w.data, "f"), []byte("swapped-in"), 0o600)
		}},
		{"a link to ~/.ssh", func() error { return os.Symlink(filepath.Join(w.home, ".ssh"), w.data) }},
	} {
		t.Run(swap.name, func(t *testing.T) {
			os.RemoveAll(w.data)
			if err := swap.make(); err != nil {
				t.Fatal(err)
			}
			code, out, errs := run(t, comp, sandbox.Options{Held: held}, read...)
			if code != 0 || out != "granted-content\n" {
				t.Fatalf("with the kernel's handles: exit %d, %q %s", code, out, errs)
			}
			_, err := sandbox.Build(comp, sandbox.Options{Argv: read, InitPath: testenv.Bin(t, "lnk-init")})
			if err == nil {
				t.Fatal("by its path, the swapped folder was bound")
			}
		})
	}
	delete(held, w.data)
	if _, err := sandbox.Build(comp, sandbox.Options{Argv: read, InitPath: testenv.Bin(t, "lnk-init"), Held: held}); err == nil ||
		!strings.Contains(err.Error(), "the kernel holds no handle of "+w.data) {
		t.Fatalf("a folder the kernel holds no handle of: %v", err)
	}
}

// TestFileToolSandboxRunsWithTheKernelsHandles: lnk sandbox file --agent
// (the file tool's sandbox) binds the kernel's handles and hands it
// bubblewrap's pidfd too: the audit log says so, and the start is revoked
// at its end.
func TestFileToolSandboxRunsWithTheKernelsHandles(t *testing.T) {
	w := agentWorld(t)
	testenv.Bin(t, "lnk-file-tool")
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "file", "--agent", "demo")
	cmd.Stdin = strings.NewReader("") // no call: apply ends at once
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lnk sandbox file --agent demo: %v\n%s", err, out)
	}
	log, err := os.ReadFile(filepath.Join(w.home, ".lnk", "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"request":"open-folder"`, `"request":"attach"`, `"kind":"revoke","agent":"demo"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the audit log has no %s:\n%s", want, log)
		}
	}
}

// TestNestedFoldersComeFromTheKernelsHandle: what lnk binds inside a
// written folder (its .git at the top, a nested repository's .git and the
// folder holding it) is opened beneath the kernel's handle of that
// folder, so the folder swapped after the kernel's open changes none of
// it; opened by their paths, the same build refuses.
func TestNestedFoldersComeFromTheKernelsHandle(t *testing.T) {
	w := newWorld(t)
	for _, d := range []string{".git", "sub/.git"} {
		if err := os.MkdirAll(filepath.Join(w.data, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(w.data, "sub", ".git", "HEAD"), "kernel-opened-head")
	for _, args := range [][]string{{"agent", "create", "demo"}, {"agent", "allow", "demo", "--write", w.data}} {
		if code, _, errs := lnk(t, args...); code != 0 {
			t.Fatal(errs)
		}
	}
	comp, err := caps.CompileAgent(w.home, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.NestedReadOnly) == 0 || len(comp.Pinned) == 0 {
		t.Fatalf("caps found no nested repository: %+v", comp.NestedReadOnly)
	}
	held := startHeld(t, w.home, "demo")
	// The same tree, another folder: every nested path now names it.
	if err := os.Rename(w.data, w.data+".kernel-opened"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".git", "sub/.git"} {
		os.MkdirAll(filepath.Join(w.data, d), 0o700)
	}
	write(t, filepath.Join(w.data, "sub", ".git", "HEAD"), "swapped-in-head")
	read := []string{"sh", "-c", "read l < " + filepath.Join(w.data, "sub", ".git", "HEAD") + "; echo $l"}
	code, out, errs := run(t, comp, sandbox.Options{Held: held}, read...)
	if code != 0 || out != "kernel-opened-head\n" {
		t.Fatalf("with the kernel's handles: exit %d, %q %s", code, out, errs)
	}
	if _, err := sandbox.Build(comp, sandbox.Options{Argv: read, InitPath: testenv.Bin(t, "lnk-init")}); err == nil {
		t.Fatal("by their paths, the swapped folders were bound")
	}
}

// startHeld starts agent in the kernel (compiled there) and returns the
// folder handles it hands over, by path; the start lives, and the
// handles stay open, until the test ends.
func startHeld(t *testing.T, home, agent string) map[string]*os.File {
	t.Helper()
	c, err := client.Dial(context.Background(), home, testenv.Bin(t, "lnk"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	st, err := c.Start(context.Background(), &proto.StartRequest{Agent: agent, Folders: []proto.Folder{}, Compile: true})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]*os.File{}
	for _, ci := range st.Caps {
		got, f, err := c.OpenFolder(context.Background(), st.Start, ci.Handle)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		held[got.Route] = f
	}
	return held
}
