package memory_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/memory"
	"lnk.dev/lnk/services/memory/embed"
)

// builtinModel serves the built-in model on a loopback port until the
// returned stop; its address stays free for serving it again.
func builtinModel(t *testing.T, addr string) (netip.AddrPort, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: builtin.Handler(builtin.Options{})}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return netip.MustParseAddrPort(ln.Addr().String()), func() { s.Close() }
}

func withModel(t *testing.T, a *memory.Agent, ap netip.AddrPort, retry time.Duration) *embed.Client {
	c, err := embed.New(ap, retry, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	c.Start(context.Background(), embed.StartWait)
	a.Embed = func(texts []string) ([][]float32, error) { return c.Embed(context.Background(), texts) }
	return c
}

// With the built-in model answering, a search finds a document sharing
// no word with the query (kumquats / kumquat: the built-in embedding's
// word pieces), which words alone do not; with the model gone mid-run,
// search falls back to words, and after the retry meaning is back.
func TestSearchByMeaningAndBack(t *testing.T) {
	d := newDirs(t, "ada")
	write(t, d.home+"/memory/fruit.md", "A kumquat tree grows by the door.\n")
	write(t, d.home+"/memory/other.md", "Zebra xylophone quartet.\n")
	a, _ := openAgent(t, d)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	// Words alone: no document holds the word "kumquats".
	if got := mustSearch(t, a, "kumquats"); len(got) != 0 {
		t.Fatalf("by words: %v", got)
	}
	ap, stop := builtinModel(t, "127.0.0.1:0")
	const retry = 400 * time.Millisecond
	c := withModel(t, a, ap, retry)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "kumquats"); !slices.Equal(got, []string{"memory/fruit.md"}) {
		t.Fatalf("by meaning: %v", got)
	}
	// Both lists: a word match stays found.
	if got := mustSearch(t, a, "zebra"); !slices.Equal(got, []string{"memory/other.md"}) {
		t.Errorf("zebra: %v", got)
	}
	stop()
	if got := mustSearch(t, a, "kumquats"); len(got) != 0 || c.Up() {
		t.Fatalf("with the model gone: %v up=%v", got, c.Up())
	}
	if got := mustSearch(t, a, "zebra"); !slices.Equal(got, []string{"memory/other.md"}) {
		t.Errorf("by words with the model gone: %v", got)
	}
	builtinModel(t, ap.String())
	time.Sleep(retry + 100*time.Millisecond)
	if got := mustSearch(t, a, "kumquats"); !slices.Equal(got, []string{"memory/fruit.md"}) {
		t.Fatalf("after the retry: %v", got)
	}
}

// A chunk indexed while the model was down gets its vector at the next
// refresh once it answers.
func TestVectorsFilledWhenTheModelAnswers(t *testing.T) {
	d := newDirs(t, "ada")
	write(t, d.home+"/memory/fruit.md", "A kumquat tree grows by the door.\n")
	a, _ := openAgent(t, d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort(ln.Addr().String())
	ln.Close()
	const retry = 300 * time.Millisecond
	c, _ := embed.New(ap, retry, t.Logf)
	a.Embed = func(texts []string) ([][]float32, error) { return c.Embed(context.Background(), texts) }
	if err := a.Refresh(); err != nil {
		t.Fatalf("a refresh with no model: %v", err)
	}
	builtinModel(t, ap.String())
	time.Sleep(retry + 100*time.Millisecond)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "kumquats"); !slices.Equal(got, []string{"memory/fruit.md"}) {
		t.Fatalf("after the model answered: %v", got)
	}
}

// An index of version 1, exactly as Link made it, is emptied and made
// again at version 2 (its documents indexed anew); one of version 1
// with anything else in it is still refused.
func TestVersion1IndexRebuilt(t *testing.T) {
	v1 := []string{
		`CREATE TABLE docs(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, title TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, ino INTEGER NOT NULL, body TEXT NOT NULL) STRICT`,
		`CREATE VIRTUAL TABLE chunks USING fts5(text, tokenize='unicode61')`,
		`CREATE TABLE deleted(id INTEGER PRIMARY KEY, path TEXT NOT NULL, title TEXT NOT NULL, at INTEGER NOT NULL) STRICT`,
		`INSERT INTO docs VALUES(1, 'memory/stale.md', 'stale', 1, 1, 1, 'stale body')`,
		`INSERT INTO chunks(rowid, text) VALUES(65536, 'stale body')`,
		`PRAGMA application_id=1819175789`,
		`PRAGMA user_version=1`,
	}
	make1 := func(t *testing.T, d agentDirs, extra ...string) {
		if err := os.MkdirAll(d.own+"/memory/link", 0o700); err != nil {
			t.Fatal(err)
		}
		c, err := sqlite3.Open(d.own + "/memory/link/index.db")
		if err != nil {
			t.Fatal(err)
		}
		if err := fts5.Register(c); err != nil {
			t.Fatal(err)
		}
		for _, s := range append(v1, extra...) {
			if err := c.Exec(s); err != nil {
				t.Fatal(s, err)
			}
		}
		c.Close()
	}
	d := newDirs(t, "ada")
	write(t, d.home+"/memory/fresh.md", "fresh words\n")
	make1(t, d)
	a, _ := openAgent(t, d)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "stale"); len(got) != 0 {
		t.Errorf("the old index's rows survived: %v", got)
	}
	if got := mustSearch(t, a, "fresh"); !slices.Equal(got, []string{"memory/fresh.md"}) {
		t.Errorf("fresh: %v", got)
	}
	d2 := newDirs(t, "bob")
	make1(t, d2, `CREATE TABLE extra(x)`)
	home, _ := os.Open(d2.home)
	defer home.Close()
	own, _ := os.Open(d2.own)
	defer own.Close()
	if a, err := memory.OpenAgent("bob", home, own); err == nil {
		a.Close()
		t.Error("a version 1 index with a table more was used")
	}
}
