package store

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLogIs600InFolders700AndReadsBack: chats/ and the thread's folder
// are made 0700, events.jsonl and conversation.md 0600, even under a
// umask that would leave them open; each event is one line, read back
// as written, numbered from 1.
func TestLogIs600InFolders700AndReadsBack(t *testing.T) {
	old := unix.Umask(0)
	defer unix.Umask(old)
	v, dir := conv(t, "main", Options{})
	at := time.Date(2026, 12, 7, 9, 0, 0, 123, time.UTC)
	if n := says(t, v, "hello"); n != 1 {
		t.Fatalf("the first number is %d", n)
	}
	ans := &Event{Kind: KindAnswer, Text: "hi", Time: at, Model: "builtin",
		Tokens: &Tokens{Input: 10, Output: 2, Cost: 0.5}, Window: &Window{Seq: 1, Time: at, Tokens: 12},
		Calls: []Call{{ID: "c1", Name: "run__command", Arguments: []byte(`{"argv":["ls"]}`)}}}
	if n, err := v.Append(ans); err != nil || n != 2 {
		t.Fatalf("answer: %d %v", n, err)
	}
	for path, mode := range map[string]os.FileMode{
		"chats": 0o700, "chats/main": 0o700, "chats/main/events.jsonl": 0o600, "chats/main/conversation.md": 0o600,
	} {
		fi, err := os.Lstat(filepath.Join(dir, path))
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v %v, want %v", path, fi.Mode(), err, mode)
		}
	}
	got := lines(read(t, filepath.Join(dir, "chats/main/events.jsonl")))
	if len(got) != 2 || !strings.HasPrefix(got[0], `{"seq":1,`) || !strings.Contains(got[1], `"window":{"seq":1`) {
		t.Fatalf("the log: %q", got)
	}
	es, err := v.Events()
	if err != nil || len(es) != 2 {
		t.Fatalf("events: %v %v", es, err)
	}
	if !reflect.DeepEqual(es[1], *ans) {
		t.Errorf("read back %+v\nwrote     %+v", es[1], *ans)
	}
	if s, _ := v.Since(1); len(s) != 1 || s[0].Seq != 2 {
		t.Errorf("since 1: %+v", s)
	}
	if v.Last() != 2 {
		t.Errorf("last %d", v.Last())
	}
}

// TestANumberAlreadyWrittenIsRefused: an event numbered at most the last
// is refused and nothing is written; the next number, and one past it,
// are taken (the positive control); a reopened conversation goes on from
// its last number.
func TestANumberAlreadyWrittenIsRefused(t *testing.T) {
	v, dir := conv(t, "t", Options{})
	says(t, v, "one")
	says(t, v, "two")
	for _, n := range []int64{1, 2, -1} {
		if _, err := v.Append(&Event{Seq: n, Kind: KindMessage, Text: "again"}); n > 0 && !errors.Is(err, ErrWritten) || err == nil {
			t.Errorf("number %d: %v", n, err)
		}
	}
	if n, err := v.Append(&Event{Seq: 3, Kind: KindMessage, Text: "three"}); err != nil || n != 3 {
		t.Fatalf("the next number: %d %v", n, err)
	}
	if n, err := v.Append(&Event{Seq: 10, Kind: KindMessage, Text: "ten"}); err != nil || n != 10 {
		t.Fatalf("a number past the next: %d %v", n, err)
	}
	if got := texts(t, v); strings.Join(got, ",") != "one,two,three,ten" {
		t.Fatalf("events: %q", got)
	}
	v.Close()
	_, f := agentAt(t, dir)
	w, err := chats(t, f).Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Last() != 10 {
		t.Errorf("reopened, the last is %d", w.Last())
	}
	if _, err := w.Append(&Event{Seq: 10, Kind: KindMessage}); !errors.Is(err, ErrWritten) {
		t.Errorf("reopened, number 10 again: %v", err)
	}
	if n := says(t, w, "eleven"); n != 11 {
		t.Errorf("reopened, the next is %d", n)
	}
}

// agentAt opens an existing Agent/ folder's handle.
func agentAt(t testing.TB, dir string) (string, *os.File) {
	t.Helper()
	f, err := os.OpenFile(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return dir, f
}

// TestAnEventIsCheckedBeforeItIsWritten: an unknown kind or negative
// hops is refused and the log keeps nothing of it.
func TestAnEventIsCheckedBeforeItIsWritten(t *testing.T) {
	v, dir := conv(t, "t", Options{})
	for _, e := range []*Event{{Kind: "system", Text: "x"}, {Kind: KindMessage, Hops: -1}, {Kind: ""}} {
		if _, err := v.Append(e); err == nil {
			t.Errorf("%+v was written", e)
		}
	}
	says(t, v, "ok")
	if got := lines(read(t, filepath.Join(dir, "chats/t/events.jsonl"))); len(got) != 1 || !strings.HasPrefix(got[0], `{"seq":1,`) {
		t.Errorf("the log: %q", got)
	}
}

// TestWritersTakeTurnsOnTheLock: while one writer holds a conversation,
// another Open (another open file, as another process's) waits and then
// fails past its wait; once the first closes, it opens and goes on from
// the first's last number.
func TestWritersTakeTurnsOnTheLock(t *testing.T) {
	dir, f := agent(t)
	c := chats(t, f)
	a, err := c.Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	says(t, a, "first")
	if _, err := c.Open("t", Options{LockWait: 50 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "another writer") {
		t.Fatalf("a second writer while the first holds it: %v", err)
	}
	// The other side of the lock: a writer waiting gets it when the
	// first closes.
	done := make(chan error, 1)
	var b *Conversation
	go func() {
		var err error
		b, err = c.Open("t", Options{LockWait: 10 * time.Second})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	says(t, a, "second")
	a.Close()
	if err := <-done; err != nil {
		t.Fatalf("the waiting writer: %v", err)
	}
	defer b.Close()
	if n := says(t, b, "third"); n != 3 {
		t.Errorf("the second writer wrote number %d", n)
	}
	if got := lines(read(t, filepath.Join(dir, "chats/t/events.jsonl"))); len(got) != 3 {
		t.Errorf("the log: %q", got)
	}
}

// TestAClosedConversationWritesNothing.
func TestAClosedConversationWritesNothing(t *testing.T) {
	v, _ := conv(t, "t", Options{})
	v.Close()
	if _, err := v.Append(&Event{Kind: KindMessage}); !errors.Is(err, ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
	if _, err := v.Events(); !errors.Is(err, ErrClosed) {
		t.Errorf("events after close: %v", err)
	}
}

// TestListNamesEachConversation: List gives the threads' folders only.
func TestListNamesEachConversation(t *testing.T) {
	dir, f := agent(t)
	c := chats(t, f)
	for _, th := range []string{"main", "link:bob", "schedule:daily~1"} {
		v, err := c.Open(th, Options{})
		if err != nil {
			t.Fatal(err)
		}
		v.Close()
	}
	os.WriteFile(filepath.Join(dir, "chats", "stray.txt"), nil, 0o600)
	os.Symlink("main", filepath.Join(dir, "chats", "ln"))
	os.Mkdir(filepath.Join(dir, "chats", "a b"), 0o700)
	got, err := c.List()
	if err != nil || strings.Join(got, ",") != "link:bob,main,schedule:daily~1" {
		t.Errorf("list: %q %v", got, err)
	}
}

// TestOneAgentsChatsAreNotAnothers: two agents' conversations of the
// same name, each opened from its own Agent/ folder's handle, hold only
// their own events; a thread's name can't reach the other's (".." and
// paths are refused before anything is opened).
func TestOneAgentsChatsAreNotAnothers(t *testing.T) {
	dirA, fa := agent(t)
	dirB, fb := agent(t)
	a, err := chats(t, fa).Open("main", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := chats(t, fb).Open("main", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	says(t, a, "a's")
	says(t, b, "b's")
	if got := texts(t, a); strings.Join(got, ",") != "a's" {
		t.Errorf("a reads %q", got)
	}
	if got := texts(t, b); strings.Join(got, ",") != "b's" {
		t.Errorf("b reads %q", got)
	}
	rel, _ := filepath.Rel(filepath.Join(dirA, "chats"), filepath.Join(dirB, "chats", "main"))
	for _, th := range []string{rel, "..", "../../" + filepath.Base(filepath.Dir(dirB))} {
		if _, err := chats(t, fa).Open(th, Options{}); err == nil {
			t.Errorf("a opened %q", th)
		}
	}
	if got := lines(read(t, filepath.Join(dirB, "chats/main/events.jsonl"))); len(got) != 1 {
		t.Errorf("b's log: %q", got)
	}
}

// TestGoroutinesAppendingTogetherEachGetANumber: appends and reads from
// several goroutines on one conversation: every number once, the log
// whole lines only.
func TestGoroutinesAppendingTogetherEachGetANumber(t *testing.T) {
	v, dir := conv(t, "t", Options{})
	const n, each = 4, 50
	done := make(chan map[int64]bool, n)
	for g := 0; g < n; g++ {
		go func() {
			got := map[int64]bool{}
			for i := 0; i < each; i++ {
				s, err := v.Append(&Event{Kind: KindMessage, Text: "x"})
				if err != nil {
					t.Error(err)
				}
				got[s] = true
				v.Since(s - 1)
			}
			done <- got
		}()
	}
	all := map[int64]bool{}
	for g := 0; g < n; g++ {
		for s := range <-done {
			if all[s] {
				t.Errorf("number %d given twice", s)
			}
			all[s] = true
		}
	}
	if len(all) != n*each || v.Last() != n*each {
		t.Errorf("%d numbers, last %d", len(all), v.Last())
	}
	if es, err := v.Events(); err != nil || len(es) != n*each {
		t.Errorf("%d events, %v", len(es), err)
	}
	if got := lines(read(t, filepath.Join(dir, "chats/t/events.jsonl"))); len(got) != n*each {
		t.Errorf("%d lines", len(got))
	}
}
