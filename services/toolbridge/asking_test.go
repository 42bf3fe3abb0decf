package toolbridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// These tests run a real `lnk sandbox run` whose sandboxed client calls
// the test server's delete tool, which no grant allows by name, so the
// owner is asked through the lnk-askbroker the run starts: on the
// terminal lnk runs in (a real tmux pane, answered with send-keys), on a
// real zenity under Xvfb (answered with xdotool), in the store (answered
// with lnk ask answer), or not at all.

// askRig is a home with the test tool defined and the client copied in.
type askRig struct {
	home, client, lnk string
}

func newAskRig(t *testing.T) *askRig {
	t.Helper()
	requireSandbox(t)
	home := testenv.Home(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	def := &tooldef.Definition{Name: "test", Command: []string{self}}
	def.Env = envOf(t, "LNK_TEST_MCP_SERVER=1", "PATH=/usr/bin:/bin")
	if err := (tooldef.Store{Home: home}).Save(def); err != nil {
		t.Fatal(err)
	}
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	testenv.Bin(t, "lnk-askbroker")
	return &askRig{home: home, client: sandboxedClient(t, home), lnk: testenv.Bin(t, "lnk")}
}

// args is lnk sandbox run's command line: the test tool with extra's
// grants, the client making calls.
func (r *askRig) args(extra []string, calls ...string) []string {
	a := []string{"sandbox", "run", "--read", filepath.Dir(r.client), "--command", r.client, "--tool", "test"}
	a = append(a, extra...)
	return append(append(a, "--", r.client, "mcp-calls"), calls...)
}

// settings writes Link's settings file.
func (r *askRig) settings(t *testing.T, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.home, ".lnk", "settings.toml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runDetached runs lnk with no controlling terminal (a session of its
// own) and env added, and returns its output's lines by key.
func (r *askRig) runDetached(t *testing.T, env []string, args []string) (map[string]string, string) {
	t.Helper()
	cmd := exec.Command(r.lnk, args...)
	cmd.Env = append(append(os.Environ(), "HOME="+r.home), env...)
	cmd.Dir = r.home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 20 * time.Second
	cmd.Run()
	return outputLines(out.String()), out.String() + errb.String()
}

func outputLines(s string) map[string]string {
	lines := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		lines[k] = v
	}
	return lines
}

// An ownerPane is a real terminal (a tmux session on a private socket)
// whose pane runs lnk, as an owner would in a terminal: lnk's
// controlling terminal is the pane's.
type ownerPane struct {
	t    *testing.T
	sock string
	dir  string
}

// startInPane runs lnk with args in a new pane, env exported first; its
// output goes to files the test reads once it has exited.
func (r *askRig) startInPane(t *testing.T, env []string, args []string) *ownerPane {
	t.Helper()
	_, err := exec.LookPath("tmux")
	testenv.Require(t, err == nil, "tmux")
	dir := t.TempDir()
	p := &ownerPane{t: t, sock: filepath.Join(dir, "tmux.sock"), dir: dir}
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	for _, kv := range append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.home, "LNK_BIN=" + os.Getenv("LNK_BIN")}, env...) {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&script, "export %s='%s'\n", k, v)
	}
	fmt.Fprintf(&script, "cd '%s'\n'%s'", r.home, r.lnk)
	for _, a := range args {
		fmt.Fprintf(&script, " '%s'", a)
	}
	fmt.Fprintf(&script, " >'%s/out' 2>'%s/err'\necho $? >'%s/status'\nsleep 100000\n", dir, dir, dir)
	sh := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(sh, []byte(script.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "owner", "-x", "250", "-y", "80", "/bin/sh "+sh)
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *ownerPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (p *ownerPane) text() string {
	return p.tmux("capture-pane", "-p", "-J", "-t", "owner", "-S", "-300")
}

// waitFor polls the pane until re matches its text, and returns the match.
func (p *ownerPane) waitFor(re *regexp.Regexp) []string {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		text := p.text()
		if m := re.FindStringSubmatch(text); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(p.dir, "err"))
			p.t.Fatalf("the pane never showed %v; it shows:\n%s\nlnk's stderr: %s", re, text, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *ownerPane) typeLine(s string) {
	p.tmux("send-keys", "-t", "owner", "-l", s)
	p.tmux("send-keys", "-t", "owner", "Enter")
}

// wait waits for lnk to exit and returns its output's lines by key.
func (p *ownerPane) wait() (map[string]string, string) {
	p.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(p.dir, "status")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("lnk never exited; the pane shows:\n%s", p.text())
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, _ := os.ReadFile(filepath.Join(p.dir, "out"))
	errb, _ := os.ReadFile(filepath.Join(p.dir, "err"))
	return outputLines(string(out)), string(out) + string(errb)
}

var paneQuestion = regexp.MustCompile(`\[lnk question ([0-9a-z]+)\][\s\S]*?Type ([a-z]{4}) to allow it once`)

// A question asked on the terminal the owner ran lnk in: a wrong code
// refuses the call (and says the owner said no, with the --allow), the
// code shown allows the next one once.
func TestAskedOnTheOwnersTerminal(t *testing.T) {
	r := newAskRig(t)
	p := r.startInPane(t, nil, r.args(nil, "delete", "delete"))
	first := p.waitFor(paneQuestion)
	if !strings.Contains(p.text(), "tool test: delete {\"text\":\"asked-delete\"}") {
		t.Fatalf("the question does not name the call:\n%s", p.text())
	}
	confinedBrokerRuns(t, r)
	p.typeLine("nope")
	p.waitFor(regexp.MustCompile(`\[lnk question ` + first[1] + `: refused, answered by terminal\]`))
	var second []string
	for {
		second = p.waitFor(paneQuestion)
		if second[1] != first[1] {
			break
		}
		// The first question's text is still above: wait for the next.
		m := regexp.MustCompile(`(?s).*\[lnk question ([0-9a-z]+)\].*?Type ([a-z]{4}) to allow it once`).FindStringSubmatch(p.text())
		if m != nil && m[1] != first[1] {
			second = m
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.typeLine(second[2])
	lines, all := p.wait()
	if want := "deleted asked-delete"; lines["delete"] != want {
		t.Errorf("the call allowed on the terminal: %q, want %q\n%s", lines["delete"], want, all)
	}
	refused := lines["delete-refused"] + lines["delete-error"]
	if !strings.Contains(refused, "the owner said no (terminal)") || !strings.Contains(refused, "lnk sandbox run --tool test --allow delete") {
		t.Errorf("the call refused on the terminal: %q, want the owner's no and the --allow\n%s", refused, all)
	}
}

// confinedBrokerRuns checks that, while a question waits, a process of
// this build's lnk-askbroker runs as a child of lnk's (the kernel's, lnk
// kernel run, for a run that is a start of the kernel's) under a seccomp filter
// with no new privileges: the question is the confined broker's.
func confinedBrokerRuns(t *testing.T, r *askRig) {
	t.Helper()
	want := filepath.Join(filepath.Dir(r.lnk), "lnk-askbroker")
	ents, _ := os.ReadDir("/proc")
	// lnk is undumpable (it holds the proxy's secret), so an owner who
	// is not root reads neither its exe link nor its environment: the
	// programs are told by their command lines, which anyone reads, and
	// the HOME is checked where it can be read (as root; the user suite
	// runs one package at a time).
	argv0 := func(pid string) string {
		b, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		first, _, _ := strings.Cut(string(b), "\x00")
		return first
	}
	for _, e := range ents {
		if argv0(e.Name()) != want {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cmdline), "--dialog-launcher") {
			continue
		}
		status, _ := os.ReadFile("/proc/" + e.Name() + "/status")
		var ppid string
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
		}
		parent, _ := os.ReadFile("/proc/" + ppid + "/cmdline")
		if argv0(ppid) != r.lnk && !strings.HasPrefix(string(parent), "lnk\x00kernel\x00run\x00") {
			continue
		}
		if environ, err := os.ReadFile("/proc/" + ppid + "/environ"); err == nil && !strings.Contains(string(environ), "HOME="+r.home+"\x00") {
			continue
		}
		if !strings.Contains(string(status), "Seccomp:\t2") || !strings.Contains(string(status), "NoNewPrivs:\t1") {
			t.Fatalf("lnk-askbroker %s runs unconfined:\n%s", e.Name(), status)
		}
		return
	}
	t.Fatal("no lnk-askbroker runs beside this lnk while it asks")
}

// A question on a desktop with no terminal: a real zenity under Xvfb,
// shown by the broker's launcher, answered with xdotool (Allow once,
// chosen on purpose: its default is Refuse).
func TestAskedOnADialog(t *testing.T) {
	desktop := testenv.Desktop(t) // first: its checks run once the rest has stopped
	r := newAskRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	type res struct {
		lines map[string]string
		all   string
	}
	done := make(chan res, 1)
	go func() {
		l, a := r.runDetached(t, desktop, r.args(nil, "delete"))
		done <- res{l, a}
	}()
	xdo := testenv.Xdotool(ctx, desktop...)
	win, err := xdo("search", "--sync", "--onlyvisible", "--name", "^Link asks$")
	if err != nil || win == "" {
		t.Fatalf("the dialog never showed: %v", err)
	}
	win = strings.Fields(win)[0]
	confinedBrokerRuns(t, r)
	for {
		xdo("windowfocus", "--sync", win)
		// The dialog's default is Refuse: Tab moves to Allow once.
		xdo("key", "--clearmodifiers", "Tab", "Return")
		select {
		case got := <-done:
			if want := "deleted asked-delete"; got.lines["delete"] != want {
				t.Fatalf("the call allowed on the dialog: %q, want %q\n%s", got.lines["delete"], want, got.all)
			}
			if b, _ := os.ReadFile(filepath.Join(r.home, ".lnk", "log", "audit.log")); !strings.Contains(string(b), "allow=true by=dialog") {
				t.Errorf("the audit log does not say the dialog allowed it:\n%s", b)
			}
			return
		case <-time.After(2 * time.Second):
		case <-ctx.Done():
			t.Fatal("the dialog took no key")
		}
	}
}

// A question shown on the terminal, on a dialog and in the store at once,
// answered with lnk ask answer from elsewhere: the first answer wins, the
// terminal says how it ended and the dialog is taken away.
func TestFirstAnswerWinsTheOthersWithdrawn(t *testing.T) {
	desktop := testenv.Desktop(t) // first: its checks run once the rest has stopped
	r := newAskRig(t)
	p := r.startInPane(t, desktop, r.args(nil, "delete"))
	m := p.waitFor(paneQuestion)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	xdo := testenv.Xdotool(ctx, desktop...)
	if win, err := xdo("search", "--sync", "--onlyvisible", "--name", "^Link asks$"); err != nil || win == "" {
		t.Fatalf("the dialog never showed beside the terminal: %v", err)
	}
	// From another terminal: lnk ask list shows it, lnk ask answer answers.
	list := exec.Command(r.lnk, "ask", "list", "--json")
	list.Env = append(os.Environ(), "HOME="+r.home)
	out, err := list.Output()
	var ws []askbroker.Waiting
	if err != nil || json.Unmarshal(out, &ws) != nil || len(ws) != 1 || ws[0].ID != m[1] || !strings.Contains(ws[0].Call, "tool test: delete") {
		t.Fatalf("lnk ask list: %s (%v), want the question %s the terminal shows", out, err, m[1])
	}
	cmd := exec.Command(r.lnk, "ask", "answer", m[1], "yes")
	cmd.Env = append(os.Environ(), "HOME="+r.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lnk ask answer: %v\n%s", err, out)
	}
	p.waitFor(regexp.MustCompile(`\[lnk question ` + m[1] + `: allowed once, answered by store\]`))
	lines, all := p.wait()
	if want := "deleted asked-delete"; lines["delete"] != want {
		t.Errorf("the call answered in the store: %q, want %q\n%s", lines["delete"], want, all)
	}
	for {
		// xdotool search exits 1 once no window matches.
		if out, err := xdo("search", "--onlyvisible", "--name", "^Link asks$"); err != nil && out == "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the dialog is still shown after the store answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if b, _ := os.ReadFile(filepath.Join(r.home, ".lnk", "log", "audit.log")); !strings.Contains(string(b), "answer id="+m[1]+" allow=true by=store") {
		t.Errorf("the audit log does not say the store answered:\n%s", b)
	}
}

// A question nobody answers in time is refused saying it timed out and
// naming the exact --allow that lets the call through; that flag given,
// the same call goes through without asking.
func TestUnansweredTimesOutNamingTheAllow(t *testing.T) {
	r := newAskRig(t)
	r.settings(t, "ask_wait = \"2s\"\n")
	p := r.startInPane(t, nil, r.args(nil, "delete"))
	p.waitFor(paneQuestion)
	lines, all := p.wait()
	refused := lines["delete-refused"] + lines["delete-error"]
	const allow = "lnk sandbox run --tool test --allow delete"
	if !strings.Contains(refused, "timed out") || !strings.Contains(refused, allow) {
		t.Fatalf("the unanswered call: %q, want it timed out and %q\n%s", refused, allow, all)
	}
	// The positive control: the flag it names lets the same call through,
	// asked of no one (no terminal, no display: a question would be
	// refused at once).
	lines, all = r.runDetached(t, nil, r.args([]string{"--allow", "delete"}, "delete"))
	if want := "deleted asked-delete"; lines["delete"] != want {
		t.Fatalf("with --allow delete: %q, want %q\n%s", lines["delete"], want, all)
	}
}

// With no terminal, no display and no one answering in the store, a
// question is refused at once, saying so and naming the --allow.
func TestNoOneToAskIsRefusedAtOnceNamingTheAllow(t *testing.T) {
	r := newAskRig(t)
	lines, all := r.runDetached(t, nil, r.args(nil, "delete"))
	refused := lines["delete-refused"] + lines["delete-error"]
	if !strings.Contains(refused, "no way to ask the owner") || !strings.Contains(refused, "lnk sandbox run --tool test --allow delete") {
		t.Fatalf("the call nobody can answer: %q, want no way to ask and the --allow\n%s", refused, all)
	}
	lines, all = r.runDetached(t, nil, r.args([]string{"--allow", "delete"}, "delete"))
	if want := "deleted asked-delete"; lines["delete"] != want {
		t.Fatalf("with --allow delete: %q, want %q\n%s", lines["delete"], want, all)
	}
}
