package remote

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// An answer's event stream as copyEvents reads it: each event's data a
// line, a priming event (id and retry, no data) writing nothing, reading
// stopped at the answer awaited, and the last id and retry kept for a
// resumption.
func TestCopyEventsKeepsWhereToResume(t *testing.T) {
	in := "id: e-1\nretry: 500\ndata: \n\n" +
		": a comment\nevent: message\nid: e-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
	var out bytes.Buffer
	st, err := copyEvents(strings.NewReader(in), &out, "7")
	if err != nil || st.answered || st.lastID != "e-2" || st.retry != 500*time.Millisecond {
		t.Fatalf("a stream closed before its answer: %+v %v", st, err)
	}
	if out.String() != "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n" {
		t.Fatalf("written %q", out.String())
	}
	out.Reset()
	in = "id: e-3\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\n" + "data: \"result\":{}}\n\n" + "data: {\"after\":1}\n\n"
	st, err = copyEvents(strings.NewReader(in), &out, "7")
	if err != nil || !st.answered || st.lastID != "e-3" || out.String() != "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n" {
		t.Fatalf("a stream with its answer: %+v %v %q", st, err, out.String())
	}
}

// FuzzCopyEvents holds copyEvents, which reads what a remote server
// sends, to what the bridge needs of it: one message a line, none empty,
// never a line break inside one; and answered only when a line written
// is the answer awaited.
func FuzzCopyEvents(f *testing.F) {
	f.Add([]byte("id: e-1\nretry: 500\ndata: \n\n"), "1")
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), "1")
	f.Fuzz(func(t *testing.T, in []byte, id string) {
		var out bytes.Buffer
		st, _ := copyEvents(bytes.NewReader(in), &out, id)
		found := false
		for _, line := range strings.SplitAfter(out.String(), "\n") {
			if line == "" {
				continue
			}
			msg, ok := strings.CutSuffix(line, "\n")
			if !ok || strings.TrimSpace(msg) == "" || strings.ContainsAny(msg, "\n") {
				t.Fatalf("line %q", line)
			}
			found = found || id != "" && isAnswer([]byte(msg)) && idOf([]byte(msg)) == id
		}
		if st.answered && !found {
			t.Fatalf("answered without the answer: %q", out.String())
		}
		if st.retry < 0 {
			t.Fatalf("retry %v", st.retry)
		}
	})
}
