package endpoint

import (
	"context"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/config"
)

// echo is a Turner that answers with its agent's own words and keeps its
// own conversations: what a turn of one agent sees is only its own.
type echo struct {
	words string
	mu    sync.Mutex
	seen  map[string][]string // thread → messages
	gate  chan struct{}       // if not nil, each turn waits on it
	calls int
}

func (e *echo) Turn(ctx context.Context, m Message, onText func(string)) (int64, error) {
	e.mu.Lock()
	e.calls++
	if e.seen == nil {
		e.seen = map[string][]string{}
	}
	e.seen[m.Thread] = append(e.seen[m.Thread], m.From+"|"+m.Text)
	n := len(e.seen[m.Thread])
	gate := e.gate
	e.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	onText(e.words + ": ")
	onText(m.Text)
	return int64(2 * n), nil
}

// has keeps a conversation as a store does: once it had a turn.
func (e *echo) has(thread string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.seen[thread]
	return ok, nil
}

func (e *echo) count() int { e.mu.Lock(); defer e.mu.Unlock(); return e.calls }

type testAgent struct {
	Agent
	turn *echo
}

func newAgent(id, owner, name, words string) testAgent {
	e := &echo{words: words}
	key, _ := hex.DecodeString(config.NewKey())
	return testAgent{Agent: Agent{ID: id, Owner: owner, Name: name, Key: key, Turn: e, Has: e.has}, turn: e}
}

var (
	idA = strings.Repeat("a1", 16)
	idB = strings.Repeat("b2", 16)
)

// serve runs agents' endpoint on a loopback port and returns the port and
// the log's lines.
func serve(t *testing.T, agents ...testAgent) (int, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var logged []string
	var as []Agent
	for _, a := range agents {
		as = append(as, a.Agent)
	}
	s, err := New(as, func(f string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, strings.TrimSpace(sprintf(f, args...)))
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l.Addr().(*net.TCPAddr).Port, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), logged...) }
}

func client(t *testing.T, a testAgent, port int) *Client {
	t.Helper()
	c, err := NewClient(&config.Bridge{AgentID: a.ID, Owner: a.Owner, Name: a.Name, Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), Key: hex.EncodeToString(a.Key)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func send(t *testing.T, c *Client, thread, text string) (string, int64, error) {
	t.Helper()
	var b strings.Builder
	seq, err := c.Send(context.Background(), thread, text, func(s string) { b.WriteString(s) })
	return b.String(), seq, err
}

// One process answering two agents: each message is answered by its own
// agent, with its own key; the other's key proves nothing; each keeps its
// own conversations.
func TestTwoAgentsKeptApart(t *testing.T) {
	a, b := newAgent(idA, "ana", "alpha", "I am alpha"), newAgent(idB, "ana", "beta", "I am beta")
	port, logged := serve(t, a, b)
	if got, seq, err := send(t, client(t, a, port), "main", "hello"); err != nil || got != "I am alpha: hello" || seq != 2 {
		t.Fatalf("alpha answered %q %d, %v", got, seq, err)
	}
	if got, _, err := send(t, client(t, b, port), "main", "hi"); err != nil || got != "I am beta: hi" {
		t.Fatalf("beta answered %q, %v", got, err)
	}
	if len(a.turn.seen["main"]) != 1 || len(b.turn.seen["main"]) != 1 || a.turn.seen["main"][0] != "|hello" {
		t.Fatalf("conversations mixed: alpha %v, beta %v", a.turn.seen, b.turn.seen)
	}
	// alpha named with beta's key: refused, and no turn of either runs.
	wrong := a
	wrong.Key = b.Key
	c := client(t, wrong, port)
	// The proof still comes from alpha's key, which this client doesn't
	// hold: it refuses to send.
	if _, _, err := send(t, c, "main", "x"); !errors.Is(err, ErrNoProof) {
		t.Fatalf("with beta's key: %v, want no proof", err)
	}
	// Sent straight (no proof), beta's key on alpha is 401.
	st := post(t, port, PathMessage, map[string]string{HeaderAgent: "alpha", HeaderAgentID: idA, "Authorization": "Bearer " + hex.EncodeToString(b.Key)}, `{"thread":"main","text":"x"}`)
	if st != http.StatusUnauthorized || a.turn.count() != 1 || b.turn.count() != 1 {
		t.Fatalf("beta's key on alpha: %d, turns %d %d", st, a.turn.count(), b.turn.count())
	}
	if l := logged(); len(l) != 1 || !strings.Contains(l[0], "doesn't carry the agent's key") || strings.Contains(l[0], hex.EncodeToString(b.Key)) {
		t.Fatalf("logged %q", l)
	}
}

// A request naming an agent the process doesn't run is refused before
// its key is looked at (403), even carrying the right key of one it does.
func TestAnotherAgentRefusedFirst(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	port, logged := serve(t, a)
	for _, h := range []map[string]string{
		{HeaderAgent: "gamma"},
		{HeaderAgentID: idB},
		{HeaderAgent: "gamma", HeaderAgentID: idB},
		{HeaderAgent: "alpha", HeaderAgentID: idA, HeaderOwner: "bob"},
	} {
		h["Authorization"] = "Bearer " + hex.EncodeToString(a.Key)
		if st := post(t, port, PathMessage, h, `{"thread":"main","text":"x"}`); st != http.StatusForbidden {
			t.Errorf("%v: %d, want 403", h, st)
		}
		if st := post(t, port, PathProof, h, `{"challenge":"`+strings.Repeat("00", 32)+`"}`); st != http.StatusForbidden {
			t.Errorf("proof %v: %d, want 403", h, st)
		}
	}
	if a.turn.count() != 0 {
		t.Fatal("a turn ran")
	}
	if l := logged(); len(l) != 8 || !strings.Contains(l[0], "doesn't run") {
		t.Fatalf("logged %q", l)
	}
	// The control: alpha named as itself is answered.
	if got, _, err := send(t, client(t, a, port), "main", "ok"); err != nil || got != "alpha: ok" {
		t.Fatalf("control: %q %v", got, err)
	}
}

// An ID and a name that disagree are 404.
func TestIDNameDisagree(t *testing.T) {
	a, b := newAgent(idA, "ana", "alpha", "alpha"), newAgent(idB, "ana", "beta", "beta")
	port, _ := serve(t, a, b)
	h := map[string]string{HeaderAgent: "beta", HeaderAgentID: idA, "Authorization": "Bearer " + hex.EncodeToString(a.Key)}
	if st := post(t, port, PathMessage, h, `{"thread":"main","text":"x"}`); st != http.StatusNotFound {
		t.Fatalf("%d, want 404", st)
	}
	if a.turn.count()+b.turn.count() != 0 {
		t.Fatal("a turn ran")
	}
}

// Two owners' agents with the same ID and name stay apart: by name alone
// 409; by ID, the key decides whose; each proof is its owner's.
func TestTwoOwnersSameID(t *testing.T) {
	ana, bob := newAgent(idA, "ana", "main", "ana's main"), newAgent(idA, "bob", "main", "bob's main")
	port, _ := serve(t, ana, bob)
	h := map[string]string{HeaderAgent: "main", "Authorization": "Bearer " + hex.EncodeToString(ana.Key)}
	if st := post(t, port, PathMessage, h, `{"thread":"main","text":"x"}`); st != http.StatusConflict {
		t.Fatalf("by name alone: %d, want 409", st)
	}
	if st := post(t, port, PathProof, map[string]string{HeaderAgentID: idA}, `{"challenge":"`+strings.Repeat("00", 32)+`"}`); st != http.StatusConflict {
		t.Fatalf("a proof naming no owner: %d, want 409", st)
	}
	if got, _, err := send(t, client(t, ana, port), "main", "one"); err != nil || got != "ana's main: one" {
		t.Fatalf("ana: %q %v", got, err)
	}
	if got, _, err := send(t, client(t, bob, port), "main", "two"); err != nil || got != "bob's main: two" {
		t.Fatalf("bob: %q %v", got, err)
	}
	// By ID with no owner header, the key says whose.
	h = map[string]string{HeaderAgentID: idA, "Authorization": "Bearer " + hex.EncodeToString(bob.Key)}
	if st := post(t, port, PathMessage, h, `{"thread":"main","text":"three"}`); st != http.StatusOK {
		t.Fatalf("bob by ID: %d", st)
	}
	if len(ana.turn.seen["main"]) != 1 || len(bob.turn.seen["main"]) != 2 {
		t.Fatalf("mixed: ana %v, bob %v", ana.turn.seen, bob.turn.seen)
	}
}

// With no key, every request is 503, never answered unchecked.
func TestNoKey503(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	a.Key = nil
	port, _ := serve(t, a)
	for _, p := range []string{PathProof, PathMessage, "/"} {
		if st := post(t, port, p, map[string]string{HeaderAgent: "alpha"}, `{"thread":"main","text":"x"}`); st != http.StatusServiceUnavailable {
			t.Errorf("%s: %d, want 503", p, st)
		}
	}
	if a.turn.count() != 0 {
		t.Fatal("a turn ran")
	}
}

// A harness that can't prove it holds the key never gets the key or the
// message: a fake listener on the port answering a wrong proof sees
// only the proof's request.
func TestWrongProofNothingSent(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	for name, answer := range map[string]string{
		"wrong answer": `{"answer":"` + strings.Repeat("00", 32) + `"}`,
		"no answer":    `{}`,
		"refused":      "",
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var paths, auths []string
			l, _ := net.Listen("tcp4", "127.0.0.1:0")
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				paths, auths = append(paths, r.URL.Path), append(auths, r.Header.Get("Authorization"))
				mu.Unlock()
				if answer == "" {
					w.WriteHeader(http.StatusForbidden)
					return
				}
				w.Write([]byte(answer))
			})}
			go srv.Serve(l)
			defer srv.Close()
			_, _, err := send(t, client(t, a, l.Addr().(*net.TCPAddr).Port), "main", "secret words")
			if !errors.Is(err, ErrNoProof) {
				t.Fatalf("send: %v, want ErrNoProof", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(paths) != 1 || paths[0] != PathProof || auths[0] != "" {
				t.Fatalf("the fake saw %v (authorization %q)", paths, auths)
			}
		})
	}
}

// The proof and the message go on one connection.
func TestProofAndMessageOneConnection(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	s, _ := New([]Agent{a.Agent}, nil)
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	var mu sync.Mutex
	conns := map[string][]string{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = append(conns[r.RemoteAddr], r.URL.Path)
		mu.Unlock()
		s.Handler().ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	defer srv.Close()
	if _, _, err := send(t, client(t, a, l.Addr().(*net.TCPAddr).Port), "main", "x"); err != nil {
		t.Fatal(err)
	}
	if len(conns) != 1 {
		t.Fatalf("connections %v, want one with both", conns)
	}
	for _, ps := range conns {
		if strings.Join(ps, " ") != PathProof+" "+PathMessage {
			t.Fatalf("on the connection: %v", ps)
		}
	}
}

// An owner's message of 16 KiB is taken, one byte more refused (and a
// body past 64 KiB); another's of 1 MiB (a webhook post's cap), JSON-
// escaped at worst, is taken, one byte more refused; a thread that isn't
// a name refused; a Link-From naming no sender refused, one naming a
// schedule taken; an owner's message into a conversation not the
// owner's own (a webhook's, a stranger's, a subagent's, a teammate's)
// refused 403.
func TestMessageChecks(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	port, _ := serve(t, a)
	key := "Bearer " + hex.EncodeToString(a.Key)
	h := func(extra ...string) map[string]string {
		m := map[string]string{HeaderAgent: "alpha", HeaderAgentID: idA, "Authorization": key}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	body := func(thread, text string) string { return `{"thread":"` + thread + `","text":"` + text + `"}` }
	cases := []struct {
		name   string
		h      map[string]string
		body   string
		status int
	}{
		{"16 KiB", h(), body("main", strings.Repeat("a", MaxOwnerMessage)), 200},
		{"16 KiB and one", h(), body("main", strings.Repeat("a", MaxOwnerMessage+1)), 400},
		{"from a schedule, 20 KiB", h(HeaderFrom, "schedule:daily"), body("main", strings.Repeat("a", 20<<10)), 200},
		{"a stranger's 1 MiB, escaped at worst", h(HeaderFrom, "stranger:webhook:ci"), body("webhook:ci", strings.Repeat(`\u0001`, MaxOthersMessage)), 200},
		{"a stranger's 1 MiB and one", h(HeaderFrom, "stranger:webhook:ci"), body("webhook:ci", strings.Repeat("a", MaxOthersMessage+1)), 400},
		{"an owner's body past 64 KiB", h(), body("main", strings.Repeat(`\u0001`, 11<<10)), 400},
		{"Link-From empty", h(HeaderFrom, ""), body("main", "x"), 403},
		{"Link-From nobody", h(HeaderFrom, "nobody"), body("main", "x"), 403},
		{"thread a path", h(), body("../x", "x"), 400},
		{"thread empty", h(), body("", "x"), 400},
		{"text empty", h(), body("main", ""), 400},
		{"extra field", h(), `{"thread":"main","text":"x","as":"owner"}`, 400},
		{"two objects", h(), body("main", "x") + body("main", "y"), 400},
		{"thread twice", h(), `{"thread":"main","text":"x","thread":"../x"}`, 400},
		{"thread in another case", h(), `{"thread":"main","text":"x","Thread":"other"}`, 400},
		{"no key", map[string]string{HeaderAgent: "alpha"}, body("main", "x"), 401},
		{"the owner's, into a webhook's conversation", h(), body("webhook:ci", "x"), 403},
		{"the owner's, into a stranger's", h(), body("stranger:x", "x"), 403},
		{"the owner's, into a subagent's", h(), body("task-1", "x"), 403},
		{"the owner's, into a teammate's", h(), body("agent-0123", "x"), 403},
	}
	for _, c := range cases {
		if st := post(t, port, PathMessage, c.h, c.body); st != c.status {
			t.Errorf("%s: %d, want %d", c.name, st, c.status)
		}
	}
	if n := a.turn.count(); n != 3 {
		t.Fatalf("%d turns ran, want the three taken", n)
	}
	if got := a.turn.seen["main"][1]; !strings.HasPrefix(got, "schedule:daily|") {
		t.Fatalf("the sender was not kept: %q", got[:20])
	}
}

// A message while a turn runs in its thread waits its turn; another
// thread's does not.
func TestOneTurnPerThread(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	a.turn.gate = make(chan struct{})
	a.turn.seen = map[string][]string{"other": nil} // kept already
	port, _ := serve(t, a)
	c := client(t, a, port)
	errs := make(chan error, 3)
	go func() { _, _, err := send(t, c, "main", "first"); errs <- err }()
	waitFor(t, func() bool { return a.turn.count() == 1 })
	go func() { _, _, err := send(t, c, "main", "second"); errs <- err }()
	go func() { _, _, err := send(t, c, "other", "third"); errs <- err }()
	waitFor(t, func() bool { return a.turn.count() == 2 })
	time.Sleep(100 * time.Millisecond) // room for a wrong second turn of main to begin
	a.turn.mu.Lock()
	mainN, otherN := len(a.turn.seen["main"]), len(a.turn.seen["other"])
	a.turn.mu.Unlock()
	if mainN != 1 || otherN != 1 {
		t.Fatalf("while main's turn runs: main %d, other %d turns begun", mainN, otherN)
	}
	close(a.turn.gate)
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(a.turn.seen["main"]) != 2 {
		t.Fatal("main's second message never ran")
	}
}

// A caller that goes (Ctrl-C) ends its turn: the turn's context ends.
func TestCallerGoneEndsTurn(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	a.turn.gate = make(chan struct{}) // never opened: only the context ends the turn
	port, logged := serve(t, a)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := client(t, a, port).Send(ctx, "main", "long", nil); errc <- err }()
	waitFor(t, func() bool { return a.turn.count() == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("send: %v", err)
	}
	waitFor(t, func() bool { return len(logged()) == 1 })
	if l := logged()[0]; !strings.Contains(l, "turn failed: context canceled") {
		t.Fatalf("logged %q", l)
	}
	// The thread is free again.
	a.turn.gate = nil
	if _, _, err := send(t, client(t, a, port), "main", "again"); err != nil {
		t.Fatal(err)
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	l, err := Listen(0)
	if err == nil {
		l.Close()
		t.Fatal("port 0 taken")
	}
	probe, _ := net.Listen("tcp4", "127.0.0.1:0")
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	l, err = Listen(port)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if ip := l.Addr().(*net.TCPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("listening on %v", ip)
	}
}
