package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/procstat"
)

// recorder is a testing.TB whose Errorf is noted, not a failure: the
// tests below check what the desktop's checks report.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) reported() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

// zenity shows a real dialog on env's desktop until it times out.
func zenity(t testing.TB, env []string) {
	t.Helper()
	cmd := exec.Command("/usr/bin/zenity", "--info", "--no-markup", "--timeout=2", "--text=leftovers")
	cmd.Env = append(env, "HOME="+t.TempDir(), "PATH=/usr/bin:/bin")
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		// zenity --timeout ends with status 5.
		if ex, ok := err.(*exec.ExitError); !ok || ex.ExitCode() != 5 {
			t.Fatalf("zenity: %v\n%s", err, out)
		}
	}
}

// TestZenityOnDesktopLeavesNothing: a real zenity on Desktop's X server
// and session bus; once the test ends, no process it caused runs (the
// accessibility bus and registry the bus started end with it). The
// control: the same zenity on a display with no bus named starts its own
// (dbus-launch's autolaunch), which outlives it, and StartX's check
// reports it.
func TestZenityOnDesktopLeavesNothing(t *testing.T) {
	defer func(g time.Duration) { leftGrace = g }(leftGrace)
	leftGrace = 10 * time.Second
	with := &recorder{}
	t.Run("with the session bus", func(t *testing.T) {
		with.TB = t
		zenity(t, Desktop(with))
	})
	if got := with.reported(); got != "" {
		t.Errorf("zenity on the desktop left processes running:\n%s", got)
	}
	without := &recorder{}
	t.Run("with no bus", func(t *testing.T) {
		without.TB = t
		zenity(t, []string{StartX(without)})
	})
	if got := without.reported(); !strings.Contains(got, "dbus-daemon") {
		t.Errorf("zenity with no bus named left no bus of its own the check saw: %q", got)
	} else {
		t.Logf("with no bus, the check reported (and killed):\n%s", got)
	}
}

// TestNoneLeftFindsWhatOutlivesItsParent: a process in a session of its
// own whose environment names a bus is found, and, once ended, no more.
func TestNoneLeftFindsWhatOutlivesItsParent(t *testing.T) {
	marker := fmt.Sprintf("DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/lnk-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	match := func(environ []byte, _ procstat.Stat) bool { return bytes.Contains(environ, []byte(marker+"\x00")) }
	cmd := exec.Command("/bin/sleep", "60")
	cmd.Env = []string{"PATH=/usr/bin:/bin", marker}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	left, err := WaitNoneLeft(time.Second, match)
	if err != nil || len(left) != 1 || left[0].PID != cmd.Process.Pid || left[0].Command != "/bin/sleep 60" {
		t.Errorf("WaitNoneLeft = %+v, %v; want the sleep, pid %d", left, err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if left, err := WaitNoneLeft(time.Second, match); err != nil || len(left) != 0 {
		t.Errorf("after it ended, WaitNoneLeft = %+v, %v; want none", left, err)
	}
}
