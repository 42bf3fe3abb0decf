package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/serve"
	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/wayin"
)

// agentRunning is agent ada with a real Link Harness (the built-in
// model) and its real way in open, as its supervisor runs them.
type agentRunning struct {
	t     *testing.T
	home  string
	chats string
	cfg   *config.Config
	w     *wayin.Running
	mu    sync.Mutex
	log   strings.Builder
	// held says a model request holding HOLD is held, until release.
	held, release chan struct{}
	hands         atomic.Int64 // the runner's calls of Hand
}

func running(t *testing.T, spec string) *agentRunning {
	t.Helper()
	r := prepare(t, spec)
	r.startHarness()
	return r
}

// prepare is running without the harness: its bridge.json written and
// the way in open, the harness started by startHarness. The built-in
// model behind it holds a request whose last words hold HOLD (held)
// until release is closed.
func prepare(t *testing.T, spec string) *agentRunning {
	t.Helper()
	home, ag := newAgent(t, spec)
	r := &agentRunning{t: t, home: home, held: make(chan struct{}, 16), release: make(chan struct{})}
	builtinModel := builtin.Handler(builtin.Options{})
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		body, _ := io.ReadAll(q.Body)
		var req struct {
			Messages []struct {
				Content any `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(body, &req)
		if n := len(req.Messages); n > 0 && strings.Contains(sprintf("%v", req.Messages[n-1].Content), "HOLD") {
			r.held <- struct{}{}
			select {
			case <-r.release:
			case <-q.Context().Done():
				return
			}
		}
		q.Body = io.NopCloser(bytes.NewReader(body))
		builtinModel.ServeHTTP(w, q)
	}))
	t.Cleanup(model.Close)
	ad := filepath.Join(t.TempDir(), "Agent")
	for _, sub := range []string{"", "instructions", "chats", "memory", "skills"} {
		if err := os.Mkdir(filepath.Join(ad, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r.chats = filepath.Join(ad, "chats")
	l, _ := net.Listen("tcp4", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c := &config.Config{AgentID: ag.ID, Owner: ag.Owner, Name: ag.Name, Key: config.NewKey(), Port: port, AgentDir: ad,
		Model: config.Model{Format: "openai", BaseURL: model.URL + "/v1", Model: builtin.ModelName, Key: "placeholder"}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	r.cfg = c
	d, err := ownerdir.Open(home, ".lnk", "agents", ag.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := config.WriteBridge(int(d.Fd()), config.BridgeFor(c)); err != nil {
		t.Fatal(err)
	}
	r.w, err = wayin.Open(home, ag, r.logf)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.w.Run(wctx) }()
	t.Cleanup(func() { wcancel(); <-done; r.w.Close() })
	return r
}

// startHarness starts the agent's real Link Harness, stopped when the
// test ends.
func (r *agentRunning) startHarness() {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- serve.Run(ctx, []*config.Config{r.cfg}, "", serve.Options{}) }()
	r.t.Cleanup(func() {
		select {
		case <-r.release:
		default:
			close(r.release)
		}
		cancel()
		<-errc
	})
}

func (r *agentRunning) logf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log.WriteString(strings.TrimSpace(sprintf(f, a...)) + "\n")
}

func (r *agentRunning) logged() string { r.mu.Lock(); defer r.mu.Unlock(); return r.log.String() }

// runner is the supervisor's runner, at a clock of the test's.
func (r *agentRunning) runner(now func() time.Time) (*Runner, *Store) {
	st, err := OpenStore(r.home, "ada")
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { st.Close() })
	return &Runner{Store: st, Zone: time.Local, Now: now, Logf: r.logf,
		Hand: func(ctx context.Context, m Message) error {
			r.hands.Add(1)
			_, err := r.w.Hand(ctx, wayin.Message{From: m.From, Thread: m.Thread, Text: m.Text, Hops: m.Hops})
			return err
		}}, st
}

func (r *agentRunning) events(thread string) []store.Event {
	b, err := os.ReadFile(filepath.Join(r.chats, thread, "events.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	var out []store.Event
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e store.Event
		if json.Unmarshal([]byte(l), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

func (r *agentRunning) waitAnswers(thread string, n int) []store.Event {
	r.t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		got := 0
		for _, e := range r.events(thread) {
			if e.Kind == store.KindAnswer {
				got++
			}
		}
		if got >= n {
			return r.events(thread)
		}
	}
	r.t.Fatalf("%s never held %d answers: %+v", thread, n, r.events(thread))
	return nil
}

func job(thread, text string, hops int, at time.Time) *Job {
	return &Job{ID: newID(), Thread: thread, Hops: hops, Text: text, At: at.UTC(), Next: at.UTC(), Created: time.Now().UTC()}
}

// TestScheduleFiresAndIsAnswered: a job due fires through the way in as
// a message from schedule:<id> at its hops, the agent answers it in the
// job's own conversation, and the one-off job is gone; one not due yet
// stays.
func TestScheduleFiresAndIsAnswered(t *testing.T) {
	r := running(t, "")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now.Add(5 * time.Minute) })
	due, later := job("main", "time to stretch", 1, now.Add(4*time.Minute)), job("main", "later", 1, now.Add(time.Hour))
	st.Write(due)
	st.Write(later)
	next, err := run.Fire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	evs := r.waitAnswers("main", 1)
	var from []string
	for _, e := range evs {
		if e.Kind == store.KindMessage {
			from = append(from, e.From)
			if e.Hops != 1 || !strings.Contains(e.Text, "time to stretch") {
				t.Errorf("the firing kept as %+v", e)
			}
		}
	}
	if len(from) != 1 || from[0] != "schedule:"+due.ID {
		t.Fatalf("the conversation's messages are from %v", from)
	}
	jobs, _ := st.List()
	if len(jobs) != 1 || jobs[0].ID != later.ID || !next.Equal(later.Next) {
		t.Fatalf("left %+v, next %v", jobs, next)
	}
}

// TestHop9Refused: a job whose firing would be hop 9 ([tool.scheduler]
// hops = 8) is refused at the way in, reaches no conversation, and is
// dropped, the refusal logged; hop 8's fires.
func TestHop9Refused(t *testing.T) {
	r := running(t, "")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now })
	st.Write(job("main", "nine", 9, now.Add(-time.Second)))
	if _, err := run.Fire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.logged(), "hop 9 is past the agent's cap ([tool.scheduler] hops = 8)") {
		t.Fatalf("not refused: %s", r.logged())
	}
	if jobs, _ := st.List(); len(jobs) != 0 || r.events("main") != nil {
		t.Fatalf("a refused firing stayed or reached the agent: %+v", jobs)
	}
	st.Write(job("main", "eight", 8, now.Add(-time.Second)))
	run.Fire(context.Background())
	r.waitAnswers("main", 1)
}

// TestPerDayEnforced: with [tool.scheduler] per_day = 2 in the agent's
// spec, a third firing in a UTC day is refused; a recurring job goes on
// to its next time, a burst of missed firings is one.
func TestPerDayEnforced(t *testing.T) {
	r := running(t, "[tool.scheduler]\nper_day = 2\n")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now })
	for i := 0; i < 3; i++ {
		st.Write(job("main", "once "+itoa(i), 1, now.Add(-time.Duration(3-i)*time.Second)))
	}
	run.Fire(context.Background())
	r.waitAnswers("main", 2)
	if !strings.Contains(r.logged(), "2 messages from the agent's schedules and subagents taken today (UTC), the most a day ([tool.scheduler] per_day = 2)") {
		t.Fatalf("the third was not refused: %s", r.logged())
	}
	time.Sleep(200 * time.Millisecond)
	n := 0
	for _, e := range r.events("main") {
		if e.Kind == store.KindMessage {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d firings reached the agent, want 2", n)
	}
}

// TestMissedRecurringFiresOnce: a recurring job whose firings were
// missed for a day (the machine off) fires once, saying it is late, and
// its next time is its first after now.
func TestMissedRecurringFiresOnce(t *testing.T) {
	r := running(t, "")
	now := time.Now()
	run, st := r.runner(func() time.Time { return now })
	j := job("main", "every minute", 1, now.Add(-24*time.Hour))
	j.At, j.Cron = time.Time{}, "* * * * *"
	if err := st.Write(j); err != nil {
		t.Fatal(err)
	}
	run.Fire(context.Background())
	evs := r.waitAnswers("main", 1)
	n := 0
	for _, e := range evs {
		if e.Kind == store.KindMessage {
			n++
			if !strings.Contains(e.Text, "(late by 24h0m0s") {
				t.Errorf("the late firing doesn't say so: %q", e.Text)
			}
		}
	}
	jobs, _ := st.List()
	if n != 1 || len(jobs) != 1 || !jobs[0].Next.After(now) || jobs[0].Next.Sub(now) > time.Minute {
		t.Fatalf("%d firings; the job now %+v", n, jobs)
	}
}
