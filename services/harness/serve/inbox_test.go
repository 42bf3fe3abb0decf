package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/store"
)

// gate is the real built-in model's client, holding a request whose last
// message says HOLD until release is closed (entered says it is held),
// and counting the requests each text was last in.
type gate struct {
	model.Client
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	asked   []string
}

func (g *gate) Complete(ctx context.Context, r model.Request, onText func(string)) (model.Response, error) {
	last := ""
	if n := len(r.Messages); n > 0 {
		last = r.Messages[n-1].Text
	}
	g.mu.Lock()
	g.asked = append(g.asked, last)
	g.mu.Unlock()
	if strings.Contains(last, "HOLD") {
		g.entered <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
			return model.Response{}, ctx.Err()
		}
	}
	return g.Client.Complete(ctx, r, onText)
}

// times is how many requests ended with a message holding text.
func (g *gate) times(text string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, a := range g.asked {
		if strings.Contains(a, text) {
			n++
		}
	}
	return n
}

const hookThread, hookFrom = "webhook:ci", "stranger:webhook:ci"

// inboxHarness runs one agent's harness (runWith: the real endpoint,
// store, turn and built-in model behind g) on a free loopback port until
// the test ends or stop is called.
func inboxHarness(t *testing.T, dir string, g *gate) (c *config.Config, cl *endpoint.Client, stop func()) {
	t.Helper()
	return inboxHarnessWith(t, dir, g, Options{})
}

// inboxHarnessWith is inboxHarness with o's options.
func inboxHarnessWith(t *testing.T, dir string, g *gate, o Options) (c *config.Config, cl *endpoint.Client, stop func()) {
	t.Helper()
	srv := httptest.NewServer(builtin.Handler(builtin.Options{}))
	t.Cleanup(srv.Close)
	m, err := model.New(model.Endpoint{Format: "openai", BaseURL: srv.URL + "/v1", Key: "placeholder", Model: builtin.ModelName})
	if err != nil {
		t.Fatal(err)
	}
	g.Client = m
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c = &config.Config{AgentID: strings.Repeat("d4", 16), Owner: "ana", Name: "main", Key: config.NewKey(), Port: port, AgentDir: dir,
		Model: config.Model{Format: "openai", BaseURL: srv.URL + "/v1", Model: builtin.ModelName, Key: "placeholder"}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- runWith(ctx, []*config.Config{c}, "", o, func(*config.Config) model.Client { return g })
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-errc; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	if cl, err = endpoint.NewClient(config.BridgeFor(c)); err != nil {
		t.Fatal(err)
	}
	return c, cl, stop
}

// send sends a stranger's message, trying again while the harness is
// starting (refused connections only).
func send(t *testing.T, cl *endpoint.Client, text string, onTaken func()) (int64, error) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		seq, err := cl.SendMessage(context.Background(), endpoint.Message{Thread: hookThread, Text: text, From: hookFrom, Hops: 1}, onTaken, nil)
		var re *endpoint.RefusedError
		if err == nil || errors.As(err, &re) || time.Now().After(end) {
			return seq, err
		}
	}
}

// messages is thread's message events' texts and inbox numbers, read
// from the log; it waits (while the harness runs what is queued) until
// want are there or 30 s passed.
func messages(t *testing.T, dir string, want int) []store.Event {
	t.Helper()
	var out []store.Event
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out = nil
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := store.OpenChats(f)
		if err == nil {
			var v *store.Conversation
			if v, err = ch.Open(hookThread, store.Options{}); err == nil {
				evs, eerr := v.Events()
				err = eerr
				answers := 0
				for _, e := range evs {
					switch e.Kind {
					case store.KindMessage:
						out = append(out, e)
					case store.KindAnswer:
						answers++
					}
				}
				if answers < len(out) {
					out = out[:answers] // a turn still running
				}
				v.Close()
			}
			ch.Close()
		}
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(out) >= want || time.Now().After(end) {
			return out
		}
	}
}

// pending is the inbox's messages not yet run, read anew.
func pending(t *testing.T, dir string) []store.Queued {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ch, err := store.OpenChats(f)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	p, err := ch.Pending(hookThread)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestABusyConversationQueuesAndAnswersTakenAtOnce: while a stranger's
// conversation is in a turn (held by the model until the test lets it
// go), a second message to it is answered taken before that turn ends,
// kept on the disk, and run after it, once, in order, with no tools (a
// stranger's). Ordering by channels: the second send returns while the
// first turn is still held.
func TestABusyConversationQueuesAndAnswersTakenAtOnce(t *testing.T) {
	dir := agentDir(t, "words")
	g := &gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
	_, cl, _ := inboxHarness(t, dir, g)
	first := make(chan error, 1)
	go func() { _, err := send(t, cl, "HOLD the first", nil); first <- err }()
	<-g.entered // the first turn is running, held
	type result struct {
		seq   int64
		err   error
		taken bool
	}
	second := make(chan result, 1)
	go func() {
		taken := false
		seq, err := send(t, cl, "the second", func() { taken = true })
		second <- result{seq, err, taken}
	}()
	var r result
	select {
	case r = <-second:
	case <-time.After(time.Minute): // a guard against hanging, not a measure: the held turn never ends on its own
		close(g.release)
		t.Fatal("the second message waited for the first's turn to end")
	}
	seq, err, taken := r.seq, r.err, r.taken
	if err != nil || !taken || seq != 0 {
		t.Fatalf("the second message, its conversation busy: taken %v, seq %d, %v", taken, seq, err)
	}
	select {
	case err := <-first:
		t.Fatalf("the first turn ended before it was let go: %v", err)
	default:
	}
	if p := pending(t, dir); len(p) != 1 || p[0].Text != "the second" || p[0].From != hookFrom || p[0].Tools == nil || len(p[0].Tools) != 0 || p[0].Hops != 1 {
		t.Fatalf("the inbox holds %+v", p)
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	ms := messages(t, dir, 2)
	if len(ms) != 2 || ms[0].Text != "HOLD the first" || ms[0].Queued != 0 || ms[1].Text != "the second" || ms[1].Queued == 0 || ms[1].From != hookFrom {
		t.Fatalf("the conversation's messages: %+v", ms)
	}
	if n := g.times("the second"); n != 1 {
		t.Errorf("the queued message was run %d times", n)
	}
	if p := pending(t, dir); len(p) != 0 {
		t.Errorf("left in the inbox after its turn: %+v", p)
	}
}

// TestAFullInboxRefuses: with the conversation busy, MaxQueuedMessages
// messages are taken (the positive control) and the next is refused 503,
// kept nowhere; once let go, the taken ones run in the order they came.
func TestAFullInboxRefuses(t *testing.T) {
	dir := agentDir(t, "words")
	g := &gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
	_, cl, _ := inboxHarness(t, dir, g)
	first := make(chan error, 1)
	go func() { _, err := send(t, cl, "HOLD the first", nil); first <- err }()
	<-g.entered
	for i := 0; i < store.MaxQueuedMessages; i++ {
		if _, err := send(t, cl, "queued "+strconv.Itoa(i), nil); err != nil {
			t.Fatalf("message %d, under the cap: %v", i, err)
		}
	}
	_, err := send(t, cl, "one too many", nil)
	var re *endpoint.RefusedError
	if !errors.As(err, &re) || re.Status != 503 || !strings.Contains(re.Reason, "inbox is full") {
		t.Fatalf("past the cap: %v", err)
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	ms := messages(t, dir, 1+store.MaxQueuedMessages)
	if len(ms) != 1+store.MaxQueuedMessages {
		t.Fatalf("%d messages ran", len(ms))
	}
	for i, m := range ms[1:] {
		if m.Text != "queued "+strconv.Itoa(i) {
			t.Fatalf("message %d ran as %q: out of order", i, m.Text)
		}
	}
	if g.times("one too many") != 0 {
		t.Error("the refused message reached the model")
	}
}

// TestARestartRunsWhatWasQueuedOnce: what a harness stopped with in an
// inbox is run by the next start, once. Message a's turn wrote its event
// (the harness killed between the turn and its done mark); b's never
// ran (killed before its turn). The next start marks a without a turn
// and runs b; a start after that runs neither again.
func TestARestartRunsWhatWasQueuedOnce(t *testing.T) {
	dir := agentDir(t, "words")
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := store.OpenChats(f)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ch.Queue(hookThread, store.Queued{From: hookFrom, Hops: 1, Tools: []string{}, Text: "message a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Queue(hookThread, store.Queued{From: hookFrom, Hops: 1, Tools: []string{}, Text: "message b"}); err != nil {
		t.Fatal(err)
	}
	v, err := ch.Open(hookThread, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Append(&store.Event{Kind: store.KindMessage, From: hookFrom, Text: "message a", Hops: 1, Queued: a}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Append(&store.Event{Kind: store.KindAnswer, Text: "answered before the kill"}); err != nil {
		t.Fatal(err)
	}
	v.Close()
	ch.Close()
	f.Close()
	for start := 0; start < 2; start++ {
		g := &gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
		_, _, stop := inboxHarness(t, dir, g)
		ms := messages(t, dir, 2)
		for end := time.Now().Add(30 * time.Second); len(pending(t, dir)) > 0 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		}
		stop()
		ms = messages(t, dir, 2)
		if len(ms) != 2 || ms[0].Text != "message a" || ms[1].Text != "message b" {
			t.Fatalf("start %d: the conversation's messages: %+v", start, ms)
		}
		if g.times("message a") != 0 || g.times("message b") != 1-start {
			t.Fatalf("start %d: a asked %d times, b %d", start, g.times("message a"), g.times("message b"))
		}
		if p := pending(t, dir); len(p) != 0 {
			t.Fatalf("start %d: left in the inbox: %+v", start, p)
		}
	}
}

// TestAStopMidQueuedTurnRunsItNoMore: a harness stopped while a queued
// message's turn runs (its event written, its done mark not) leaves it
// in the inbox; the next start finds its event and marks it done without
// a second turn.
func TestAStopMidQueuedTurnRunsItNoMore(t *testing.T) {
	dir := agentDir(t, "words")
	g := &gate{entered: make(chan struct{}, 1), release: make(chan struct{}, 1)}
	_, cl, stop := inboxHarness(t, dir, g)
	first := make(chan error, 1)
	go func() { _, err := send(t, cl, "HOLD one", nil); first <- err }()
	<-g.entered
	if _, err := send(t, cl, "HOLD two", nil); err != nil {
		t.Fatal(err)
	}
	g.release <- struct{}{} // the first turn goes on; the queued one is held next
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	<-g.entered // the queued turn is running: its event is written
	stop()
	if p := pending(t, dir); len(p) != 1 || p[0].Text != "HOLD two" {
		t.Fatalf("stopped mid-turn, the inbox holds %+v", p)
	}
	g2 := &gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
	_, _, stop2 := inboxHarness(t, dir, g2)
	for end := time.Now().Add(30 * time.Second); len(pending(t, dir)) > 0 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	stop2()
	if p := pending(t, dir); len(p) != 0 {
		t.Fatalf("after the next start, left in the inbox: %+v", p)
	}
	if n := g2.times("HOLD two"); n != 0 {
		t.Fatalf("the next start ran the queued message again (%d times)", n)
	}
}

// TestAnUnreadableInboxRefuses: a conversation whose inbox holds what is
// not the inbox's takes no message from others (503, never run ahead of
// what it may hold, never "nothing queued"); another conversation beside
// it (the positive control) takes one.
func TestAnUnreadableInboxRefuses(t *testing.T) {
	dir := agentDir(t, "words")
	if err := os.MkdirAll(filepath.Join(dir, "chats", hookThread), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chats", hookThread, "inbox.jsonl"), []byte("not the inbox's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := &gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
	_, cl, _ := inboxHarness(t, dir, g)
	_, err := send(t, cl, "hello", nil)
	var re *endpoint.RefusedError
	if !errors.As(err, &re) || re.Status != 503 {
		t.Fatalf("a message to a conversation whose inbox can't be read: %v", err)
	}
	if g.times("hello") != 0 {
		t.Fatal("it reached the model")
	}
	if _, err := cl.SendMessage(context.Background(), endpoint.Message{Thread: "webhook:other", Text: "beside it", From: "stranger:webhook:other"}, nil, nil); err != nil {
		t.Fatalf("the positive control: %v", err)
	}
}

// TestAQueuedTurnPastItsLimitEnds: a queued message's turn gets the
// limit a message from others' turn taken at once has (Options.TurnLimit
// here, endpoint.OthersTurnLimit when 0): one held by the model past it
// is ended, its error said in the log once with the limit, marked done,
// never run again, and the next queued message still runs and is
// answered. The first turn, let go within its limit, is answered (the
// positive control). Ordering by channels; the limit is what ends the
// held turn, nothing here measures it.
func TestAQueuedTurnPastItsLimitEnds(t *testing.T) {
	dir := agentDir(t, "words")
	g := &gate{entered: make(chan struct{}, 1), release: make(chan struct{}, 1)}
	var mu sync.Mutex
	var logged strings.Builder
	logf := func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged.WriteString(strings.TrimSpace(fmt.Sprintf(f, a...)) + "\n")
	}
	const limit = 5 * time.Second
	_, cl, _ := inboxHarnessWith(t, dir, g, Options{TurnLimit: limit, Logf: logf})
	first := make(chan error, 1)
	go func() { _, err := send(t, cl, "HOLD one", nil); first <- err }()
	<-g.entered
	for _, text := range []string{"HOLD two", "three"} {
		if _, err := send(t, cl, text, nil); err != nil {
			t.Fatalf("%q, queued: %v", text, err)
		}
	}
	g.release <- struct{}{} // the first turn goes on; the queued one is held past its limit
	if err := <-first; err != nil {
		t.Fatalf("the first turn: %v", err)
	}
	<-g.entered
	var evs []store.Event
	var err error
	for end := time.Now().Add(10 * limit); ; time.Sleep(50 * time.Millisecond) {
		evs, err = events(t, dir)
		if n := len(evs); err == nil && n > 0 && evs[n-1].Kind == store.KindAnswer && g.times("three") > 0 || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the conversation stayed in the held turn: %v", err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind+":"+e.Text)
	}
	got := strings.Join(kinds, "|")
	if !strings.HasPrefix(got, "message:HOLD one|answer:") || !strings.Contains(got, "|message:HOLD two|message:three|answer:") {
		t.Fatalf("the conversation: %s", got)
	}
	mu.Lock()
	log := logged.String()
	mu.Unlock()
	if strings.Count(log, endpoint.TurnPastLimit(limit)) != 1 || !strings.Contains(log, "from "+hookFrom) {
		t.Fatalf("the log:\n%s", log)
	}
	for end := time.Now().Add(30 * time.Second); len(pending(t, dir)) > 0 && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	if p := pending(t, dir); len(p) != 0 {
		t.Fatalf("left in the inbox: %+v", p)
	}
	if g.times("HOLD two") != 1 || g.times("three") != 1 {
		t.Fatalf("HOLD two asked %d times, three %d", g.times("HOLD two"), g.times("three"))
	}
}

// events is the stranger's conversation's events, read anew; an error
// while a turn holds it (its writer's lock) past a second.
func events(t *testing.T, dir string) ([]store.Event, error) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ch, err := store.OpenChats(f)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	v, err := ch.Open(hookThread, store.Options{LockWait: time.Second})
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return v.Events()
}
