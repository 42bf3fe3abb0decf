package testenv

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/procstat"
)

// Desktop starts a desktop session of t's own: a real X server
// (StartX) and a real D-Bus session bus (SessionBus), and returns the
// variables a program on it is given: DISPLAY=… and
// DBUS_SESSION_BUS_ADDRESS=…. With a bus named, a GTK program such as
// zenity starts no bus of its own (dbus-launch's X11 autolaunch, whose
// dbus-daemon forks away and outlives the test); what the bus starts
// for it (the accessibility bus and its registry) ends with the bus, or
// at the session's end (SIGTERM, as a logout ends a session's processes).
// Call it before anything else the test starts with the desktop, so
// its checks run after those have been stopped.
func Desktop(t testing.TB) []string {
	t.Helper()
	display := StartX(t)
	return []string{display, "DBUS_SESSION_BUS_ADDRESS=" + SessionBus(t)}
}

// SessionBus starts a real D-Bus session bus (dbus-daemon --session,
// the system's own configuration, so it activates services as a
// desktop's does) as t's child, listening in a folder of t's, and
// returns its address. At cleanup the bus is stopped, what its session
// started and left running is sent SIGTERM ([endSession]), and t fails
// if any process whose environment names the bus (one it activated, or
// one started with it) is still running 30 s later; those are killed.
func SessionBus(t testing.TB) string {
	t.Helper()
	daemon := "/usr/bin/dbus-daemon"
	_, err := os.Stat(daemon)
	Require(t, err == nil, "dbus-daemon in /usr/bin (apt-get install dbus-daemon)")
	dir, err := os.MkdirTemp("", "lnk-bus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--session", "--nofork", "--nopidfile", "--print-address=3",
		"--address=unix:path="+filepath.Join(dir, "bus"))
	// Its activated services inherit this environment: HOME is the
	// bus's folder, so none writes in the test's HOME or the user's.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		r.Close()
		line <- strings.TrimSpace(s)
	}()
	var addr string
	select {
	case addr = <-line:
	case <-time.After(30 * time.Second):
	}
	t.Cleanup(func() {
		stop(cmd)
		if addr == "" {
			return
		}
		// The address holds the bus's own folder: no other process's
		// environment names it.
		names := []byte("_ADDRESS=" + addr + "\x00")
		ofBus := func(environ []byte, _ procstat.Stat) bool { return bytes.Contains(environ, names) }
		endSession(ofBus)
		NoneLeft(t, "the session bus "+addr, ofBus)
	})
	if addr == "" {
		t.Fatal("dbus-daemon gave no address within 30s")
	}
	return addr
}

// endSession ends what the session started, as a desktop's logout ends
// its session: what has not left with the bus within sessionGrace (the
// accessibility registry, at-spi2-registryd, may sit on for minutes
// waiting for a session manager) is sent SIGTERM. NoneLeft then fails
// the test for one that doesn't end on it.
func endSession(match func(environ []byte, st procstat.Stat) bool) {
	left, _ := WaitNoneLeft(sessionGrace, match)
	for _, p := range left {
		syscall.Kill(p.PID, syscall.SIGTERM)
	}
}

// sessionGrace is how long endSession lets the session's processes take
// to leave on their own once the bus has gone.
const sessionGrace = 2 * time.Second

// stop ends cmd with SIGTERM, so it removes what it made, and SIGKILL
// if it has not ended 10 s later.
func stop(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// NoneLeft fails t if a process that matches (by its environment as it
// started, and its stat) still runs 30 s from now; each is named in the
// failure and killed. Processes this one cannot read (another user's)
// are not looked at; an ended one not yet reaped has no environment.
func NoneLeft(t testing.TB, what string, match func(environ []byte, st procstat.Stat) bool) {
	t.Helper()
	left, err := WaitNoneLeft(leftGrace, match)
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
	for _, p := range left {
		syscall.Kill(p.PID, syscall.SIGKILL)
		t.Errorf("%s: pid %d (%s) outlived the test; killed", what, p.PID, p.Command)
	}
}

// leftGrace is how long NoneLeft lets a matching process take to end:
// one whose bus or display has just gone notices it and exits.
var leftGrace = 30 * time.Second

// A Left is a process NoneLeft found still running.
type Left struct {
	PID     int
	Command string
}

// WaitNoneLeft waits up to d for every process that matches to end, and
// returns those still running then; an error where /proc cannot be
// listed, so nothing was looked at.
func WaitNoneLeft(d time.Duration, match func(environ []byte, st procstat.Stat) bool) ([]Left, error) {
	deadline := time.Now().Add(d)
	for {
		left, err := matching(match)
		if err != nil || len(left) == 0 || time.Now().After(deadline) {
			return left, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func matching(match func(environ []byte, st procstat.Stat) bool) ([]Left, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var left []Left
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		environ, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || len(environ) == 0 {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil || st.State == 'Z' || !match(environ, st) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		left = append(left, Left{PID: pid, Command: strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))})
	}
	return left, nil
}
