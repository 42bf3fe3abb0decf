package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/client"
)

// attackBins is a folder holding lnk, lnk-init and lnk-keybroker, and as
// lnk-netbroker the attacker's build (-tags lnkattack, attack_lnkattack.go):
// $LNK_BIN/lnk-netbroker-attack where a run as another user built it
// (scripts/test-as-user.sh), else built here.
func attackBins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	for _, name := range []string{"lnk", "lnk-init", "lnk-keybroker", "lnk-fsbroker"} {
		copyFile(t, testenv.Bin(t, name), filepath.Join(dir, name))
	}
	out := filepath.Join(dir, "lnk-netbroker")
	if bin := os.Getenv("LNK_BIN"); bin != "" {
		if _, err := os.Stat(filepath.Join(bin, "lnk-netbroker-attack")); err == nil {
			copyFile(t, filepath.Join(bin, "lnk-netbroker-attack"), out)
			return dir
		}
	}
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "lnkattack", "-o", out, "lnk.dev/lnk/cmd/lnk-netbroker")
	cmd.Dir = testenv.RepoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the attacker's lnk-netbroker (or set LNK_BIN to a folder with lnk-netbroker-attack): %v\n%s", err, b)
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// startKernel runs `lnk kernel run` (bin's lnk) under home and returns
// once it listens; killed at cleanup.
func startKernel(t *testing.T, bin, home string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "lnk"), "kernel", "run")
	cmd.Env = append(os.Environ(), "HOME="+home, "LNK_KERNEL_TESTING=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	ready := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening") {
				select {
				case ready <- struct{}{}:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	select {
	case <-ready:
	case <-done:
		t.Fatal("the kernel exited before it listened")
	case <-time.After(30 * time.Second):
		t.Fatal("the kernel did not listen within 30 s")
	}
}

// TestConfinedNetbrokerReachesNeitherKernelNorOtherSecrets runs an
// attacker inside a real lnk-netbroker that `lnk sandbox run --agent
// demo` started, confined as ever: it lists no agent's ID in the
// sockets' folder, cannot connect to the kernel's socket (which the
// owner's client reaches: the positive control), it
// gets demo's own sealed secret, and asking for another agent's secret
// fails exactly as asking for a name nobody holds.
func TestConfinedNetbrokerReachesNeitherKernelNorOtherSecrets(t *testing.T) {
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	bin := attackBins(t)
	home := testenv.Home(t)
	lnk := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "lnk"), args...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("lnk %v: %v", args, err)
		}
		return string(out)
	}
	lnk("", "agent", "create", "demo")
	lnk("", "agent", "create", "other")
	lnk(sealedValue, "secret", "create", "API_KEY", "--internet-host", "api.localhost")
	lnk("", "secret", "add", "API_KEY", "--agent", "demo")
	lnk("sk-other-agents-value", "secret", "create", "OTHER_KEY", "--internet-host", "other.localhost")
	lnk("", "secret", "add", "OTHER_KEY", "--agent", "other")
	lnk("", "agent", "allow", "demo", "--command", "/bin/sh")
	ids := map[string]string{}
	for _, name := range []string{"demo", "other"} {
		out := lnk("", "agent", "list", "--json")
		i := strings.Index(out, `"name": "`+name+`"`)
		j := strings.LastIndex(out[:i], `"id": "`)
		ids[name] = out[j+7 : j+7+32]
	}
	asks := []string{ids["demo"] + "/API_KEY", ids["other"] + "/OTHER_KEY", ids["other"] + "/NO_SUCH_KEY", ids["demo"] + "/OTHER_KEY", ids["demo"] + "/NO_SUCH_KEY"}
	if err := os.MkdirAll(filepath.Join(home, ".lnk", "agents", ".net"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".lnk", "agents", ".net", "attack"), []byte(strings.Join(asks, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	startKernel(t, bin, home)
	// The positive control: the owner's own client reaches the kernel.
	c, err := client.Connect(home)
	if err != nil {
		t.Fatalf("the owner's client cannot reach the kernel: %v", err)
	}
	c.Close()

	// The sandbox waits on its stdin, kept open until the attacker has
	// said all it tried. The attacker is the kernel's child, the run's
	// proxy: what it says on its stderr is a line of the audit log.
	cmd := exec.Command(filepath.Join(bin, "lnk"), "sandbox", "run", "--agent", "demo", "--", "/bin/sh", "-c", "read line")
	cmd.Env = append(os.Environ(), "HOME="+home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	said := map[string]string{}
	var all strings.Builder
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		all.Reset()
		b, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
		done := false
		for _, line := range strings.Split(string(b), "\n") {
			var e struct {
				Reason string `json:"reason"`
			}
			if json.Unmarshal([]byte(line), &e) != nil {
				continue
			}
			l, ok := strings.CutPrefix(e.Reason, "lnk-netbroker: ")
			if !ok || !strings.HasPrefix(l, "attack: ") {
				continue
			}
			all.WriteString(l + "\n")
			if l == "attack: done" {
				done = true
			}
			if k, v, ok := strings.Cut(strings.TrimPrefix(l, "attack: "), ": "); ok {
				said[k] = v
			}
		}
		if done || time.Now().After(deadline) {
			break
		}
	}
	stdin.Close()
	cmd.Wait()
	out := all.String()
	if !strings.Contains(out, "attack: done") {
		t.Fatalf("the attacker did not run:\n%s\n%s", out, errb.String())
	}
	if v := said["list agents"]; v != "EACCES" {
		t.Errorf("listing ~/.lnk/agents/.net (every agent's ID) from the netbroker: %q, want EACCES", v)
	}
	if v := said["dial kernel"]; v != "EAFNOSUPPORT" {
		t.Errorf("connecting to the kernel's socket from the netbroker: %q, want EAFNOSUPPORT (no unix socket)", v)
	}
	if v := said["secret "+asks[0]]; v != "ok" {
		t.Errorf("the agent's own sealed secret: %q, want ok", v)
	}
	// Every name the agent does not hold, asked as itself or as another
	// agent, is refused alike: the same words but for the name asked.
	var first string
	for _, a := range asks[1:] {
		v := said["secret "+a]
		_, name, _ := strings.Cut(a, "/")
		v = strings.ReplaceAll(v, name, "NAME")
		if v == "ok" || v == "" || !strings.Contains(v, "refused") && !strings.Contains(v, "holds no") {
			t.Errorf("asked %s: %q, want refused", a, said["secret "+a])
		}
		if first == "" {
			first = v
		} else if v != first {
			t.Errorf("asked %s: refused with %q, unlike %q: the refusal tells which names exist", a, v, first)
		}
	}
	if strings.Contains(out, "sk-other-agents-value") || strings.Contains(out, sealedValue) {
		t.Fatal("a secret value reached lnk's output")
	}
	if t.Failed() {
		t.Logf("lnk said:\n%s", out)
	}
}
