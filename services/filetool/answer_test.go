package filetool

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"lnk.dev/lnk/services/filetool/apply"
)

// TestDecodeAnswerIsStrict: an answer is one of {"ok"} or {"error"},
// each key once and in its own case, by the fast pass and the decoder
// alike.
func TestDecodeAnswerIsStrict(t *testing.T) {
	for _, l := range []string{`{"ok":{"a":1}}`, `{"error":"refused"}`, `{"error":"outside","refused":true}`, "{\"ok\":[]}\n", `{ "ok" : 1 }`, `{"\u006fk":1}`, `{"ok":{"a":1,"a":2}}`} {
		if _, err := decodeAnswer([]byte(l)); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	for _, l := range []string{``, `{}`, `{"ok":null}`, `{"error":""}`, `{"ok":1,"error":"x"}`, `{"ok":1,"more":2}`, `{"ok":1}{"ok":2}`, `[1]`, `{"error":1}`,
		`{"ok":1,"ok":2}`, `{"ok" :1,"ok":2}`, `{"error":"a","error":"b"}`, `{"OK":1}`, `{"Error":"x"}`, `{"ok":1,"OK":2}`, `{"ok":1,"error":""}`, `{"ok" :1,"error":""}`,
		`{"error":null}`, `{"ok":1,"error":null}`, `{"refused":true}`, `{"error":"x","refused":false}`, `{"error":"x","refused":1}`, `{"ok":1,"refused":true}`,
		`{"error":"x","refused":true,"refused":true}`, `{"error":"x","Refused":true}`} {
		if a, err := decodeAnswer([]byte(l)); err == nil {
			t.Errorf("%q was taken: %+v", l, a)
		}
	}
}

// FuzzDecodeAnswer: whatever the sandboxed process writes, an answer is
// taken only as exactly one of ok (valid JSON) or error (words); and the
// fast pass refuses exactly what the strict decoder refuses of the lines
// it takes, reading the same answer from the rest.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add([]byte(`{"ok":{"path":"a"}}`))
	f.Add([]byte(`{"error":"refused"}`))
	f.Add([]byte(`{"error":"outside","refused":true}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if fa, taken, ok := fastAnswer(line); taken {
			sa, err := strictAnswer(line)
			if ok != (err == nil) || (ok && (!bytes.Equal(fa.OK, sa.OK) || sa.Error != "")) {
				t.Fatalf("%q: fast %v %s, strict %s %q (%v)", line, ok, fa.OK, sa.OK, sa.Error, err)
			}
		}
		a, err := decodeAnswer(line)
		if err != nil {
			return
		}
		if (a.OK != nil) == (a.Error != "") || (a.Refused && a.Error == "") {
			t.Fatalf("both or neither, or refused without words: %q", line)
		}
		if a.OK != nil && !json.Valid(a.OK) {
			t.Fatalf("ok is not JSON: %q", line)
		}
	})
}

// TestCallLine: a call's line is one line, apply's Call with the same
// name and arguments (whitespace and newlines between them compacted
// away), and arguments that are not JSON are refused.
func TestCallLine(t *testing.T) {
	for _, args := range []string{`{}`, `{"path":"a.txt"}`, "{\n \"path\" : \"<a&b>\\n\u2028\",\n \"line\": 2 }", `{"content":"\u00e9 \" \\"}`} {
		line, err := callLine("read", json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Errorf("%s: not one line: %q", args, line)
		}
		var got struct {
			Name      string
			Arguments map[string]any
		}
		var want map[string]any
		json.Unmarshal([]byte(args), &want)
		if err := json.Unmarshal(line, &got); err != nil || got.Name != "read" || !reflect.DeepEqual(got.Arguments, want) {
			t.Errorf("%s: the line %q reads as %+v (%v)", args, line, got, err)
		}
	}
	for _, args := range []string{`{"path":`, `{} {}`, "{\"a\":\"\x01\"}"} {
		if line, err := callLine("read", json.RawMessage(args)); err == nil {
			t.Errorf("%q was taken: %q", args, line)
		}
	}
}

// TestApplyAnswersWithinTheCap: apply's longest answer line is one serve
// takes, so an answer it cut is never taken for misbehaviour.
func TestApplyAnswersWithinTheCap(t *testing.T) {
	if apply.MaxAnswer > maxAnswer {
		t.Fatalf("apply answers up to %d bytes, serve takes %d", apply.MaxAnswer, maxAnswer)
	}
}
