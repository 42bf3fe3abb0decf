package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// recordedBodies are the bodies of the recorded answers under dir, the
// fuzz targets' seeds.
func recordedBodies(f *testing.F, dirs ...string) [][]byte {
	var out [][]byte
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join("testdata", "recorded", d, "*.http"))
		if err != nil || len(files) == 0 {
			f.Fatalf("no recorded answers in %s", d)
		}
		for _, name := range files {
			raw, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, parseRecorded(f, raw).Body)
		}
	}
	return out
}

type sseResult struct {
	events []sseEvent
	err    error
}

func readAllEvents(r io.Reader) sseResult {
	sr := newSSEReader(r)
	var res sseResult
	for {
		ev, err := sr.Next()
		if err != nil {
			if err != io.EOF {
				res.err = err
			}
			return res
		}
		res.events = append(res.events, ev)
	}
}

// FuzzSSEReader: whatever a provider sends, the reader never gives an
// event's data past MaxLine, and reads the same events and the same end
// whether the bytes come at once or one at a time.
func FuzzSSEReader(f *testing.F) {
	for _, b := range recordedBodies(f, "openai", "anthropic", "llamacpp", "ollama") {
		f.Add(b)
	}
	f.Add([]byte("data: a\ndata: b\r\n\r\n: comment\nevent: x\ndata\n\n"))
	f.Add([]byte("\xef\xbb\xbfdata: {}\n\nretry: 10\nid: 1\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		whole := readAllEvents(bytes.NewReader(in))
		bytewise := readAllEvents(iotest.OneByteReader(bytes.NewReader(in)))
		if !reflect.DeepEqual(whole, bytewise) {
			t.Fatalf("at once %+v, byte by byte %+v", whole, bytewise)
		}
		for _, ev := range whole.events {
			if len(ev.Data) > MaxLine {
				t.Fatalf("an event of %d bytes", len(ev.Data))
			}
		}
		if whole.err == nil && len(in) > 0 && !bytes.HasSuffix(in, []byte("\n")) {
			t.Fatal("a stream ending mid-line was taken as whole")
		}
	})
}

// checkAnswer holds what every answer a parser gives must: its text is
// what onText was given, its stop a known one, each call named and its
// arguments one compact JSON object.
func checkAnswer(t *testing.T, got Response, streamed string) {
	if got.Text != streamed {
		t.Fatalf("text %q, onText %q", got.Text, streamed)
	}
	switch got.Stop {
	case StopEnd, StopToolCalls, StopMaxTokens, StopRefused:
	default:
		t.Fatalf("stop %q", got.Stop)
	}
	for _, c := range got.ToolCalls {
		var m map[string]json.RawMessage
		if c.Name == "" || json.Unmarshal(c.Arguments, &m) != nil || m == nil {
			t.Fatalf("call %+v", c)
		}
	}
}

// checkFailure holds what every failure must: an *Error of a kind the
// parser gives.
func checkFailure(t *testing.T, err error) {
	var me *Error
	if !errors.As(err, &me) {
		if errors.Is(err, errLine) || errors.Is(err, errCutEvent) {
			return
		}
		t.Fatalf("error %v (%T)", err, err)
	}
	if me.Kind == "" || strings.ContainsAny(me.Message, "\n\r") {
		t.Fatalf("error %+v", me)
	}
}

// FuzzOpenAIStream: a chat completions stream gives a checked answer or
// an Error, never a panic and never a call with arguments that are not
// one object.
func FuzzOpenAIStream(f *testing.F) {
	for _, b := range recordedBodies(f, "openai", "llamacpp", "ollama") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var streamed strings.Builder
		got, err := readOpenAIStream(bytes.NewReader(in), cleaner{key: testKey}, func(s string) { streamed.WriteString(s) })
		if err != nil {
			checkFailure(t, err)
			return
		}
		checkAnswer(t, got, streamed.String())
	})
}

// FuzzAnthropicStream: the same for a messages stream.
func FuzzAnthropicStream(f *testing.F) {
	for _, b := range recordedBodies(f, "anthropic") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var streamed strings.Builder
		got, err := readAnthropicStream(bytes.NewReader(in), cleaner{key: testKey}, func(s string) { streamed.WriteString(s) })
		if err != nil {
			checkFailure(t, err)
			return
		}
		checkAnswer(t, got, streamed.String())
	})
}

// FuzzWholeAnswer: an answer read whole, in either format.
func FuzzWholeAnswer(f *testing.F) {
	for _, b := range recordedBodies(f, "openai", "anthropic") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, parse := range []func([]byte) (Response, error){parseOpenAIWhole, parseAnthropicWhole} {
			got, err := parse(in)
			if err != nil {
				checkFailure(t, err)
				continue
			}
			checkAnswer(t, got, got.Text)
		}
	})
}

// FuzzErrorBody: whatever an error's body and retry-after hold, the
// Error's message is one line, bounded, and never the key, and its
// retry-after is within its bound.
func FuzzErrorBody(f *testing.F) {
	for _, b := range recordedBodies(f, "openai", "anthropic", "llamacpp", "ollama") {
		f.Add(b, 429, "7")
	}
	f.Add([]byte(`{"error":{"message":"key `+testKey+`"}}`), 401, "")
	f.Add([]byte(`{"error":"words"}`), 503, "Wed, 09 Dec 2026 10:00:00 GMT")
	f.Fuzz(func(t *testing.T, body []byte, status int, retry string) {
		if status < 200 || status > 599 || status == 200 {
			return
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {retry}}, Body: io.NopCloser(bytes.NewReader(body))}
		e := statusError(resp, cleaner{key: testKey}, time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
		if strings.Contains(e.Message, testKey) || strings.ContainsAny(e.Message, "\n\r\x1b") || len(e.Message) > maxMessage+len("…") {
			t.Fatalf("message %q", e.Message)
		}
		if e.Kind == "" || e.Status != status || e.RetryAfter < 0 || e.RetryAfter > maxRetryAfter {
			t.Fatalf("error %+v", e)
		}
	})
}
