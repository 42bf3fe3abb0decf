package memory_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"

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
