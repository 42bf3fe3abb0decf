package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestLnkHoldsNoSecretValue: while `lnk sandbox run --agent demo` runs
// with one sealed secret granted and another agent's in the same file,
// lnk's memory holds neither value (it reads no secret: the keybroker
// names demo's), and the proxy's holds no value of the other agent's.
// Memory is read as root; an unprivileged owner cannot read it at all
// (TestLnkAndNetbrokerMemoryUnreadable), which is said instead.
func TestLnkHoldsNoSecretValue(t *testing.T) {
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	const granted, other = "sk-granted-5e1f0a77c2d94b18", "sk-not-granted-93c0b2e4a6f1d857"
	home := testenv.Home(t)
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-keybroker")
	testenv.Bin(t, "lnk-netbroker")
	lnkDo(t, home, "", "agent", "create", "demo")
	lnkDo(t, home, "", "agent", "create", "other")
	lnkDo(t, home, granted, "secret", "create", "API_KEY", "--internet-host", "api.localhost")
	lnkDo(t, home, "", "secret", "add", "API_KEY", "--agent", "demo")
	lnkDo(t, home, other, "secret", "create", "OTHER_KEY", "--internet-host", "other.localhost")
	lnkDo(t, home, "", "secret", "add", "OTHER_KEY", "--agent", "other")
	lnkDo(t, home, "", "agent", "allow", "demo", "--command", "/bin/sh")

	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--agent", "demo", "--", "/bin/sh", "-c", "echo READY; read line")
	cmd.Env = append(cmd.Environ(), "HOME="+home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errf := tempFile(t, "stderr")
	cmd.Stderr = errf
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if sc := bufio.NewScanner(stdout); !sc.Scan() || sc.Text() != "READY" {
		e, _ := os.ReadFile(errf.Name())
		t.Fatalf("the sandbox did not start:\n%s", e)
	}
	lnk := cmd.Process.Pid
	proxy := kernelProxy(t, home)
	if os.Geteuid() != 0 {
		if _, err := os.ReadFile("/proc/" + strconv.Itoa(lnk) + "/maps"); err == nil {
			t.Fatal("an unprivileged owner reads lnk's memory map")
		}
		return // undumpable: its memory is closed to the owner's other processes
	}
	for _, c := range []struct {
		name  string
		pid   int
		value string
	}{{"lnk", lnk, granted}, {"lnk", lnk, other}, {"lnk-netbroker", proxy, other}} {
		held, err := memHolds(c.pid, []byte(c.value)) // sealed_sandbox_test.go
		if err != nil {
			t.Fatal(err)
		}
		if held {
			t.Errorf("%s's memory holds a secret's value (%s…)", c.name, c.value[:12])
		}
	}
}
