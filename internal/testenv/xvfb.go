package testenv

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/procstat"
)

// StartX starts a real X server (Xvfb, from /usr/bin) on a free display
// for t, stopped when t ends, and returns its DISPLAY=… variable. It
// requires zenity and xdotool beside it, which dialog tests use. Before
// the server stops, t fails if a process started since with the display
// in its environment is still running 30 s later (one a program on the
// display left behind); those are killed. A program that starts a
// session bus of its own without one named (zenity does) is therefore
// given Desktop's.
func StartX(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"Xvfb", "zenity", "xdotool"} {
		_, err := os.Stat("/usr/bin/" + p)
		Require(t, err == nil, p+" in /usr/bin (apt-get install xvfb zenity xdotool)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	x := exec.Command("/usr/bin/Xvfb", "-displayfd", "3", "-nolisten", "tcp", "-screen", "0", "1024x768x24")
	x.ExtraFiles = []*os.File{w}
	// Not a DISPLAY of the test's own environment: the check below
	// would take the server for a program on its display.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") {
			x.Env = append(x.Env, kv)
		}
	}
	x.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	started, err := procstat.Read(x.Process.Pid)
	if err != nil {
		x.Process.Kill()
		x.Wait()
		t.Fatal(err)
	}
	var display string
	t.Cleanup(func() {
		// While the server runs no other can hold its display, so a
		// process started since that names it was started for it.
		if display != "" {
			names := []byte(display + "\x00")
			NoneLeft(t, "the X display "+display, func(environ []byte, st procstat.Stat) bool {
				return st.Start >= started.Start && (bytes.HasPrefix(environ, names) || bytes.Contains(environ, append([]byte{0}, names...)))
			})
		}
		// SIGTERM, so Xvfb removes its socket and lock file; SIGKILL
		// only if it does not stop.
		stop(x)
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		r.Close()
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatal("Xvfb exited without a display")
		}
		display = "DISPLAY=:" + n
		return display
	case <-time.After(30 * time.Second):
		t.Fatal("Xvfb did not say its display within 30s")
		return ""
	}
}

// Xdotool runs /usr/bin/xdotool on the display env names (its DISPLAY=…
// variable, as StartX or Desktop gave it), each call bounded by ctx and a
// minute.
func Xdotool(ctx context.Context, env ...string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		c, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		cmd := exec.CommandContext(c, "/usr/bin/xdotool", args...)
		cmd.Env = env
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
}
