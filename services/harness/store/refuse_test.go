package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// prepared makes Agent/chats/t/ (0700), with a conversation.md (so Open
// has no readable copy to write from every event), in a fresh agent and
// calls put with the thread's folder before anything opens it.
func prepared(t *testing.T, put func(thread string)) (*Chats, string) {
	t.Helper()
	dir, f := agent(t)
	th := filepath.Join(dir, "chats", "t")
	if err := os.MkdirAll(th, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "chats"), 0o700)
	os.WriteFile(filepath.Join(th, "conversation.md"), []byte("# Conversation t\n\n"), 0o600)
	put(th)
	return chats(t, f), th
}

func line(seq int64, text string) string {
	return fmt.Sprintf(`{"seq":%d,"time":"2026-12-07T09:00:00Z","kind":"message","text":%q}`+"\n", seq, text)
}

// TestALogThatIsALinkOrAPipeIsRefused: events.jsonl as a link (to a log
// elsewhere), a fifo (no writer: opening it must not wait), a folder, a
// second hard link, or mode 0644 is refused, and the link's target is
// neither read nor written; a regular 0600 log opens (the positive
// control).
func TestALogThatIsALinkOrAPipeIsRefused(t *testing.T) {
	elsewhere := filepath.Join(t.TempDir(), "events.jsonl")
	os.WriteFile(elsewhere, []byte(line(1, "elsewhere")), 0o600)
	for name, put := range map[string]func(th string){
		"link":   func(th string) { os.Symlink(elsewhere, filepath.Join(th, "events.jsonl")) },
		"fifo":   func(th string) { unix.Mkfifo(filepath.Join(th, "events.jsonl"), 0o600) },
		"folder": func(th string) { os.Mkdir(filepath.Join(th, "events.jsonl"), 0o700) },
		"hard link": func(th string) {
			os.WriteFile(filepath.Join(th, "x"), []byte(line(1, "x")), 0o600)
			os.Link(filepath.Join(th, "x"), filepath.Join(th, "events.jsonl"))
		},
		"0644": func(th string) { os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(line(1, "x")), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := prepared(t, put)
			done := make(chan error, 1)
			go func() {
				v, err := c.Open("t", Options{})
				if err == nil {
					v.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("opened")
				}
				t.Log(err)
			case <-time.After(10 * time.Second):
				t.Fatal("Open waited on it")
			}
		})
	}
	if b, _ := os.ReadFile(elsewhere); string(b) != line(1, "elsewhere") {
		t.Errorf("the link's target changed: %q", b)
	}
	c, _ := prepared(t, func(th string) { os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(line(1, "x")), 0o600) })
	v, err := c.Open("t", Options{})
	if err != nil {
		t.Fatalf("the positive control: %v", err)
	}
	v.Close()
}

// TestTheConversationsFolderIsRefusedAsALink: chats/<thread> as a link
// to a folder elsewhere (or as a file, or 0755) is refused, nothing made
// or written there; chats/ as a link too.
func TestTheConversationsFolderIsRefusedAsALink(t *testing.T) {
	out := t.TempDir()
	dir, f := agent(t)
	c := chats(t, f)
	os.Symlink(out, filepath.Join(dir, "chats", "t"))
	if _, err := c.Open("t", Options{}); !errors.Is(err, ownerfile.ErrLink) {
		t.Errorf("a thread's folder that is a link: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "chats", "f"), nil, 0o600)
	if _, err := c.Open("f", Options{}); err == nil {
		t.Error("a thread's folder that is a file was opened")
	}
	os.Mkdir(filepath.Join(dir, "chats", "open"), 0o755)
	os.Chmod(filepath.Join(dir, "chats", "open"), 0o755)
	if _, err := c.Open("open", Options{}); !errors.Is(err, ownerfile.ErrNotOwners) {
		t.Errorf("a thread's folder others can enter: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("written through the link: %v", ents)
	}
	dir2, f2 := agent(t)
	os.Symlink(out, filepath.Join(dir2, "chats"))
	if _, err := OpenChats(f2); !errors.Is(err, ownerfile.ErrLink) {
		t.Errorf("chats/ as a link: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("written through the link: %v", ents)
	}
	if v, err := c.Open("fine", Options{}); err != nil {
		t.Errorf("the positive control: %v", err)
	} else {
		v.Close()
	}
}

// TestALinePast16MBIsRefused: a log whose last line is 17 MB is refused
// at Open (the tail reader stops at the limit); one with a 17 MB line
// before its last is refused when read; Append refuses an event whose
// line would pass 16 MB. A line of 16 MB exactly is read (the positive
// control, at the limit).
func TestALinePast16MBIsRefused(t *testing.T) {
	big := func(n int) string {
		l := line(2, "")
		pad := n - (len(l) - 1)
		return line(2, strings.Repeat("a", pad))
	}
	if n := len(big(MaxLine)) - 1; n != MaxLine {
		t.Fatalf("the test's line is %d bytes", n)
	}
	c, _ := prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(line(1, "x")+big(17_000_000)), 0o600)
	})
	if _, err := c.Open("t", Options{}); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("a last line of 17 MB: %v", err)
	}
	c, _ = prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(line(1, "x")+big(17_000_000)+line(3, "after")), 0o600)
	})
	v, err := c.Open("t", Options{})
	if err != nil {
		t.Fatalf("Open reads only the last line: %v", err)
	}
	if _, err := v.Events(); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("a line of 17 MB before the last: %v", err)
	}
	v.Close()
	c, _ = prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(line(1, "x")+big(MaxLine)), 0o600)
	})
	v, err = c.Open("t", Options{})
	if err != nil {
		t.Fatalf("a line of 16 MB exactly: %v", err)
	}
	defer v.Close()
	if es, err := v.Events(); err != nil || len(es) != 2 {
		t.Fatalf("a line of 16 MB exactly: %d %v", len(es), err)
	}
	if _, err := v.Append(&Event{Kind: KindMessage, Text: strings.Repeat("b", MaxLine)}); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("an event past 16 MB: %v", err)
	}
	if v.Last() != 2 {
		t.Errorf("the refused event took a number: %d", v.Last())
	}
}

// TestATornLastLineIsCutOffAndSaid: a log ending in part of a line (a
// crash mid-write) opens with that part said in the harness's log and
// cut off; it is no event; the next append starts on a fresh line, and
// every line before it is as it was.
func TestATornLastLineIsCutOffAndSaid(t *testing.T) {
	whole := line(1, "one") + line(2, "two")
	var th string
	c, th := prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(whole+`{"seq":3,"time":"2026-12-07T09:0`), 0o600)
	})
	var l logs
	v, err := c.Open("t", Options{Logf: l.f})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if !strings.Contains(l.String(), "torn line of 32 bytes") || !strings.Contains(l.String(), `{\"seq\":3`) {
		t.Errorf("said: %q", l.String())
	}
	if v.Last() != 2 {
		t.Errorf("the torn line counted: last %d", v.Last())
	}
	if n := says(t, v, "three"); n != 3 {
		t.Errorf("the next number is %d", n)
	}
	got := read(t, filepath.Join(th, "events.jsonl"))
	if !strings.HasPrefix(got, whole) || strings.Count(got, "\n") != 3 {
		t.Errorf("the log after: %q", got)
	}
	if got := texts(t, v); strings.Join(got, ",") != "one,two,three" {
		t.Errorf("events: %q", got)
	}
}

// TestALogThatIsNotEventsIsRefused: a line that is not one event of this
// store's (garbage, an unknown key, a key twice or in another case,
// numbers that don't rise) fails the read, naming the line; the same
// log without it reads (the positive control).
func TestALogThatIsNotEventsIsRefused(t *testing.T) {
	for name, bad := range map[string]string{
		"garbage":      "not json\n",
		"unknown key":  `{"seq":2,"time":"2026-12-07T09:00:00Z","kind":"message","role":"system"}` + "\n",
		"key twice":    `{"seq":2,"time":"2026-12-07T09:00:00Z","kind":"message","from":"","from":"x"}` + "\n",
		"key in caps":  `{"seq":2,"time":"2026-12-07T09:00:00Z","kind":"message","FROM":"x"}` + "\n",
		"no time":      `{"seq":2,"kind":"message"}` + "\n",
		"nested caps":  `{"seq":2,"time":"2026-12-07T09:00:00Z","kind":"answer","window":{"SEQ":1,"time":"2026-12-07T09:00:00Z","tokens":1}}` + "\n",
		"nested twice": `{"seq":2,"time":"2026-12-07T09:00:00Z","kind":"answer","tokens":{"input":1,"input":2,"output":0}}` + "\n",
		"a call's key": `{"seq":2,"time":"2026-12-07T09:00:00Z","kind":"answer","calls":[{"id":"a","name":"x"},{"id":"b","Name":"y"}]}` + "\n",
		"a seq again":  line(1, "again"),
		"an empty one": "\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := prepared(t, func(th string) {
				os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(line(1, "one")+bad+line(5, "five")), 0o600)
			})
			v, err := c.Open("t", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if _, err := v.Events(); err == nil || !strings.Contains(err.Error(), "line 2") {
				t.Errorf("read: %v", err)
			}
		})
	}
	c, _ := prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(line(1, "one")+line(5, "five")), 0o600)
	})
	v, err := c.Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got := texts(t, v); strings.Join(got, ",") != "one,five" {
		t.Errorf("the positive control: %q", got)
	}
}

// TestAppendIsOneWriteNeverARewrite: the log keeps its inode and every
// byte before an append, and Open of a log whose early lines are not
// events (never read for an append) still appends after its last line.
func TestAppendIsOneWriteNeverARewrite(t *testing.T) {
	c, th := prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, "events.jsonl"), []byte("early garbage Open never reads\n"+line(7, "seven")), 0o600)
	})
	p := filepath.Join(th, "events.jsonl")
	var before unix.Stat_t
	unix.Stat(p, &before)
	old := read(t, p)
	v, err := c.Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if n := says(t, v, "eight"); n != 8 {
		t.Fatalf("number %d", n)
	}
	var after unix.Stat_t
	unix.Stat(p, &after)
	got := read(t, p)
	if after.Ino != before.Ino || !strings.HasPrefix(got, old) || !bytes.Equal([]byte(got[len(old):]), []byte(strings.TrimSpace(got[len(old):])+"\n")) {
		t.Errorf("the log was rewritten: inode %d→%d, %q", before.Ino, after.Ino, got)
	}
}

// endless is a line that never ends: it counts what is read of it.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.read += int64(len(p))
	return len(p), nil
}

func (e *endless) ReadAt(p []byte, off int64) (int, error) { return e.Read(p) }

// TestALineIsNeverReadPastItsLimit: a line that never ends is refused
// once 16 MB of it is read, forwards and from the end alike: never read
// whole, whatever its length.
func TestALineIsNeverReadPastItsLimit(t *testing.T) {
	limit := int64(MaxLine) + 2*int64(tailChunk)
	fw := &endless{}
	if _, err := readLines(fw, MaxLine, func([]byte) error { return nil }); !errors.Is(err, ErrLineTooLong) || fw.read > limit {
		t.Errorf("forwards: read %d bytes, %v", fw.read, err)
	}
	bw := &endless{}
	if _, _, err := lastLine(bw, 1<<40, MaxLine); !errors.Is(err, ErrLineTooLong) || bw.read > limit {
		t.Errorf("the tail: read %d bytes, %v", bw.read, err)
	}
	back := &endless{}
	err := linesBack(back, 1<<40, MaxLine, func([]byte) (bool, error) { return false, nil })
	if !errors.Is(err, ErrLineTooLong) || back.read > limit {
		t.Errorf("backwards: read %d bytes, %v", back.read, err)
	}
}
