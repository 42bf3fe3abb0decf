package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/helpers/askbroker/askproc"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
)

// startBroker runs the real lnk-askbroker as lnk sandbox run starts it
// (askproc: brokerproc's fds, a launcher beside it where env names a
// desktop) with a store and, when tty is not nil, a terminal, and returns
// a client on its channel.
func startBroker(t *testing.T, tty *os.File, env ...string) *wire.Client {
	t.Helper()
	home := t.TempDir()
	var stderr testenv.SyncBuffer
	p, err := askproc.Start(askproc.Options{Bin: testenv.Bin(t, "lnk-askbroker"), Home: home, Terminal: tty,
		Desktop: append([]string{"HOME=" + home}, env...), Wait: 5 * time.Minute, Log: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		if t.Failed() {
			t.Logf("lnk-askbroker's log:\n%s", stderr.String())
		}
	})
	return p.Asker.C
}

var question = askbroker.AskRequest{What: "mcp call", Sandbox: "work", Agent: "ann", Call: "tools/call delete_repo", Allow: "lnk agent allow --tool gh --allow delete_repo"}

func TestNoWayIsRefusedAtOnce(t *testing.T) {
	cl := startBroker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r askbroker.Reply
	if _, err := cl.Call(ctx, askbroker.AskSpec, &question, &r); err != nil {
		t.Fatal(err)
	}
	if r.Allow || r.Refused != askbroker.CodeNoWay || !strings.Contains(r.Reason, "lnk agent allow --tool gh") {
		t.Fatalf("reply %+v; want refused at once with no way to ask, naming the --allow", r)
	}
}

func TestBadQuestionIsRefused(t *testing.T) {
	cl := startBroker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := question
	q.Call = " "
	var r askbroker.Reply
	if _, err := cl.Call(ctx, askbroker.AskSpec, &q, &r); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty call: %+v, %v; want refused", r, err)
	}
}

// startTmux starts a real terminal (tmux on a private socket, its pane
// running sleep) and returns the pane's terminal and a tmux runner.
func startTmux(t *testing.T) (*os.File, func(args ...string) string) {
	t.Helper()
	_, err := exec.LookPath("tmux")
	testenv.Require(t, err == nil, "tmux")
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "ask", "-x", "200", "-y", "60", "sleep 100000")
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	path := strings.TrimSpace(tmux("display-message", "-p", "-t", "ask", "#{pane_tty}"))
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	tty := os.NewFile(uintptr(fd), path)
	t.Cleanup(func() { tty.Close() })
	return tty, tmux
}

// typeCode waits for the terminal's prompt and types its code back.
func typeCode(t *testing.T, ctx context.Context, tmux func(args ...string) string) {
	t.Helper()
	prompt := regexp.MustCompile(`Type ([a-z]{4}) to allow it once`)
	var code string
	for code == "" {
		if ctx.Err() != nil {
			t.Fatal("the terminal never showed the question")
		}
		if m := prompt.FindStringSubmatch(tmux("capture-pane", "-p", "-J", "-t", "ask")); m != nil {
			code = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	tmux("send-keys", "-t", "ask", "-l", code)
	tmux("send-keys", "-t", "ask", "Enter")
}

func TestAnsweredOnItsTerminal(t *testing.T) {
	tty, tmux := startTmux(t)
	cl := startBroker(t, tty)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := make(chan askbroker.Reply, 1)
	go func() {
		var r askbroker.Reply
		if _, err := cl.Call(ctx, askbroker.AskSpec, &question, &r); err != nil {
			t.Error(err)
		}
		got <- r
	}()
	typeCode(t, ctx, tmux)
	select {
	case r := <-got:
		if !r.Allow || r.By != "terminal" || r.Refused != "" {
			t.Fatalf("reply %+v; want allowed on the terminal", r)
		}
	case <-ctx.Done():
		t.Fatal("no reply")
	}
}
