package askbroker

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestNotificationWhereNoDialogShows: with a question waiting in the
// store and no dialog, notify-send calls Notify on a real session bus,
// served by the real notification-daemon on Xvfb; a dbus-monitor on that
// bus sees the call, with the question's id.
func TestNotificationWhereNoDialogShows(t *testing.T) {
	const daemonPath = "/usr/lib/notification-daemon/notification-daemon"
	_, err := os.Stat(daemonPath)
	testenv.Require(t, err == nil, "notification-daemon (apt-get install notification-daemon)")
	xenv := startXvfb(t)
	addr := strings.TrimPrefix(xenv[1], "DBUS_SESSION_BUS_ADDRESS=")
	monitor, ok := FindSystemProgram("dbus-monitor")
	testenv.Require(t, ok, "dbus-monitor (apt-get install dbus-x11)")
	n := FindNotifier([]string{"DBUS_SESSION_BUS_ADDRESS=" + addr})
	testenv.Require(t, n != nil, "notify-send in /usr/bin (apt-get install libnotify-bin)")
	mon := exec.Command(monitor, "--address", addr)
	out, err := mon.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	mon.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := mon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Process.Kill(); mon.Wait() })
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// dbus-monitor says NameAcquired once it is on the bus and watching.
	waitLine(t, lines, "NameAcquired")
	daemon := exec.Command(daemonPath)
	daemon.Env = xenv
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	// The daemon serves once the bus says it owns the name.
	for {
		waitLine(t, lines, "member=NameOwnerChanged")
		if l := <-lines; strings.Contains(l, `"org.freedesktop.Notifications"`) {
			break
		}
	}

	s, _ := testStore(t)
	release, err := s.Answering() // a chat answers: the question waits in the store
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	b, err := New(Config{Store: s, Notifier: n, Wait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	q := sampleQuestion()
	q.Call = "<b>delete_repo</b>"
	c := askAsync(b, q)
	var id string
	deadline := time.Now().Add(30 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		if ws, _ := s.List(); len(ws) == 1 {
			id = ws[0].ID
		}
		time.Sleep(10 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("the question never reached the store")
	}
	waitLine(t, lines, "member=Notify")
	waitLine(t, lines, "lnk ask answer "+id+" yes|no")
	if err := s.Answer(id, Answer{Allow: false, By: "store"}); err != nil {
		t.Fatal(err)
	}
	if r := waitResult(t, c); r.d.By != "store" {
		t.Fatalf("decision %+v", r.d)
	}
}

func TestNotificationTextIsEscaped(t *testing.T) {
	q := sampleQuestion()
	q.Call = `<a href="https://evil.example">click</a>`
	_, body := notifyText(&Asked{ID: "aaaaaaaaaaaaaaaa", Question: q})
	if strings.ContainsAny(body, "<>") || !strings.Contains(body, "&lt;a href=") {
		t.Errorf("notification body not escaped: %q", body)
	}
}

// TestNotificationNamesAskShow: a notification shows a call's first
// line alone; a call of more lines ends it with " …", and the body names
// lnk ask show ID, which shows the question whole, before lnk ask
// answer. A one-line call with accents and an emoji shows whole and
// as written (the positive control).
func TestNotificationNamesAskShow(t *testing.T) {
	q := sampleQuestion()
	q.Call = "tools/call fetch {\n  \"then\": \"rm -rf ~\"\n}"
	_, body := notifyText(&Asked{ID: "aaaaaaaaaaaaaaaa", Question: q})
	if !strings.Contains(body, ": tools/call fetch { …\n") || strings.Contains(body, "rm -rf") ||
		!strings.Contains(body, "lnk ask show aaaaaaaaaaaaaaaa shows it whole; lnk ask answer aaaaaaaaaaaaaaaa yes|no") {
		t.Errorf("notification body: %q", body)
	}
	q.Call = "read ~/Link/café 🙂"
	if _, body := notifyText(&Asked{ID: "aaaaaaaaaaaaaaaa", Question: q}); !strings.Contains(body, ": read ~/Link/café 🙂\n") {
		t.Errorf("notification body: %q", body)
	}
}

// waitLine reads lines until one contains want, for at most 30 seconds.
func waitLine(t *testing.T, lines chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the monitor ended before %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("never saw %q", want)
		}
	}
}
