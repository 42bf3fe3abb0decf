package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/client"
)

// TestProxyGetsNoneOfTheOwnersEnvironment: a token in the owner's shell
// never reaches lnk-netbroker's environment (the kernel's child, started
// on demand by lnk with lnk's environment), nor does an fd lnk's own
// parent left open.
func TestProxyGetsNoneOfTheOwnersEnvironment(t *testing.T) {
	w := newWorld(t)
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--read", w.data, "--internet-host", "example.com", "--", "sh", "-c", "read x")
	cmd.Env = append(os.Environ(), "LNK_TEST_OWNER_TOKEN=tok-from-the-shell")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	leaked, _ := os.Readlink(filepath.Join("/proc/self/fd", strconv.Itoa(int(pw.Fd()))))
	cmd.ExtraFiles = []*os.File{pw} // fd 3 in lnk, not close-on-exec
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Ended through its command, as an owner ends it: lnk killed
		// before lnk-init starts can still leave bubblewrap's child
		// behind now and then (its --die-with-parent comes late; the
		// lifeline covers lnk killed once lnk-init runs:
		// TestKilledLnkLeavesNothing).
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	var environ []byte
	var pid string
	deadline := time.Now().Add(20 * time.Second)
	for environ == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no lnk-netbroker child of the kernel appeared: %s", errb.String())
		}
		// The run's proxy is the kernel's child (a start of no agent).
		pid, environ = childEnviron(kernelPID(w.home), "lnk-netbroker")
		if pid != "" && environ == nil && os.Geteuid() != 0 {
			// Undumpable once it confined itself: not even the owner's
			// other processes read its environment or fds. Only root
			// (the suite's first run) reads them after that.
			if _, err := os.ReadFile(filepath.Join("/proc", pid, "environ")); !errors.Is(err, os.ErrPermission) {
				t.Fatalf("the proxy's environment: %v, want it readable or closed to the owner", err)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	fds, _ := os.ReadDir(filepath.Join("/proc", pid, "fd"))
	for _, fd := range fds {
		if l, _ := os.Readlink(filepath.Join("/proc", pid, "fd", fd.Name())); l == leaked {
			t.Errorf("the proxy holds fd %s, %s, which lnk's parent left open", fd.Name(), l)
		}
	}
	if bytes.Contains(environ, []byte("tok-from-the-shell")) {
		t.Fatalf("the proxy's environment holds the owner's token: %q", environ)
	}
	if !bytes.Contains(environ, []byte("LNK_BROKER_FDS=")) {
		t.Fatalf("read no environment (a broker of the kernel's has its fixed one): %q", environ)
	}
}

// childEnviron is the pid and environment of a child of ppid whose argv[0] is
// named comm (the proxy re-executes itself, so its comm is "exe"); the
// pid alone where its environment cannot be read; "", nil where there is
// no such child.
func childEnviron(ppid int, comm string) (string, []byte) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		argv, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		argv0, _, _ := bytes.Cut(argv, []byte{0})
		if filepath.Base(string(argv0)) != comm {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && len(env) > 0 {
			return e.Name(), env
		} else if errors.Is(err, os.ErrPermission) {
			return e.Name(), nil
		}
	}
	return "", nil
}

// kernelPID is the pid of home's running kernel, or 0.
func kernelPID(home string) int {
	c, err := client.Connect(home)
	if err != nil {
		return 0
	}
	defer c.Close()
	st, err := c.Status(context.Background())
	if err != nil {
		return 0
	}
	return st.PID
}
