package landlock_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// TestMain runs a child's part when LNK_LL_CHILD names one: the child
// confines itself and reports what it could still do, one line each.
func TestMain(m *testing.M) {
	if c := os.Getenv("LNK_LL_CHILD"); c != "" {
		child(c)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(which string) {
	var rules []landlock.Rule
	switch which {
	case "middle":
		middle()
		return
	case "sleeper":
		sleeper()
		return
	case "files":
		a, err := unix.Open(os.Getenv("LNK_LL_A"), unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
		if err != nil {
			fmt.Println("open a:", err)
			return
		}
		rules = append(rules, landlock.Beneath(a, landlock.Read))
	case "tcp-allowed":
		port, _ := strconv.Atoi(os.Getenv("LNK_LL_PORT"))
		rules = append(rules, landlock.ConnectTCP(uint16(port)))
	}
	if _, err := landlock.Restrict(rules...); err != nil {
		fmt.Println("restrict:", err)
		return
	}
	switch which {
	case "files":
		report("read-a", readFile(filepath.Join(os.Getenv("LNK_LL_A"), "f")))
		report("write-a", os.WriteFile(filepath.Join(os.Getenv("LNK_LL_A"), "new"), nil, 0o600))
		// Every thread is confined, not only the one that restricted.
		var wg sync.WaitGroup
		var mu sync.Mutex
		opened := 0
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if readFile(filepath.Join(os.Getenv("LNK_LL_B"), "f")) == nil {
					mu.Lock()
					opened++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		fmt.Printf("read-b-opened %d\n", opened)
	case "tcp-denied", "tcp-allowed":
		c, err := net.Dial("tcp", "127.0.0.1:"+os.Getenv("LNK_LL_PORT"))
		if err == nil {
			c.Close()
		}
		report("connect", err)
	case "signal":
		report("signal-parent", unix.Kill(os.Getppid(), 0))
	}
}

func readFile(p string) error { _, err := os.ReadFile(p); return err }

func report(what string, err error) {
	switch {
	case err == nil:
		fmt.Println(what, "ok")
	case errors.Is(err, unix.EACCES):
		fmt.Println(what, "EACCES")
	case errors.Is(err, unix.EPERM):
		fmt.Println(what, "EPERM")
	default:
		fmt.Println(what, "error:", err)
	}
}

func runChild(t *testing.T, which string, env ...string) string {
	t.Helper()
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "LNK_LL_CHILD="+which)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", which, err, out)
	}
	return string(out)
}

func want(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("child said:\n%s\nwanted the line %q", out, l)
		}
	}
}

func TestRestrictFilesCoversEveryThread(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := runChild(t, "files", "LNK_LL_A="+a, "LNK_LL_B="+b)
	want(t, out, "read-a ok", "write-a EACCES", "read-b-opened 0")
}

func TestRestrictTCP(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 4, "landlock ABI 4 (TCP)")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := "LNK_LL_PORT=" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	want(t, runChild(t, "tcp-denied", port), "connect EACCES")
	want(t, runChild(t, "tcp-allowed", port), "connect ok")
}

func TestRestrictScopesSignals(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 6, "landlock ABI 6 (scoping)")
	want(t, runChild(t, "signal"), "signal-parent EPERM")
}

func TestRuleWithoutRightsIsRefused(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	if _, err := landlock.RestrictThread(landlock.Beneath(0, 0)); !errors.Is(err, landlock.ErrNoRights) {
		t.Fatalf("got %v, want ErrNoRights", err)
	}
}
