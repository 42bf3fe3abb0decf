package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/testenv"
)

// TestNotificationThroughTheLauncher: with a D-Bus session and no
// display, the confined launcher's notify-send reaches a real
// notification-daemon, with the question's id; the owner then answers on
// the terminal.
func TestNotificationThroughTheLauncher(t *testing.T) {
	const daemonPath = "/usr/lib/notification-daemon/notification-daemon"
	_, err := os.Stat(daemonPath)
	testenv.Require(t, err == nil, "notification-daemon (apt-get install notification-daemon)")
	_, ok := askbroker.FindSystemProgram("notify-send")
	testenv.Require(t, ok, "notify-send (apt-get install libnotify-bin)")
	// The notification daemon's desktop, not the broker's: the broker is
	// given the bus alone.
	desktop := testenv.Desktop(t)
	addr := strings.TrimPrefix(desktop[1], "DBUS_SESSION_BUS_ADDRESS=")
	mon := exec.Command("/usr/bin/dbus-monitor", "--address", addr)
	out, _ := mon.StdoutPipe()
	if err := mon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Process.Kill(); mon.Wait() })
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	want := func(s string) {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("dbus-monitor ended before %q", s)
				}
				if strings.Contains(l, s) {
					return
				}
			case <-timeout:
				t.Fatalf("never saw %q on the bus", s)
			}
		}
	}
	want("NameAcquired")
	daemon := exec.Command(daemonPath)
	daemon.Env = append(desktop, "HOME="+t.TempDir())
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	for {
		want("member=NameOwnerChanged")
		if l := <-lines; strings.Contains(l, `"org.freedesktop.Notifications"`) {
			break
		}
	}

	tty, tmux := startTmux(t)
	cl := startBroker(t, tty, "DBUS_SESSION_BUS_ADDRESS="+addr)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	got := make(chan askbroker.Reply, 1)
	go func() {
		var rep askbroker.Reply
		if _, err := cl.Call(ctx, askbroker.AskSpec, &question, &rep); err != nil {
			t.Error(err)
		}
		got <- rep
	}()
	want("member=Notify")
	want("lnk ask answer ")
	typeCode(t, ctx, tmux)
	select {
	case rep := <-got:
		if !rep.Allow || rep.By != "terminal" {
			t.Fatalf("reply %+v; want allowed on the terminal", rep)
		}
	case <-ctx.Done():
		t.Fatal("no reply")
	}
}
