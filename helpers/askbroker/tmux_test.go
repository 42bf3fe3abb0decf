package askbroker

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
	"lnk.dev/lnk/internal/testenv"
)

// A tmuxPane is a real terminal: a tmux session on a private socket whose
// pane runs sleep, so nothing but the broker reads its input.
type tmuxPane struct {
	t    *testing.T
	sock string
	tty  *os.File
}

func newPane(t *testing.T) *tmuxPane {
	t.Helper()
	_, err := exec.LookPath("tmux")
	testenv.Require(t, err == nil, "tmux")
	p := &tmuxPane{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	p.run("-f", "/dev/null", "new-session", "-d", "-s", "ask", "-x", "200", "-y", "60", "sleep 100000")
	t.Cleanup(func() { exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	path := strings.TrimSpace(p.run("display-message", "-p", "-t", "ask", "#{pane_tty}"))
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("opening the pane's terminal %s: %v", path, err)
	}
	p.tty = os.NewFile(uintptr(fd), path)
	t.Cleanup(func() { p.tty.Close() })
	return p
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// waitFor polls the pane until re matches its text, and returns the match.
func (p *tmuxPane) waitFor(re *regexp.Regexp) []string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		text := p.run("capture-pane", "-p", "-J", "-t", "ask", "-S", "-200")
		if m := re.FindStringSubmatch(text); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the pane never showed %v; it shows:\n%s", re, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *tmuxPane) typeLine(s string) {
	p.run("send-keys", "-t", "ask", "-l", s)
	p.run("send-keys", "-t", "ask", "Enter")
}

var codePrompt = regexp.MustCompile(`Type ([a-z]{4}) to allow it once`)

func terminalBroker(t *testing.T, wait time.Duration) (*Broker, *Store, *tmuxPane) {
	t.Helper()
	s, _ := testStore(t)
	p := newPane(t)
	term, err := NewTerminal(p.tty)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	b, err := New(Config{Store: s, Terminal: term, Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b, s, p
}

type result struct {
	d   Decision
	err error
}

func askAsync(b *Broker, q *Question) chan result {
	c := make(chan result, 1)
	go func() {
		d, err := b.Ask(context.Background(), q)
		c <- result{d, err}
	}()
	return c
}

func waitResult(t *testing.T, c chan result) result {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("the question never ended")
		return result{}
	}
}

func TestTerminalRightCodeAllows(t *testing.T) {
	b, _, p := terminalBroker(t, time.Minute)
	c := askAsync(b, sampleQuestion())
	code := p.waitFor(codePrompt)[1]
	p.waitFor(regexp.MustCompile(`tools/call delete_repo`))
	p.typeLine(code)
	r := waitResult(t, c)
	if r.err != nil || !r.d.Allow || r.d.By != "terminal" {
		t.Fatalf("right code: %+v, %v; want allowed by the terminal", r.d, r.err)
	}
	p.waitFor(regexp.MustCompile(`allowed once, answered by terminal`))
}

func TestTerminalWrongCodeRefuses(t *testing.T) {
	b, _, p := terminalBroker(t, time.Minute)
	c := askAsync(b, sampleQuestion())
	p.waitFor(codePrompt)
	p.typeLine("yes1")
	r := waitResult(t, c)
	if r.err != nil || r.d.Allow || r.d.By != "terminal" || !strings.Contains(r.d.Reason, "lnk agent allow --tool gh") {
		t.Fatalf("wrong code: %+v, %v; want refused by the terminal, naming the --allow", r.d, r.err)
	}
	p.waitFor(regexp.MustCompile(`refused, answered by terminal`))
}

func TestTerminalNoAnswerInTimeRefuses(t *testing.T) {
	b, _, p := terminalBroker(t, 2*time.Second)
	c := askAsync(b, sampleQuestion())
	p.waitFor(codePrompt)
	r := waitResult(t, c)
	if r.err != nil || r.d.Allow || r.d.By != "timeout" || !strings.Contains(r.d.Reason, "lnk agent allow --tool gh --allow delete_repo") {
		t.Fatalf("no answer: %+v, %v; want refused by the timeout, naming the --allow", r.d, r.err)
	}
	p.waitFor(regexp.MustCompile(`no answer in time`))
}

func TestStoreAnswerWithdrawsTerminal(t *testing.T) {
	b, s, p := terminalBroker(t, time.Minute)
	c := askAsync(b, sampleQuestion())
	p.waitFor(codePrompt)
	ws, err := s.List()
	if err != nil || len(ws) != 1 {
		t.Fatalf("the question is not waiting in the store: %+v %v", ws, err)
	}
	if err := s.Answer(ws[0].ID, Answer{Allow: true, By: "store"}); err != nil {
		t.Fatal(err)
	}
	r := waitResult(t, c)
	if !r.d.Allow || r.d.By != "store" {
		t.Fatalf("store answer: %+v", r.d)
	}
	p.waitFor(regexp.MustCompile(`allowed once, answered by store`))
	if ws, _ := s.List(); len(ws) != 0 {
		t.Errorf("an answered question still waits: %+v", ws)
	}
}

// A question's text cannot drive the owner's terminal: escape sequences
// that would clear the screen, move the cursor over the question or
// retitle the window arrive as plain text, and bidi and zero-width
// characters not at all.
func TestHostileTextOnARealTerminal(t *testing.T) {
	b, _, p := terminalBroker(t, time.Minute)
	q := sampleQuestion()
	q.Call = "tools/call ok\x1b[2J\x1b[H\x1b]0;pwned\x07\rEVIL\u202eLIVE\u200bX\u009b31m"
	c := askAsync(b, q)
	code := p.waitFor(codePrompt)[1]
	text := p.waitFor(regexp.MustCompile(`(?s)\[lnk question [a-z2-7]{16}\].*Type`))[0]
	if !strings.Contains(text, "tools/call ok[2J[H]0;pwned") || !strings.Contains(text, "EVILLIVEX31m") {
		t.Errorf("the call is not shown as plain text:\n%s", text)
	}
	if title := strings.TrimSpace(p.run("display-message", "-p", "-t", "ask", "#{pane_title}")); title == "pwned" {
		t.Error("the question's text retitled the terminal")
	}
	p.typeLine(code)
	if r := waitResult(t, c); !r.d.Allow {
		t.Fatalf("%+v", r.d)
	}
}

// TestForgedQuestionOnARealTerminal: a call whose lines copy Link's own
// (an "Allow it once?" line, a "[lnk question …]" head, a "Link: … asks
// for a page" line naming something harmless) forges no second question
// on a real terminal: every line of the call shows behind CallGutter, so
// the pane holds one line of Link's saying who asks, and its last line
// before the code names again what is allowed. The call's ordinary text
// (accents, emoji) shows as written (the positive control), and the right
// code still allows.
func TestForgedQuestionOnARealTerminal(t *testing.T) {
	b, _, p := terminalBroker(t, time.Minute)
	q := sampleQuestion()
	q.Call = "tools/call delete_repo {\"name\": \"café 🙂\"}\n" +
		"Allow it once? Unanswered, it is refused. To allow it always: lnk agent allow ann --tool gh --allow delete_repo\n" +
		"\n[lnk question aaaaaaaaaaaaaaaa]\n" +
		"Link: sandbox work (agent ann) asks for a page:\n" +
		"http://127.0.0.1/docs"
	q.Clean()
	c := askAsync(b, q)
	code := p.waitFor(codePrompt)[1]
	text := p.waitFor(regexp.MustCompile(`(?s)\[lnk question [a-z2-7]{16}\].*Type`))[0]
	var own []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "Link:") || strings.HasPrefix(l, "[lnk question") || strings.HasPrefix(l, "Allow") {
			own = append(own, l)
		}
	}
	if len(own) != 3 || own[1] != "Link: sandbox work (agent ann) asks for a mcp call:" || !strings.HasPrefix(own[2], "Allow this mcp call of sandbox work (agent ann) once?") {
		t.Errorf("the call's lines pass for Link's own; the lines that read as Link's are %q in:\n%s", own, text)
	}
	if !strings.Contains(text, CallGutter+"tools/call delete_repo {\"name\": \"café 🙂\"}\n") || !strings.Contains(text, CallGutter+"http://127.0.0.1/docs\n") {
		t.Errorf("the call is not shown as written, behind its gutter:\n%s", text)
	}
	p.typeLine(code)
	if r := waitResult(t, c); !r.d.Allow {
		t.Fatalf("%+v", r.d)
	}
}
