package memory_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"

	"lnk.dev/lnk/services/memory"
)

const benchDocs = 10000

// benchText is document i: about 1 KiB of markdown with words shared by
// many documents and one of its own.
func benchText(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Note %d\n\nThe owner met w%dx about the garden, tea and trains.\n\n", i, i)
	for j := 0; j < 12; j++ {
		fmt.Fprintf(&b, "- item %d of list %d: lorem ipsum dolor sit amet %d\n", j, i%97, (i*j)%1013)
	}
	return b.String()
}

// benchDirs writes benchDocs documents into a fresh agent's memory/.
func benchDirs(b *testing.B) (agentDirs, int64) {
	root := b.TempDir()
	d := agentDirs{root: root, home: filepath.Join(root, "ada", "Home"), own: filepath.Join(root, "ada", "Agent")}
	var total int64
	for i := 0; i < benchDocs; i++ {
		p := filepath.Join(d.home, "memory", fmt.Sprintf("d%02d", i%100), fmt.Sprintf("n%d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		t := benchText(i)
		total += int64(len(t))
		if err := os.WriteFile(p, []byte(t), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	os.MkdirAll(d.own, 0o700)
	return d, total
}

// direct is SQLite FTS5 used directly: one table, the same texts inserted
// in one transaction (read from the same files, so reading counts in both).
func direct(b *testing.B, dir string, d agentDirs) *sqlite3.Conn {
	c, err := sqlite3.Open(filepath.Join(dir, "direct.db"))
	if err != nil {
		b.Fatal(err)
	}
	if err := fts5.Register(c); err != nil {
		b.Fatal(err)
	}
	if err := c.Exec(`CREATE VIRTUAL TABLE t USING fts5(path UNINDEXED, text); BEGIN`); err != nil {
		b.Fatal(err)
	}
	st, _, err := c.Prepare(`INSERT INTO t(path, text) VALUES(?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	filepath.WalkDir(filepath.Join(d.home, "memory"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		st.BindText(1, p)
		st.BindText(2, string(body))
		if err := st.Exec(); err != nil {
			b.Fatal(err)
		}
		return nil
	})
	st.Close()
	if err := c.Exec(`COMMIT`); err != nil {
		b.Fatal(err)
	}
	return c
}

func openBench(b *testing.B, d agentDirs) *memory.Agent {
	home, _ := os.Open(d.home)
	own, _ := os.Open(d.own)
	defer home.Close()
	defer own.Close()
	a, err := memory.OpenAgent("ada", home, own)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkMemoryIndex: MB/s of markdown indexed from nothing, Link
// Memory's Refresh beside the same files into FTS5 directly.
func BenchmarkMemoryIndex(b *testing.B) {
	d, total := benchDirs(b)
	var link, base time.Duration
	for i := 0; i < b.N; i++ {
		os.RemoveAll(filepath.Join(d.own, "memory"))
		a := openBench(b, d)
		t0 := time.Now()
		if err := a.Refresh(); err != nil {
			b.Fatal(err)
		}
		link += time.Since(t0)
		a.Close()
		dir := b.TempDir()
		t0 = time.Now()
		direct(b, dir, d).Close()
		base += time.Since(t0)
	}
	mb := float64(total) * float64(b.N) / 1e6
	b.ReportMetric(mb/link.Seconds(), "link-MB/s")
	b.ReportMetric(mb/base.Seconds(), "base-MB/s")
	b.ReportMetric(base.Seconds()/link.Seconds(), "x-baseline")
}

// BenchmarkMemorySearch: the median latency of a search over 10,000
// documents, Link Memory's Search beside the same MATCH on FTS5 directly.
func BenchmarkMemorySearch(b *testing.B) {
	d, _ := benchDirs(b)
	a := openBench(b, d)
	defer a.Close()
	if err := a.Refresh(); err != nil {
		b.Fatal(err)
	}
	c := direct(b, b.TempDir(), d)
	defer c.Close()
	st, _, err := c.Prepare(`SELECT path, snippet(t, 1, '[', ']', '…', 16) FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 20`)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var link, base []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := fmt.Sprintf("w%dx garden", i%benchDocs)
		t0 := time.Now()
		hits, err := a.Search(q)
		link = append(link, time.Since(t0))
		if err != nil || len(hits) != 1 {
			b.Fatalf("search %q: %d hits, %v", q, len(hits), err)
		}
		t0 = time.Now()
		st.BindText(1, fmt.Sprintf(`"w%dx" "garden"`, i%benchDocs))
		n := 0
		for st.Step() {
			n++
		}
		st.Reset()
		base = append(base, time.Since(t0))
		if n != 1 {
			b.Fatalf("direct: %d hits", n)
		}
	}
	slices.Sort(link)
	slices.Sort(base)
	l, s := link[len(link)/2], base[len(base)/2]
	b.ReportMetric(float64(l.Nanoseconds()), "link-p50-ns")
	b.ReportMetric(float64(s.Nanoseconds()), "base-p50-ns")
	b.ReportMetric(float64(l)/float64(s), "x-baseline")
}
