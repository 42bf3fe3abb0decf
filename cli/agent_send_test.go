package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
)

// chatTurner answers "<n>: <text>"; a message "hang" streams a first
// word, then waits for its context to end (Ctrl-C), which it records.
type chatTurner struct {
	mu       sync.Mutex
	began    chan struct{}
	canceled chan struct{}
	n        int
}

func (c *chatTurner) Turn(ctx context.Context, m endpoint.Message, onText func(string)) (int64, error) {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	if m.Text == "hang" {
		onText("thinking")
		close(c.began)
		<-ctx.Done()
		close(c.canceled)
		return 0, ctx.Err()
	}
	onText("answer " + strconv.Itoa(n) + ": " + m.Text)
	return int64(2 * n), nil
}

// chatAgent makes agent name and serves its endpoint in this process,
// with its bridge.json written as lnk agent start writes it.
func chatAgent(t *testing.T, name string, turn endpoint.Turner) (home string) {
	t.Helper()
	home = testenv.Home(t)
	if code, _, errs := runLnk(t, "agent", "create", name); code != 0 {
		t.Fatal(errs)
	}
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		t.Fatal(err)
	}
	key := config.NewKey()
	kb, _ := hex.DecodeString(key)
	k := &keeping{Turner: turn, kept: map[string]bool{}}
	srv, err := endpoint.New([]endpoint.Agent{{ID: a.ID, Owner: a.Owner, Name: a.Name, Key: kb, Turn: k, Has: k.has}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	writeBridge(t, home, name, &config.Bridge{AgentID: a.ID, Owner: a.Owner, Name: a.Name, Key: key,
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)})
	return home
}

// keeping keeps a conversation as Link Harness's store does: once a
// turn began in it.
type keeping struct {
	endpoint.Turner
	mu   sync.Mutex
	kept map[string]bool
}

func (k *keeping) Turn(ctx context.Context, m endpoint.Message, onText func(string)) (int64, error) {
	k.mu.Lock()
	k.kept[m.Thread] = true
	k.mu.Unlock()
	return k.Turner.Turn(ctx, m, onText)
}

func (k *keeping) has(thread string) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.kept[thread], nil
}

func writeBridge(t *testing.T, home, name string, b *config.Bridge) {
	t.Helper()
	d, err := ownerdir.Open(home, ".lnk", "agents", name)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := config.WriteBridge(int(d.Fd()), b); err != nil {
		t.Fatal(err)
	}
}

// TestAgentSend: the answer on stdout, --json as one object, a thread
// that isn't a name, a conversation not the owner's own (a webhook's, a
// subagent's) and a message over 16 KiB refused before anything is sent,
// an agent with no bridge.json told how to start it. A conversation the
// harness doesn't keep is refused there, with a hint naming --new, which
// starts it (the positive control); --new where it is kept is refused,
// and --new with no --thread.
func TestAgentSend(t *testing.T) {
	turn := &chatTurner{}
	chatAgent(t, "pal", turn)
	if code, out, errs := runLnk(t, "agent", "send", "pal", "hello"); code != 0 || out != "answer 1: hello\n" {
		t.Fatalf("send: exit %d, %q %s", code, out, errs)
	}
	code, out, errs := runLnk(t, "agent", "send", "pal", "--thread", "work-1", "again")
	if code != ExitRefused || !strings.Contains(errs, "conversation work-1 doesn't exist") || !strings.Contains(errs, "hint: lnk agent send pal --new --thread work-1 MESSAGE") {
		t.Fatalf("send to a conversation not kept: exit %d, %q %s", code, out, errs)
	}
	code, out, errs = runLnk(t, "agent", "send", "pal", "--json", "--new", "--thread", "work-1", "again")
	var v struct {
		Thread, Answer string
		Seq            int64
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Answer != "answer 2: again" || v.Seq != 4 || v.Thread != "work-1" {
		t.Fatalf("send --json: exit %d, %q %s", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"agent", "send", "pal", "--thread", "../x", "hi"}, ExitUsage, "--thread"},
		{[]string{"agent", "send", "pal", strings.Repeat("a", endpoint.MaxOwnerMessage+1)}, ExitRefused, "at most 16 KiB"},
		{[]string{"agent", "send", "nobody", "hi"}, ExitMissing, "no such agent"},
		{[]string{"agent", "send", "pal", "--thread", "webhook:ci", "hi"}, ExitRefused, "with webhook:ci, not the owner"},
		{[]string{"agent", "send", "pal", "--thread", "task-7", "hi"}, ExitRefused, "a subagent's"},
		{[]string{"agent", "send", "pal", "--thread", "agent-0123", "hi"}, ExitRefused, "with another agent"},
		{[]string{"agent", "send", "pal", "--new", "--thread", "work-1", "hi"}, ExitRefused, "conversation work-1 exists already"},
		{[]string{"agent", "send", "pal", "--new", "hi"}, ExitUsage, "--new starts the conversation --thread names"},
		{[]string{"agent", "chat", "pal", "--new"}, ExitUsage, "--new starts the conversation --thread names"},
	} {
		if code, _, errs := runLnk(t, c.args...); code != c.code || !strings.Contains(errs, c.want) || !strings.Contains(errs, "hint: ") {
			t.Errorf("%v: exit %d, want %d and %q:\n%s", c.args[:3], code, c.code, c.want, errs)
		}
	}
	if turn.n != 2 {
		t.Fatalf("%d turns ran, want the 2 taken", turn.n)
	}
	runLnk(t, "agent", "create", "fresh")
	if code, _, errs := runLnk(t, "agent", "send", "fresh", "hi"); code != ExitMissing || !strings.Contains(errs, "hint: lnk agent start fresh") {
		t.Fatalf("no bridge.json: exit %d\n%s", code, errs)
	}
}

// TestAgentSendRefusesWhatCantProve: a listener on the agent's port
// answering a wrong proof gets neither the key nor the message, and the
// owner is told, with what to do.
func TestAgentSendRefusesWhatCantProve(t *testing.T) {
	home := chatAgent(t, "pal", &chatTurner{})
	var mu sync.Mutex
	var seen []string
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	fake := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, 512)
		n, _ := r.Body.Read(body)
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(body[:n]))
		mu.Unlock()
		w.Write([]byte(`{"answer":"` + strings.Repeat("ab", 32) + `"}`))
	})}
	go fake.Serve(l)
	defer fake.Close()
	d, _ := ownerdir.Open(home, ".lnk", "agents", "pal")
	b, err := config.ReadBridge(int(d.Fd()))
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	b.Endpoint = "http://127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	writeBridge(t, home, "pal", b)
	code, _, errs := runLnk(t, "agent", "send", "pal", "the secret plan")
	if code != ExitRefused || !strings.Contains(errs, "did not prove") || !strings.Contains(errs, "hint: lnk agent status pal") {
		t.Fatalf("send to a fake: exit %d\n%s", code, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || !strings.HasPrefix(seen[0], endpoint.PathProof+"  ") || strings.Contains(seen[0], "secret plan") || strings.Contains(seen[0], b.Key) {
		t.Fatalf("the fake saw: %q", seen)
	}
}

// TestAgentChatCtrlCEndsTheTurn: lnk agent chat in a real terminal
// (tmux): the answer streams; Ctrl-C ends the turn running (its context
// ends in the harness), not the chat, whose next message is answered;
// Ctrl-D ends the chat.
func TestAgentChatCtrlCEndsTheTurn(t *testing.T) {
	_, err := exec.LookPath("tmux")
	testenv.Require(t, err == nil, "tmux")
	lnk := testenv.Bin(t, "lnk")
	turn := &chatTurner{began: make(chan struct{}), canceled: make(chan struct{})}
	home := chatAgent(t, "pal", turn)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v %s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	tmux("new-session", "-d", "-x", "160", "-y", "40", "env", "HOME="+home, lnk, "agent", "chat", "pal")
	screen := func() string { return tmux("capture-pane", "-p") }
	waitScreen := func(want string) {
		t.Helper()
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(screen(), want) {
				return
			}
		}
		t.Fatalf("waiting for %q on the screen:\n%s", want, screen())
	}
	waitScreen("you>")
	tmux("send-keys", "hello", "Enter")
	waitScreen("pal> answer 1: hello")
	tmux("send-keys", "hang", "Enter")
	<-turn.began
	waitScreen("thinking")
	tmux("send-keys", "C-c")
	select {
	case <-turn.canceled:
	case <-time.After(10 * time.Second):
		t.Fatalf("Ctrl-C did not end the turn:\n%s", screen())
	}
	waitScreen("the turn was ended (Ctrl-C)")
	tmux("send-keys", "after", "Enter")
	waitScreen("pal> answer 3: after")
	tmux("send-keys", "C-d")
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if exec.Command("tmux", "-S", sock, "has-session").Run() != nil {
			return // the chat ended, and the session with it
		}
	}
	t.Fatalf("Ctrl-D did not end the chat:\n%s", screen())
}

// gatedTurner holds every turn until open is closed, and counts them.
type gatedTurner struct {
	mu    sync.Mutex
	began []string
	open  chan struct{}
}

func (g *gatedTurner) Turn(ctx context.Context, m endpoint.Message, onText func(string)) (int64, error) {
	g.mu.Lock()
	g.began = append(g.began, m.Text)
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	onText("read: " + m.Text)
	return 1, nil
}

func (g *gatedTurner) turns() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.began...)
}

// TestAgentSendWaitsWhileBusy: while the agent's turn in a conversation
// runs, lnk agent send's message to it is neither refused nor run beside
// it: it waits, and is read (its turn begun and answered) once the
// running turn ends.
func TestAgentSendWaitsWhileBusy(t *testing.T) {
	g := &gatedTurner{open: make(chan struct{})}
	chatAgent(t, "pal", g)
	type result struct {
		code      int
		out, errs string
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() { c, o, e := runLnk(t, "agent", "send", "pal", "first"); first <- result{c, o, e} }()
	for end := time.Now().Add(10 * time.Second); len(g.turns()) < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the first message's turn never began")
		}
	}
	go func() { c, o, e := runLnk(t, "agent", "send", "pal", "second"); second <- result{c, o, e} }()
	time.Sleep(300 * time.Millisecond) // room for a wrong refusal, or a second turn begun beside the first
	select {
	case r := <-second:
		t.Fatalf("the second message did not wait: exit %d %q %s", r.code, r.out, r.errs)
	default:
	}
	if got := g.turns(); len(got) != 1 {
		t.Fatalf("turns begun while the first runs: %q", got)
	}
	close(g.open)
	for _, c := range []struct {
		ch   chan result
		want string
	}{{first, "read: first\n"}, {second, "read: second\n"}} {
		r := <-c.ch
		if r.code != 0 || r.out != c.want {
			t.Fatalf("exit %d %q %s, want %q", r.code, r.out, r.errs, c.want)
		}
	}
}

// TestAgentChatNew: lnk agent chat into a conversation the harness
// doesn't keep ends at its first message, refused with a hint naming
// --new; with --new, its first message starts it and the next goes on in
// it (the positive control).
func TestAgentChatNew(t *testing.T) {
	turn := &chatTurner{}
	home := chatAgent(t, "pal", turn)
	cl, err := agentClient(home, "pal", "work-1", "")
	if err != nil {
		t.Fatal(err)
	}
	var out, errw strings.Builder
	err = chat(context.Background(), cl, "pal", "work-1", false, strings.NewReader("one\ntwo\n"), &out, &errw)
	if err == nil || !strings.Contains(Render(err), "hint: lnk agent send pal --new --thread work-1 MESSAGE") || turn.n != 0 {
		t.Fatalf("chat into no conversation: %v, %d turns\n%s", err, turn.n, errw.String())
	}
	out.Reset()
	if err := chat(context.Background(), cl, "pal", "work-1", true, strings.NewReader("one\ntwo\n"), &out, &errw); err != nil {
		t.Fatalf("chat --new: %v\n%s", err, errw.String())
	}
	if !strings.Contains(out.String(), "answer 1: one") || !strings.Contains(out.String(), "answer 2: two") {
		t.Fatalf("chat --new answered:\n%s\n%s", out.String(), errw.String())
	}
}

// hostileTurner answers with what a model led by a web page could write:
// an OSC 52 clipboard write, a screen clear, a title change in 8-bit
// form, a bidi override and a zero-width space, each escape cut across
// two pieces of the stream, around ordinary text (accents, emoji, a
// tab, a newline) that must show as written.
type hostileTurner struct{}

func (hostileTurner) Turn(ctx context.Context, m endpoint.Message, onText func(string)) (int64, error) {
	for _, s := range []string{"héllo 🙂 ", "\x1b]52;c;", "cm0gLXJmIH4=\x07", "done\x1b[", "2J\tnext\n", "\u009d0;pwned\u009c", "ok\u202eevil\u200b.", "\x1b"} {
		onText(s)
	}
	return 2, nil
}

// hostileAnswerShown is hostileTurner's answer as the owner's terminal
// must show it.
const hostileAnswerShown = "héllo 🙂 done\tnext\nokevil.\n"

// TestAgentSendCleansTheAnswer: the agent's answer (text a model, a tool
// or a page it read controls) reaches the owner's terminal with each
// escape sequence removed whole, even cut across pieces of the stream,
// and bidi and zero-width characters removed; accents, emoji, tabs and
// newlines show as written (the positive control), in lnk agent send and
// lnk agent chat alike.
func TestAgentSendCleansTheAnswer(t *testing.T) {
	home := chatAgent(t, "pal", hostileTurner{})
	code, out, errs := runLnk(t, "agent", "send", "pal", "hi")
	if code != 0 || out != hostileAnswerShown {
		t.Fatalf("send: exit %d, printed %q, want %q\n%s", code, out, hostileAnswerShown, errs)
	}
	code, out, errs = runLnk(t, "agent", "send", "pal", "--json", "hi")
	var v struct{ Answer string }
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Answer+"\n" != hostileAnswerShown || strings.ContainsAny(out, "\u009d\u009c\u202e\u200b") {
		t.Fatalf("send --json: exit %d, printed %q\n%s", code, out, errs)
	}
	cl, err := agentClient(home, "pal", "main", "")
	if err != nil {
		t.Fatal(err)
	}
	var chatOut, errw strings.Builder
	if err := chat(context.Background(), cl, "pal", "main", false, strings.NewReader("hi\n"), &chatOut, &errw); err != nil {
		t.Fatalf("chat: %v\n%s", err, errw.String())
	}
	if want := "pal> " + hostileAnswerShown; chatOut.String() != want {
		t.Fatalf("chat printed %q, want %q", chatOut.String(), want)
	}
}
