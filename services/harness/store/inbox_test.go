package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func stranger(text string) Queued {
	return Queued{From: "stranger:webhook:ci", Hops: 1, Tools: []string{}, Text: text}
}

// TestInboxKeepsInOrderAndMarksDone: what is queued is read back in
// order, with its sender, hops and tools as queued (none stays none,
// nil stays every tool); a done mark takes one out, durably (a fresh
// Chats reads the same), and the last one empties the file.
func TestInboxKeepsInOrderAndMarksDone(t *testing.T) {
	dir, f := agent(t)
	c := chats(t, f)
	a, err := c.Queue("webhook:ci", stranger("one"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Queue("webhook:ci", Queued{From: "schedule:s1", Hops: 2, Text: "two"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Pending("webhook:ci")
	if err != nil || len(p) != 2 || p[0].ID != a || p[1].ID != b || p[0].Text != "one" || p[1].Text != "two" {
		t.Fatalf("pending %+v, %v", p, err)
	}
	if p[0].Tools == nil || len(p[0].Tools) != 0 || p[1].Tools != nil || p[1].Hops != 2 || p[0].From != "stranger:webhook:ci" {
		t.Fatalf("what was checked at arrival changed: %+v", p)
	}
	if err := c.Done("webhook:ci", a); err != nil {
		t.Fatal(err)
	}
	if err := c.Done("webhook:ci", a); err == nil {
		t.Fatal("a message marked done twice")
	}
	p, err = chats(t, f).Pending("webhook:ci")
	if err != nil || len(p) != 1 || p[0].ID != b {
		t.Fatalf("after one done, a fresh reader has %+v, %v", p, err)
	}
	if err := c.Done("webhook:ci", b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "chats", "webhook:ci", inboxName)
	if st, err := os.Stat(path); err != nil || st.Size() != 0 || st.Mode().Perm() != 0o600 {
		t.Fatalf("the inbox with nothing left: %v, %v", st, err)
	}
	if p, err := c.Pending("never-queued"); err != nil || p != nil {
		t.Fatalf("a thread with no inbox: %+v, %v", p, err)
	}
}

// TestInboxRefusesPastItsCap: the MaxQueuedMessages+1th message waiting
// is refused ErrInboxFull, not dropped and not written; once one has run
// (the positive control) another is taken again.
func TestInboxRefusesPastItsCap(t *testing.T) {
	_, f := agent(t)
	c := chats(t, f)
	var first int64
	for i := 0; i < MaxQueuedMessages; i++ {
		id, err := c.Queue("webhook:ci", stranger("m"))
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if i == 0 {
			first = id
		}
	}
	if _, err := c.Queue("webhook:ci", stranger("one too many")); !errors.Is(err, ErrInboxFull) {
		t.Fatalf("past the cap: %v", err)
	}
	if p, _ := c.Pending("webhook:ci"); len(p) != MaxQueuedMessages {
		t.Fatalf("%d waiting after the refusal", len(p))
	}
	if err := c.Done("webhook:ci", first); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Queue("webhook:ci", stranger("room again")); err != nil {
		t.Fatalf("with room again: %v", err)
	}
}

// TestInboxRefusesPastItsBytes: a message that would take the file past
// MaxInbox is refused; a smaller one still fits.
func TestInboxRefusesPastItsBytes(t *testing.T) {
	_, f := agent(t)
	c := chats(t, f)
	big := strings.Repeat("x", MaxQueuedText)
	n := 0
	for ; ; n++ {
		_, err := c.Queue("webhook:ci", stranger(big))
		if errors.Is(err, ErrInboxFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 || n >= MaxQueuedMessages {
		t.Fatalf("%d messages of 1 MiB taken before the byte cap", n)
	}
	if _, err := c.Queue("webhook:ci", stranger("small")); err != nil {
		t.Fatalf("a small one under the byte cap: %v", err)
	}
}

// TestInboxCutsATornLine: a last line with no newline (a queueing cut
// short, never answered taken) is not a message and is cut off before
// the next is written.
func TestInboxCutsATornLine(t *testing.T) {
	dir, f := agent(t)
	c := chats(t, f)
	if _, err := c.Queue("webhook:ci", stranger("whole")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "chats", "webhook:ci", inboxName)
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString(`{"id":5,"from":"stranger:x","hops":0,"tools":[],"te`)
	w.Close()
	if _, err := c.Queue("webhook:ci", stranger("next")); err != nil {
		t.Fatal(err)
	}
	p, err := c.Pending("webhook:ci")
	if err != nil || len(p) != 2 || p[0].Text != "whole" || p[1].Text != "next" {
		t.Fatalf("pending %+v, %v", p, err)
	}
}

// TestInboxRefusesALink: an inbox.jsonl that is a link is refused, to
// queue and to read, and the file it names is untouched.
func TestInboxRefusesALink(t *testing.T) {
	dir, f := agent(t)
	c := chats(t, f)
	if _, err := c.Queue("webhook:ok", stranger("control")); err != nil {
		t.Fatalf("the positive control: %v", err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, nil, 0o600)
	os.MkdirAll(filepath.Join(dir, "chats", "webhook:ci"), 0o700)
	if err := os.Symlink(target, filepath.Join(dir, "chats", "webhook:ci", inboxName)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Queue("webhook:ci", stranger("m")); err == nil {
		t.Fatal("queued through a link")
	}
	if _, err := c.Pending("webhook:ci"); err == nil {
		t.Fatal("read through a link")
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Fatalf("written through a link: %q", b)
	}
}

// TestParseInboxRefuses: what is not the inbox's is refused, never
// skipped.
func TestParseInboxRefuses(t *testing.T) {
	ok := `{"id":7,"from":"stranger:webhook:ci","hops":0,"tools":[],"text":"hi"}` + "\n"
	if p, whole, err := ParseInbox([]byte(ok)); err != nil || len(p) != 1 || whole != len(ok) {
		t.Fatalf("the positive control: %+v %d %v", p, whole, err)
	}
	for name, in := range map[string]string{
		"unknown key":     `{"id":7,"from":"a","hops":0,"tools":[],"text":"hi","x":1}` + "\n",
		"key twice":       `{"id":7,"id":8,"from":"a","hops":0,"tools":[],"text":"hi"}` + "\n",
		"done of nothing": `{"done":9}` + "\n",
		"done twice":      ok + `{"done":7}` + "\n" + `{"done":7}` + "\n",
		"queued twice":    ok + ok,
		"no sender":       `{"id":7,"from":"","hops":0,"tools":[],"text":"hi"}` + "\n",
		"no text":         `{"id":7,"from":"a","hops":0,"tools":[],"text":""}` + "\n",
		"zero id":         `{"id":0,"from":"a","hops":0,"tools":[],"text":"hi"}` + "\n",
		"negative hops":   `{"id":7,"from":"a","hops":-1,"tools":[],"text":"hi"}` + "\n",
		"control sender":  `{"id":7,"from":"a\u0007","hops":0,"tools":[],"text":"hi"}` + "\n",
		"not json":        "hello\n",
	} {
		if _, _, err := ParseInbox([]byte(in)); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
}
