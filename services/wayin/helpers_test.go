package wayin

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/serve"
	"lnk.dev/lnk/services/harness/store"
)

const (
	testID    = "0123456789abcdef0123456789abcdef"
	testOwner = "ana"
)

// world is a real Link Harness (serve.Run, the built-in model) and a way
// in before it, on a socket in a settings folder of the test's.
type world struct {
	t      *testing.T
	cfg    *config.Config
	srv    *Server
	caller *Caller
	lim    caps.SchedulerLimits
	log    *logBuf
	dir    *os.File
	// gate, when not nil, holds every model request until it's closed.
	gate chan struct{}
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) logf(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(sprintf(f, a...) + "\n")
}
func (l *logBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// newWorld starts the harness and the way in; gated holds the model's
// answers until w.open().
func newWorld(t *testing.T, lim caps.SchedulerLimits, gated bool) *world {
	t.Helper()
	w := &world{t: t, lim: lim, log: &logBuf{}}
	if gated {
		w.gate = make(chan struct{})
	}
	bh := builtin.Handler(builtin.Options{})
	model := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if w.gate != nil {
			<-w.gate
		}
		bh.ServeHTTP(rw, r)
	}))
	t.Cleanup(model.Close)
	t.Cleanup(w.open)
	home := t.TempDir()
	ad := filepath.Join(home, "Agent")
	for _, sub := range []string{"", "instructions", "chats", "memory", "skills"} {
		if err := os.Mkdir(filepath.Join(ad, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.cfg = &config.Config{AgentID: testID, Owner: testOwner, Name: "main", Key: config.NewKey(), Port: freePort(t), AgentDir: ad,
		Model: config.Model{Format: "openai", BaseURL: model.URL + "/v1", Model: builtin.ModelName, Key: "placeholder"}}
	if err := w.cfg.Check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- serve.Run(ctx, []*config.Config{w.cfg}, "", serve.Options{}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	})
	d, err := ownerdir.Open(home, ".lnk", "agents", "main")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	w.dir = d
	if err := config.WriteBridge(int(d.Fd()), config.BridgeFor(w.cfg)); err != nil {
		t.Fatal(err)
	}
	key, err := NewKey(int(d.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	w.srv, err = New(Config{AgentID: testID, Owner: testOwner, Name: "main", Key: key, Harness: bridgeHarness{d}, Dir: d, Logf: w.log.logf,
		Limits: func() (caps.SchedulerLimits, error) { return w.lim, nil }})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(home, ".lnk", "agents", "main", SocketName)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.srv.Serve(sctx, l) }()
	t.Cleanup(func() { scancel(); <-done; w.srv.Close() })
	w.caller = &Caller{Socket: sock, AgentID: testID, Owner: testOwner, Key: key}
	// The harness is up once its proof answers.
	waitUp(t, w.cfg)
	return w
}

func (w *world) open() {
	if w.gate != nil {
		select {
		case <-w.gate:
		default:
			close(w.gate)
		}
	}
}

func waitUp(t *testing.T, c *config.Config) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if conn, err := net.Dial("tcp4", net.JoinHostPort("127.0.0.1", itoa(c.Port))); err == nil {
			conn.Close()
			return
		}
	}
	t.Fatal("the harness never listened")
}

// events is thread's log as the harness kept it.
func (w *world) events(thread string) []store.Event {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.cfg.AgentDir, "chats", thread, "events.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
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

// waitAnswered waits for thread to hold n answers.
func (w *world) waitAnswered(thread string, n int) []store.Event {
	w.t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		evs := w.events(thread)
		got := 0
		for _, e := range evs {
			if e.Kind == store.KindAnswer {
				got++
			}
		}
		if got >= n {
			return evs
		}
	}
	w.t.Fatalf("thread %s never held %d answers: %+v", thread, n, w.events(thread))
	return nil
}

// messagesFrom counts thread's messages from from.
func (w *world) messagesFrom(thread, from string) int {
	n := 0
	for _, e := range w.events(thread) {
		if e.Kind == store.KindMessage && e.From == from {
			n++
		}
	}
	return n
}

func (w *world) send(m Message) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return w.caller.Send(ctx, m)
}

var defaults = caps.SchedulerLimits{Hops: 8, PerDay: 100, Subagents: 4}

func writeBridge(t *testing.T, w *world, c *config.Config) {
	t.Helper()
	if err := config.WriteBridge(int(w.dir.Fd()), config.BridgeFor(c)); err != nil {
		t.Fatal(err)
	}
}
