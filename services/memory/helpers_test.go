package memory_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"lnk.dev/lnk/services/memory"
)

// agentDirs is one agent's folders under a fresh root: Home and Agent.
type agentDirs struct {
	root, home, own string
}

func newDirs(t *testing.T, name string) agentDirs {
	t.Helper()
	root := t.TempDir()
	d := agentDirs{root: root, home: filepath.Join(root, name, "Home"), own: filepath.Join(root, name, "Agent")}
	for _, p := range []string{d.home + "/memory", d.own + "/chats"} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// logLines collects an agent's log.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func openAgent(t *testing.T, d agentDirs) (*memory.Agent, *logLines) {
	t.Helper()
	home, err := os.Open(d.home)
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	own, err := os.Open(d.own)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	a, err := memory.OpenAgent(filepath.Base(filepath.Dir(d.home)), home, own)
	if err != nil {
		t.Fatal(err)
	}
	l := &logLines{}
	a.Log = l.logf
	t.Cleanup(func() { a.Close() })
	return a, l
}

func paths(hs []memory.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Path)
	}
	return out
}

func mustSearch(t *testing.T, a *memory.Agent, q string) []string {
	t.Helper()
	hs, err := a.Search(q)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return paths(hs)
}
