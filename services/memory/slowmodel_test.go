package memory_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/memory/embed"
)

// A model that stalls while it computes the documents' vectors holds no
// search: while the refresh waits on it, the index's lock is free and a
// search is answered (the query's own embedding passes); once the model
// answers, the vectors are written and the document is found by meaning.
// Ordered by channels only: the model says when it holds the call, and
// answers when the test lets it.
func TestSlowModelHoldsNoSearch(t *testing.T) {
	d := newDirs(t, "ada")
	write(t, d.home+"/memory/fruit.md", "A kumquat tree grows by the door.\n")
	a, _ := openAgent(t, d)

	stalled, release := make(chan struct{}), make(chan struct{})
	var stallOnce, releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	model := builtin.Handler(builtin.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("kumquat tree")) {
			// The document's chunk: held until the test lets it go.
			stallOnce.Do(func() { close(stalled) })
			<-release
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		model.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c, err := embed.New(netip.MustParseAddrPort(ln.Addr().String()), embed.Retry, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Start(context.Background(), embed.StartWait) {
		t.Fatal("the model never answered")
	}
	a.Embed = func(texts []string) ([][]float32, error) { return c.Embed(context.Background(), texts) }

	refreshed := make(chan error, 1)
	go func() { refreshed <- a.Refresh() }()
	<-stalled
	if a.IndexBusy() {
		t.Fatal("the index's lock is held while the model computes the documents' vectors")
	}
	// A second refresh meanwhile leaves the chunks to the pass running,
	// and a search by words is answered while the model still stalls.
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "kumquat"); !slices.Contains(got, "memory/fruit.md") {
		t.Fatalf("by words, while the model stalls: %v", got)
	}
	if got := mustSearch(t, a, "kumquats"); len(got) != 0 {
		t.Fatalf("found by meaning before the vectors were written: %v", got)
	}
	letGo()
	if err := <-refreshed; err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "kumquats"); !slices.Contains(got, "memory/fruit.md") {
		t.Fatalf("by meaning, once the model answered: %v", got)
	}
}

// A model that stalls on a search's query is waited for no longer than
// the client's query wait (security.txt: at most 10 s; shortened here):
// the search is answered by words alone while the model still holds the
// call, the reason logged is that wait, and the model is then down until
// its retry, so the next search does not ask it at all. Positive
// control: before the stall the same query finds the note by meaning.
// Ordered by channels: the model says when it holds the query, and lets
// go only when the test ends.
func TestStalledQueryFallsBackToWords(t *testing.T) {
	d := newDirs(t, "ada")
	write(t, d.home+"/memory/fruit.md", "A kumquat tree grows by the door.\n")
	a, _ := openAgent(t, d)

	var stall atomic.Bool
	var asked atomic.Int32
	stalled, release := make(chan struct{}), make(chan struct{})
	var stallOnce sync.Once
	t.Cleanup(func() { close(release) })
	model := builtin.Handler(builtin.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if stall.Load() {
			asked.Add(1)
			stallOnce.Do(func() { close(stalled) })
			<-release
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		model.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var logged sync.Mutex
	var lines []string
	c, err := embed.New(netip.MustParseAddrPort(ln.Addr().String()), embed.Retry, func(format string, args ...any) {
		logged.Lock()
		defer logged.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	})
	if err != nil {
		t.Fatal(err)
	}
	c.QueryWait = 50 * time.Millisecond
	if !c.Start(context.Background(), embed.StartWait) {
		t.Fatal("the model never answered")
	}
	a.Embed = func(texts []string) ([][]float32, error) { return c.Embed(context.Background(), texts) }
	a.EmbedQuery = func(q string) ([]float32, error) { return c.EmbedQuery(context.Background(), q) }
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "kumquats"); !slices.Contains(got, "memory/fruit.md") {
		t.Fatalf("by meaning, the model answering: %v", got)
	}

	stall.Store(true)
	if got := mustSearch(t, a, "kumquats"); len(got) != 0 {
		t.Fatalf("found by meaning with the model stalled: %v", got)
	}
	select {
	case <-stalled:
	default:
		t.Fatal("the search never asked the model")
	}
	if c.Up() {
		t.Fatal("the model is still up after a query it did not answer")
	}
	logged.Lock()
	log := strings.Join(lines, "\n")
	logged.Unlock()
	if !strings.Contains(log, "no answer to a search's query within 50ms") {
		t.Fatalf("the model's fall is not logged with the query's wait:\n%s", log)
	}
	// Down until its retry: words alone, the model not asked again.
	if got := mustSearch(t, a, "kumquat"); !slices.Contains(got, "memory/fruit.md") {
		t.Fatalf("by words with the model down: %v", got)
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("the model was asked %d times while down, want the one stalled query", n)
	}
}
