package testenv

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartX starts a real X server (Xvfb, from /usr/bin) on a free display
// for t, stopped when t ends, and returns its DISPLAY=… variable. It
// requires zenity and xdotool beside it, which dialog tests use.
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
	x.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		// SIGTERM, so Xvfb removes its socket and lock file; SIGKILL
		// only if it does not stop.
		x.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { x.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			x.Process.Kill()
			<-done
		}
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
		return "DISPLAY=:" + n
	case <-time.After(30 * time.Second):
		t.Fatal("Xvfb did not say its display within 30s")
		return ""
	}
}

// Xdotool runs /usr/bin/xdotool on display (a DISPLAY=… variable), each
// call bounded by ctx and a minute.
func Xdotool(ctx context.Context, display string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		c, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		cmd := exec.CommandContext(c, "/usr/bin/xdotool", args...)
		cmd.Env = []string{display}
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
}
