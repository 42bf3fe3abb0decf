package askbroker

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// startXvfb starts a desktop of the test's own, a real X server on a
// free display and a session bus (testenv.Desktop), and returns the
// dialog environment for it: DISPLAY, DBUS_SESSION_BUS_ADDRESS, HOME and
// XDG_RUNTIME_DIR, in that order.
func startXvfb(t *testing.T) []string {
	t.Helper()
	desktop := testenv.Desktop(t)
	home := t.TempDir()
	return append(desktop, "HOME="+home, "XDG_RUNTIME_DIR="+home)
}

// xdotool runs xdotool on env's display, bounded by a deadline.
func xdotool(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/xdotool", args...)
	cmd.Env = env
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// waitWindow waits (xdotool search --sync) for the question's window.
func waitWindow(t *testing.T, env []string) string {
	t.Helper()
	id, err := xdotool(t, env, "search", "--sync", "--onlyvisible", "--name", "^Link asks$")
	if err != nil || id == "" {
		t.Fatalf("the dialog never showed: %v", err)
	}
	return strings.Fields(id)[0]
}

func dialogBroker(t *testing.T, env []string, store *Store) *Broker {
	t.Helper()
	d := FindDialog(env)
	if d == nil || d.kind != "zenity" {
		t.Fatalf("FindDialog(%q) = %+v, want zenity", env, d)
	}
	b, err := New(Config{Store: store, Dialog: d, Wait: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestDialogAnsweredWithAKey: the dialog's default is Refuse, so a key
// typed into it as it takes the focus (Return, Escape, a space) never
// allows; moving to Allow once and pressing it does (the positive
// control).
func TestDialogAnsweredWithAKey(t *testing.T) {
	env := startXvfb(t)
	b := dialogBroker(t, env, nil)
	for _, tc := range []struct {
		key   string
		allow bool
	}{{"Return", false}, {"space", false}, {"Escape", false}, {"Tab Return", true}} {
		t.Run(strings.ReplaceAll(tc.key, " ", "+"), func(t *testing.T) {
			q := sampleQuestion()
			q.Call = `<span foreground="red">tools/call</span> delete_repo`
			c := askAsync(b, q)
			win := waitWindow(t, env)
			// Press until it answers: a key sent before GTK is ready for it
			// is lost, never misread, and the dialog closes on the first
			// one it takes.
			var r result
			deadline := time.Now().Add(60 * time.Second)
			for got := false; !got; {
				if time.Now().After(deadline) {
					t.Fatalf("the dialog took no %s in 60s", tc.key)
				}
				xdotool(t, env, "windowfocus", "--sync", win)
				xdotool(t, env, append([]string{"key", "--clearmodifiers"}, strings.Fields(tc.key)...)...)
				select {
				case r = <-c:
					got = true
				case <-time.After(2 * time.Second):
				}
			}
			if r.err != nil || r.d.Allow != tc.allow || r.d.By != "dialog" {
				t.Fatalf("%s: %+v, %v; want allow=%v by the dialog", tc.key, r.d, r.err, tc.allow)
			}
			waitNoWindow(t, env)
		})
	}
}

func waitNoWindow(t *testing.T, env []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// xdotool search exits 1 when no window matches.
		if out, err := xdotool(t, env, "search", "--onlyvisible", "--name", "^Link asks$"); err != nil && out == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the dialog is still shown")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDialogKilledWhenAnsweredFromTheStore(t *testing.T) {
	env := startXvfb(t)
	s, _ := testStore(t)
	release, err := s.Answering() // a chat answering: the question waits in the store too
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	b := dialogBroker(t, env, s)
	c := askAsync(b, sampleQuestion())
	waitWindow(t, env)
	ws, err := s.List()
	if err != nil || len(ws) != 1 {
		t.Fatalf("the question is not in the store: %+v, %v", ws, err)
	}
	if err := s.Answer(ws[0].ID, Answer{Allow: false, By: "store"}); err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, c)
	if r.d.Allow || r.d.By != "store" {
		t.Fatalf("store answer: %+v", r.d)
	}
	waitNoWindow(t, env)
}

func TestFindDialogNeedsADisplayAndSystemFolders(t *testing.T) {
	if d := FindDialog([]string{"HOME=/tmp"}); d != nil {
		t.Errorf("a dialog without a display: %+v", d)
	}
	dir := t.TempDir()
	os.WriteFile(dir+"/zenity", []byte("#!/bin/sh\nexit 0\n"), 0o755)
	t.Setenv("PATH", dir)
	if d := FindDialog([]string{"DISPLAY=:99", "PATH=" + dir}); d != nil && strings.HasPrefix(d.prog, dir) {
		t.Errorf("a dialog program taken from PATH: %s", d.prog)
	}
	if d := FindDialog([]string{"DISPLAY=:99", "SECRET_TOKEN=x"}); d != nil {
		for _, kv := range d.env {
			if strings.HasPrefix(kv, "SECRET_TOKEN") {
				t.Errorf("the dialog is given %s", kv)
			}
		}
	}
}

func TestDialogTextIsNeverMarkup(t *testing.T) {
	q := sampleQuestion()
	q.Call = `<b>x</b> & <a href="y">`
	a := &Asked{ID: "aaaaaaaaaaaaaaaa", Question: q}
	z := (&Dialog{kind: "zenity"}).args(a)
	if !strings.Contains(strings.Join(z, " "), "--no-markup") {
		t.Errorf("zenity without --no-markup: %q", z)
	}
	k := (&Dialog{kind: "kdialog"}).args(a)
	if text := k[len(k)-1]; strings.ContainsAny(text, "<>") || !strings.Contains(text, "&lt;b&gt;") {
		t.Errorf("kdialog text not escaped: %q", text)
	}
}
