package apply

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSeenLinesBeforeTheFirstCall: seen lines before the first call give
// the session versions, unanswered, so a write of a file changed since
// one of them is refused; after a call, a seen line is not a call line
// and changes nothing; a bad one ends the session before any answer.
func TestSeenLinesBeforeTheFirstCall(t *testing.T) {
	const seenA = `{"seen":{"work/a.txt":"an-older-version"}}`
	const write = `{"name":"write","arguments":{"path":"work/a.txt","content":"mine\n"}}`
	for _, c := range []struct {
		name  string
		lines []string
		want  []string // each answer: "ok", or words of its error
	}{
		{"first", []string{seenA, `{"seen":{"work/b.txt":"v"}}`, write}, []string{"changed since"}},
		{"after a call", []string{`{"name":"list"}`, seenA, write}, []string{"ok", "not a call line", "ok"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, "work")
			w.put(t, "work/a.txt", "theirs\n")
			var out bytes.Buffer
			if err := Serve(strings.NewReader(strings.Join(c.lines, "\n")+"\n"), &out, w.s); err != nil {
				t.Fatal(err)
			}
			var got []string
			sc := bufio.NewScanner(&out)
			for sc.Scan() {
				var a struct {
					OK    json.RawMessage
					Error string
				}
				json.Unmarshal(sc.Bytes(), &a)
				if a.Error == "" {
					a.Error = "ok"
				}
				got = append(got, a.Error)
			}
			if len(got) != len(c.want) {
				t.Fatalf("answers %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] && (c.want[i] == "ok" || !strings.Contains(got[i], c.want[i])) {
					t.Fatalf("answers %q, want %q", got, c.want)
				}
			}
		})
	}
	for _, bad := range []string{
		`{"seen":{"../x":"v"}}`,
		`{"seen":{"/etc/passwd":"v"}}`,
		`{"seen":{"a":""}}`,
		`{"seen":{"a":"absent"}}`,
		`{"seen":{},"more":1}`,
		`{"seen":["a"]}`,
		`{"seen":{"a":"v"}}{"seen":{}}`,
		`{"seen":{},"seen":{"a":"v"}}`,
		`{"seen":{},"Seen":{"a":"v"}}`,
	} {
		w := newWorld(t, "work")
		var out bytes.Buffer
		if err := Serve(strings.NewReader(bad+"\n"+`{"name":"list"}`+"\n"), &out, w.s); err == nil || out.Len() != 0 {
			t.Errorf("%s: %v, answered %q", bad, err, out.String())
		}
	}
}

// TestAnswerPastTheCap: an answer line past MaxAnswer, which serve would
// take for a misbehaving process, is written as an error instead.
func TestAnswerPastTheCap(t *testing.T) {
	var out bytes.Buffer
	for _, n := range []int{MaxAnswer, MaxAnswer + 1} {
		out.Reset()
		line := append(bytes.Repeat([]byte("x"), n-1), '\n')
		if _, err := (capped{&out}).Write(line); err != nil {
			t.Fatal(err)
		}
		if past := n > MaxAnswer; past != (out.String() == `{"error":"an answer past 8 MiB is not sent"}`+"\n") || out.Len() > MaxAnswer {
			t.Fatalf("a line of %d bytes: %d written", n, out.Len())
		}
	}
}
