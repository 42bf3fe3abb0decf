package filetool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestVersionsOutliveARestart: the session's versions are the session's,
// not its process's. A file read, then changed on disk while the process
// was started again — killed, or killed for a cancelled call — is
// refused at a write that names nothing new; a version a write answered
// is named by the next write; a refusal forgets the version as it does
// without a restart; and a later page, its kept text gone with the
// process, reads the file again.
func TestVersionsOutliveARestart(t *testing.T) {
	for _, c := range []struct {
		name    string
		restart func(*Sandboxed)
	}{
		{"killed", func(sb *Sandboxed) { sb.p.kill() }},
		{"a cancelled call", func(sb *Sandboxed) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			sb.Call(ctx, "list", nil) // answered or not, the process is killed
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := t.TempDir()
			a := filepath.Join(files, "work", "a.txt")
			put := func(text string) {
				t.Helper()
				if err := os.MkdirAll(filepath.Dir(a), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(a, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			sb := &Sandboxed{Argv: []string{testenv.Bin(t, "lnk-file-tool"), "apply", "--files", files, "--write", "work"}}
			t.Cleanup(func() { sb.Close() })
			call := func(name, args string) (json.RawMessage, error) {
				return sb.Call(context.Background(), name, json.RawMessage(args))
			}
			restart := func() {
				t.Helper()
				p := sb.p
				c.restart(sb)
				select {
				case <-p.done:
				case <-time.After(30 * time.Second):
					t.Fatal("the process was not ended")
				}
			}
			changed := func(what string, err error) {
				t.Helper()
				var ce *CallError
				if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "changed since") {
					t.Fatalf("%s: %v", what, err)
				}
			}

			put("one\ntwo\n")
			if _, err := call("read", `{"path":"work/a.txt"}`); err != nil {
				t.Fatal(err)
			}
			first := sb.p
			restart()
			put("changed outside\n")
			_, err := call("write", `{"path":"work/a.txt","content":"mine\n"}`)
			changed("a write of a file read before the restart, changed since", err)
			if b, _ := os.ReadFile(a); string(b) != "changed outside\n" {
				t.Fatalf("the refused write changed the file: %q", b)
			}
			if sb.p == first {
				t.Fatal("the process was not started again")
			}

			// The refusal forgot the version: the next write names what
			// it reads, restart or none.
			restart()
			if _, err := call("write", `{"path":"work/a.txt","content":"mine\n"}`); err != nil {
				t.Fatalf("a write after the refusal: %v", err)
			}
			// The version the write answered is named by the next.
			restart()
			put("changed again\n")
			_, err = call("write", `{"path":"work/a.txt","content":"mine again\n"}`)
			changed("a write of a file written before the restart, changed since", err)

			// A page after a restart reads the file again.
			put("one\ntwo\n")
			if _, err := call("read", `{"path":"work/a.txt"}`); err != nil {
				t.Fatal(err)
			}
			restart()
			put("one\nthree\n")
			ok, err := call("read", `{"path":"work/a.txt","line":2}`)
			if err != nil || !strings.Contains(string(ok), `"text":"three\n"`) {
				t.Fatalf("a page after a restart: %s %v", ok, err)
			}
		})
	}
}

// TestSeenLines: the record goes to the process as seen lines of at most
// about seenLine bytes each, every version in one of them; answers are
// read for their path and version in any spelling.
func TestSeenLines(t *testing.T) {
	s := seen{}
	for i := 0; i < 500; i++ {
		s[strings.Repeat("<", 1000)+strconv.Itoa(i)] = "v" + strconv.Itoa(i)
	}
	lines := strings.Split(strings.TrimSuffix(string(s.lines()), "\n"), "\n")
	got := seen{}
	for _, l := range lines {
		if len(l) > seenLine+64<<10 {
			t.Fatalf("a seen line of %d bytes", len(l))
		}
		var h struct{ Seen map[string]string }
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatal(err)
		}
		for p, v := range h.Seen {
			got[p] = v
		}
	}
	if len(lines) < 2 || len(got) != len(s) {
		t.Fatalf("%d lines hold %d of %d versions", len(lines), len(got), len(s))
	}
	if seen(nil).lines() != nil {
		t.Fatal("no versions made a line")
	}
	for _, a := range []string{
		`{"path":"a\u003cb\"","version":"v2","text":"x"}`,
		`{"version":"v2","path":"a<b\""}`,
	} {
		if p, v, ok := answerVersion([]byte(a)); !ok || p != `a<b"` || v != "v2" {
			t.Errorf("%s: %q %q %v", a, p, v, ok)
		}
	}
}
