package kernel_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

type statusJSON struct {
	Running bool `json:"running"`
	PID     int  `json:"pid"`
}

func status(t *testing.T, home string) statusJSON {
	t.Helper()
	out, _ := lnk(t, home, "kernel", "status", "--json")
	var s statusJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json: %v: %s", err, out)
	}
	return s
}

// reap waits for pid (a kernel reparented to this subreaper) to end.
func reap(t *testing.T, pid int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		var ws unix.WaitStatus
		for {
			_, err := unix.Wait4(pid, &ws, 0, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("kernel pid %d did not end within 30 s", pid)
	}
}

// killKernel kills pid and waits for it, at cleanup.
func killKernel(t *testing.T, pid int) {
	t.Cleanup(func() {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			reap(t, pid)
		}
	})
}

// kill -9 of the kernel leaves its socket; the next CLI call finds it
// stale and starts a fresh kernel in its place.
func TestKill9OfTheKernelTheNextCallStartsAFreshOne(t *testing.T) {
	home := testenv.Home(t)
	out, code := lnk(t, home, "kernel", "start")
	if code != 0 {
		t.Fatalf("kernel start: %d %s", code, out)
	}
	first := status(t, home)
	if !first.Running || first.PID == 0 {
		t.Fatalf("status after start: %+v", first)
	}
	killKernel(t, first.PID)
	syscall.Kill(first.PID, syscall.SIGKILL)
	reap(t, first.PID)
	sock := filepath.Join(home, ".lnk", "run", "kernel.sock")
	if st, err := os.Lstat(sock); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("kill -9 should leave the socket behind: %v", err)
	}
	if s := status(t, home); s.Running {
		t.Fatalf("a dead kernel's socket answered: %+v", s)
	}
	out, code = lnk(t, home, "kernel", "start")
	if code != 0 {
		t.Fatalf("kernel start after kill -9: %d %s", code, out)
	}
	second := status(t, home)
	killKernel(t, second.PID)
	if !second.Running || second.PID == first.PID {
		t.Fatalf("no fresh kernel: %+v after %+v", second, first)
	}
	if out, code := lnk(t, home, "kernel", "stop"); code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("kernel stop: %d %s", code, out)
	}
	reap(t, second.PID)
}

// What sits in the socket's place and is not a socket of ours is never
// deleted, and never followed.
func TestAFileOrALinkInTheSocketsPlaceIsKept(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, sock string) string // returns what must survive
	}{
		{"regular file", func(t *testing.T, sock string) string {
			os.WriteFile(sock, []byte("precious"), 0o600)
			return sock
		}},
		{"link to a file", func(t *testing.T, sock string) string {
			target := filepath.Join(t.TempDir(), "zshrc")
			os.WriteFile(target, []byte("precious"), 0o600)
			os.Symlink(target, sock)
			return target
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := testenv.Home(t)
			run := filepath.Join(home, ".lnk", "run")
			os.MkdirAll(run, 0o700)
			os.Chmod(filepath.Join(home, ".lnk"), 0o700)
			keep := tc.plant(t, filepath.Join(run, "kernel.sock"))
			out, code := lnk(t, home, "kernel", "run")
			if code != 3 || !strings.Contains(out, "not a socket") {
				t.Fatalf("kernel run over a planted %s: exit %d: %s", tc.name, code, out)
			}
			if b, err := os.ReadFile(keep); err != nil || string(b) != "precious" {
				t.Fatalf("the planted file was touched: %v %q", err, b)
			}
		})
	}
}

// A root that is a link, another's, or looser than the spec is refused.
func TestRootsThatAreLinksOrLooseAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, home string)
	}{
		{"~/.lnk is a link", func(t *testing.T, home string) {
			os.Symlink(t.TempDir(), filepath.Join(home, ".lnk"))
		}},
		{"~/.lnk is 0755", func(t *testing.T, home string) {
			os.Mkdir(filepath.Join(home, ".lnk"), 0o755)
			os.Chmod(filepath.Join(home, ".lnk"), 0o755)
		}},
		{"~/Link is group-writable", func(t *testing.T, home string) {
			os.Mkdir(filepath.Join(home, "Link"), 0o775)
			os.Chmod(filepath.Join(home, "Link"), 0o775)
		}},
		{"~/.lnk/run is a link", func(t *testing.T, home string) {
			os.Mkdir(filepath.Join(home, ".lnk"), 0o700)
			os.Symlink(t.TempDir(), filepath.Join(home, ".lnk", "run"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := testenv.Home(t)
			tc.plant(t, home)
			out, code := lnk(t, home, "kernel", "run")
			if code != 3 || !strings.Contains(out, "refused as a root") {
				t.Fatalf("kernel run: exit %d: %s", code, out)
			}
		})
	}
}

// Several CLI calls at once on a machine with no kernel start exactly
// one: the lock decides, the others connect to the winner.
func TestConcurrentStartsMakeOneKernel(t *testing.T) {
	home := testenv.Home(t)
	const n = 4
	type result struct {
		out  string
		code int
	}
	results := make(chan result, n)
	for i := 0; i < n; i++ {
		go func() {
			out, code := lnk(t, home, "kernel", "start")
			results <- result{out, code}
		}()
	}
	pids := map[string]bool{}
	for i := 0; i < n; i++ {
		r := <-results
		if r.code != 0 {
			t.Errorf("kernel start: exit %d: %s", r.code, r.out)
			continue
		}
		pids[strings.TrimSpace(r.out)] = true
	}
	s := status(t, home)
	killKernel(t, s.PID)
	if len(pids) != 1 || !pids["kernel running, pid "+strconv.Itoa(s.PID)] {
		t.Fatalf("concurrent starts saw kernels %v; status says pid %d", pids, s.PID)
	}
}

// A kernel that cannot start says why, through the CLI that started it;
// a ~/.lnk that is a link is refused before anything is started.
func TestAKernelThatCannotStartSaysWhy(t *testing.T) {
	t.Run("~/.lnk is a link", func(t *testing.T) {
		home := testenv.Home(t)
		os.Symlink(t.TempDir(), filepath.Join(home, ".lnk"))
		out, code := lnk(t, home, "kernel", "start")
		if code != 3 || !strings.Contains(out, "refused as a root") {
			t.Fatalf("kernel start: exit %d: %s", code, out)
		}
	})
	t.Run("~/Link is group-writable", func(t *testing.T) {
		home := testenv.Home(t)
		os.Mkdir(filepath.Join(home, "Link"), 0o775)
		os.Chmod(filepath.Join(home, "Link"), 0o775)
		out, code := lnk(t, home, "kernel", "start")
		if code != 1 || !strings.Contains(out, "did not start") || !strings.Contains(out, "looser") {
			t.Fatalf("kernel start: exit %d: %s", code, out)
		}
	})
}
