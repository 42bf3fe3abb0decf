package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// agent makes an agent's Agent/ folder (0700) in a fresh temporary
// folder and returns its path and its handle, as the harness holds it.
func agent(t testing.TB) (string, *os.File) {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "Agent")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return dir, f
}

// chats opens the agent's chats/.
func chats(t testing.TB, agentDir *os.File) *Chats {
	t.Helper()
	c, err := OpenChats(agentDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// conv opens thread in a fresh agent's chats and returns it with the
// Agent/ folder's path.
func conv(t testing.TB, thread string, o Options) (*Conversation, string) {
	t.Helper()
	dir, f := agent(t)
	v, err := chats(t, f).Open(thread, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v, dir
}

// says appends an owner's message.
func says(t testing.TB, v *Conversation, text string) int64 {
	t.Helper()
	n, err := v.Append(&Event{Kind: KindMessage, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// texts returns each event's text.
func texts(t testing.TB, v *Conversation) []string {
	t.Helper()
	es, err := v.Events()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Text)
	}
	return out
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// logs collects what a conversation says in the harness's log.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) f(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, a...))
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
