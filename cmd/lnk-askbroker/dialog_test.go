package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/testenv"
)

// TestConfinement runs the broker's own probe: once confined it may write
// only its store, read nothing else (the system's files are the dialog
// launcher's), exec nothing (not even the dialog: the launcher does), and
// make no socket.
func TestConfinement(t *testing.T) {
	home := t.TempDir()
	s, err := askbroker.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	dir, err := os.Open(filepath.Join(home, ".lnk", "questions"))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ch := os.NewFile(uintptr(fds[1]), "broker")
	defer ch.Close()
	defer unix.Close(fds[0])
	cmd := exec.Command(testenv.Bin(t, "lnk-askbroker"), "--probe-confinement")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "LNK_BROKER_FDS=1"}
	cmd.ExtraFiles = []*os.File{ch, dir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	want := map[string]string{"write-home": "refused", "write-store": "allowed", "read-etc": "refused",
		"read-home": "refused", "exec-other": "refused", "socket-inet": "refused", "socket-unix": "refused"}
	if _, ok := askbroker.FindSystemProgram("zenity"); ok {
		want["exec-dialog"] = "refused"
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		got[k], _, _ = strings.Cut(v, " ")
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s\n%s", k, got[k], v, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "probe-written")); err == nil {
		t.Error("the confined broker wrote in HOME")
	}
}

// TestDialogUnderConfinement: the confined broker, through its confined
// dialog launcher, shows a real zenity on a real X server (Xvfb, with a
// session bus: testenv.Desktop), answered with xdotool: Allow once,
// chosen on purpose (its default is Refuse).
func TestDialogUnderConfinement(t *testing.T) {
	desktop := testenv.Desktop(t)
	cl := startBroker(t, nil, desktop...)
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
	xdo := testenv.Xdotool(ctx, desktop...)
	win, err := xdo("search", "--sync", "--onlyvisible", "--name", "^Link asks$")
	if err != nil || win == "" {
		t.Fatalf("the confined broker's dialog never showed: %v", err)
	}
	win = strings.Fields(win)[0]
	for {
		xdo("windowfocus", "--sync", win)
		// The dialog's default is Refuse: Tab moves to Allow once.
		xdo("key", "--clearmodifiers", "Tab", "Return")
		select {
		case rep := <-got:
			if !rep.Allow || rep.By != "dialog" {
				t.Fatalf("reply %+v; want allowed on the dialog", rep)
			}
			return
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
			t.Fatal("the dialog took no key")
		}
	}
}

// TestDialogWithdrawnWhenAnsweredOnTheTerminal: a question on the dialog
// and the terminal at once, answered on the terminal: the launcher kills
// the dialog, and it disappears from the screen.
func TestDialogWithdrawnWhenAnsweredOnTheTerminal(t *testing.T) {
	desktop := testenv.Desktop(t)
	tty, tmux := startTmux(t)
	cl := startBroker(t, tty, desktop...)
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
	xdo := testenv.Xdotool(ctx, desktop...)
	if win, err := xdo("search", "--sync", "--onlyvisible", "--name", "^Link asks$"); err != nil || win == "" {
		t.Fatalf("the dialog never showed: %v", err)
	}
	typeCode(t, ctx, tmux)
	select {
	case rep := <-got:
		if !rep.Allow || rep.By != "terminal" {
			t.Fatalf("reply %+v; want allowed on the terminal", rep)
		}
	case <-ctx.Done():
		t.Fatal("no reply")
	}
	for {
		// xdotool search exits 1 once no window matches.
		if out, err := xdo("search", "--onlyvisible", "--name", "^Link asks$"); err != nil && out == "" {
			return
		}
		if ctx.Err() != nil {
			t.Fatal("the dialog is still shown after the terminal answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
