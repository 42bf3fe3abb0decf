package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// olderChat writes an older Link Harness's chat: one file a message.
func olderChat(th string) {
	os.WriteFile(filepath.Join(th, "1.json"), []byte(line(1, "old one")), 0o600)
	os.WriteFile(filepath.Join(th, "2.json"), []byte("{\n  \"time\": \"2026-12-07T09:01:00Z\",\n  \"kind\": \"answer\",\n  \"text\": \"old two\"\n}\n"), 0o600)
	os.WriteFile(filepath.Join(th, "10.json"), []byte(line(10, "old ten")), 0o600)
}

// TestAnOlderChatIsReadAndGoesOnInTheLog: an older harness's files
// (<n>.json, one indented and without its number) are read first, in
// number order, and the conversation goes on in events.jsonl after the
// last of them; the files are left as they were.
func TestAnOlderChatIsReadAndGoesOnInTheLog(t *testing.T) {
	c, th := prepared(t, func(th string) {
		os.Remove(filepath.Join(th, "conversation.md"))
		olderChat(th)
		os.WriteFile(filepath.Join(th, "notes.json"), []byte("not a message"), 0o600)
	})
	before := tree(t, th)
	v, err := c.Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.Last() != 10 {
		t.Fatalf("last %d", v.Last())
	}
	if n := says(t, v, "new"); n != 11 {
		t.Fatalf("the log went on at %d", n)
	}
	es, err := v.Events()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Kind+":"+e.Text)
	}
	if strings.Join(got, ",") != "message:old one,answer:old two,message:old ten,message:new" {
		t.Errorf("events: %q", got)
	}
	if l := lines(read(t, filepath.Join(th, "events.jsonl"))); len(l) != 1 || !strings.HasPrefix(l[0], `{"seq":11,`) {
		t.Errorf("the log: %q", l)
	}
	for _, n := range []string{"1.json", "2.json", "10.json"} {
		if !strings.Contains(before, n+": "+read(t, filepath.Join(th, n))) {
			t.Errorf("%s changed", n)
		}
	}
	if md := read(t, filepath.Join(th, "conversation.md")); !strings.Contains(md, "old two") || !strings.Contains(md, "new") {
		t.Errorf("conversation.md: %q", md)
	}
}

// TestAnOlderChatsFileIsRefusedAsTheLogIs: a message's file that is a
// link, a fifo, over 16 MiB, not an event, one whose number disagrees
// with its name, or a number named twice fails the read; the same chat
// without it reads (the positive control, below each).
func TestAnOlderChatsFileIsRefusedAsTheLogIs(t *testing.T) {
	elsewhere := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(elsewhere, []byte(line(3, "SECRET")), 0o600)
	for name, put := range map[string]func(th string){
		"link": func(th string) { os.Symlink(elsewhere, filepath.Join(th, "3.json")) },
		"fifo": func(th string) { unix.Mkfifo(filepath.Join(th, "3.json"), 0o600) },
		"over 16 MiB": func(th string) {
			os.WriteFile(filepath.Join(th, "3.json"), []byte(line(3, strings.Repeat("a", MaxMessageFile))), 0o600)
		},
		"not an event": func(th string) { os.WriteFile(filepath.Join(th, "3.json"), []byte("[1,2]"), 0o600) },
		"number":       func(th string) { os.WriteFile(filepath.Join(th, "3.json"), []byte(line(4, "four")), 0o600) },
		"named twice":  func(th string) { os.WriteFile(filepath.Join(th, "01.json"), []byte(line(1, "one again")), 0o600) },
		"0644":         func(th string) { os.WriteFile(filepath.Join(th, "3.json"), []byte(line(3, "x")), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			c, th := prepared(t, func(th string) { olderChat(th); put(th) })
			v, err := c.Open("t", Options{})
			if err == nil {
				_, err = v.Events()
				v.Close()
			}
			if err == nil {
				t.Fatal("read")
			}
			t.Log(err)
			for _, n := range []string{"3.json", "01.json"} {
				os.Remove(filepath.Join(th, n))
			}
			_, f := agentAt(t, filepath.Dir(filepath.Dir(th)))
			w, err := chats(t, f).Open("t", Options{})
			if err != nil {
				t.Fatalf("the positive control: %v", err)
			}
			defer w.Close()
			if es, err := w.Events(); err != nil || len(es) != 3 {
				t.Fatalf("the positive control: %d %v", len(es), err)
			}
		})
	}
	if b, _ := os.ReadFile(elsewhere); !strings.Contains(string(b), "SECRET") {
		t.Error("the link's target changed")
	}
}

// TestAnOlderMessageFileOf16MiBIsRead: 16 MiB is the limit, not past it.
func TestAnOlderMessageFileOf16MiBIsRead(t *testing.T) {
	l := line(3, "")
	body := line(3, strings.Repeat("a", MaxMessageFile-len(l)))
	if len(body) != MaxMessageFile {
		t.Fatalf("the test's file is %d bytes", len(body))
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "3.json"), []byte(body), 0o600)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var n int
	if _, err := readOld(fd, func(Event) { n++ }); err != nil || n != 1 {
		t.Fatalf("a file of 16 MiB: %d %v", n, err)
	}
	os.WriteFile(filepath.Join(dir, "3.json"), []byte(body+" "), 0o600)
	if _, err := readOld(fd, func(Event) {}); err == nil || errors.Is(err, ownerfile.ErrLink) {
		t.Fatalf("a file of 16 MiB and a byte: %v", err)
	}
}
