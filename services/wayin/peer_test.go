package wayin

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/seccomp"
	"lnk.dev/lnk/internal/testenv"
)

// TestMain is also the child of TestAnotherUIDRefused and
// TestConfinedCallerRefused: with
// LNK_WAYIN_TEST_DIAL set it dials that socket and says whether the way
// in challenged it or closed.
func TestMain(m *testing.M) {
	if sock := os.Getenv("LNK_WAYIN_TEST_DIAL"); sock != "" {
		if os.Getenv("LNK_WAYIN_TEST_CONFINE") == "1" {
			// As Link confines a broker: a seccomp filter (this one
			// still lets it make a unix socket) and no_new_privs.
			if err := seccomp.ConfineBroker(seccomp.Policy{Sockets: seccomp.SocketsUnix}); err != nil {
				fmt.Println("confine:", err)
				os.Exit(2)
			}
		}
		c, err := net.Dial("unix", sock)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(0)
		}
		b, _ := bufio.NewReader(c).ReadString('\n')
		if len(b) == 0 {
			fmt.Println("closed")
		} else {
			fmt.Println("challenged:", strings.TrimSpace(string(b)))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestAnotherUIDRefused: a caller of another uid, even with the socket
// and its folders opened up to it, is closed on before a challenge, and
// the refusal logged; the same child as the owner is challenged.
func TestAnotherUIDRefused(t *testing.T) {
	other, uid := testenv.OtherUser(t)
	w := newWorld(t, defaults, false)
	testenv.OpenSocketToAll(t, w.caller.Socket)
	run := testenv.SelfRunner(t, "LNK_WAYIN_TEST_DIAL="+w.caller.Socket)
	if out := run(other); out != "closed" {
		t.Errorf("lnktest's call: %s", out)
	}
	if !strings.Contains(w.log.String(), fmt.Sprintf("runs as uid %d, not this service's %d", uid, os.Getuid())) {
		t.Errorf("refusal not logged: %s", w.log.String())
	}
	if out := run(nil); !strings.HasPrefix(out, "challenged:") {
		t.Errorf("the owner's call: %s", out)
	}
}

// TestConfinedCallerRefused: a process of the owner's uid that Link
// confined (a seccomp filter and no_new_privs, as every broker, proxy
// and sandboxed command is) is closed on before a challenge, whatever
// reached the socket, and the refusal logged with why: the kernel's rule
// for its clients (internal/peercred). The same program unconfined is
// challenged (the positive control).
func TestConfinedCallerRefused(t *testing.T) {
	_, err := seccomp.SandboxBPF()
	testenv.Require(t, err == nil, "libseccomp")
	w := newWorld(t, defaults, false)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(confine bool) (string, int) {
		t.Helper()
		cmd := exec.Command(self)
		cmd.Env = []string{"LNK_WAYIN_TEST_DIAL=" + w.caller.Socket}
		if confine {
			cmd.Env = append(cmd.Env, "LNK_WAYIN_TEST_CONFINE=1")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out)), cmd.Process.Pid
	}
	if out, _ := run(false); !strings.HasPrefix(out, "challenged:") {
		t.Fatalf("the owner's unconfined call: %s", out)
	}
	out, pid := run(true)
	if out != "closed" {
		t.Fatalf("a confined call: %s, want closed before a challenge", out)
	}
	want := fmt.Sprintf("pid %d is not the owner's own client: a process Link confined", pid)
	if got := w.log.String(); strings.Count(got, want) != 1 {
		t.Errorf("the refusal is not logged once with its reason (%q):\n%s", want, got)
	}
}
