package filetool

import (
	"encoding/json"
	"testing"
)

func TestDecodeAnswerIsStrict(t *testing.T) {
	for _, l := range []string{`{"ok":{"a":1}}`, `{"error":"refused"}`, "{\"ok\":[]}\n"} {
		if _, err := decodeAnswer([]byte(l)); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	for _, l := range []string{``, `{}`, `{"ok":null}`, `{"error":""}`, `{"ok":1,"error":"x"}`, `{"ok":1,"more":2}`, `{"ok":1}{"ok":2}`, `[1]`, `{"error":1}`} {
		if _, err := decodeAnswer([]byte(l)); err == nil {
			t.Errorf("%q was taken", l)
		}
	}
}

// FuzzDecodeAnswer: whatever the sandboxed process writes, an answer is
// taken only as exactly one of ok (valid JSON) or error (words).
func FuzzDecodeAnswer(f *testing.F) {
	f.Add([]byte(`{"ok":{"path":"a"}}`))
	f.Add([]byte(`{"error":"refused"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		a, err := decodeAnswer(line)
		if err != nil {
			return
		}
		if (a.OK != nil) == (a.Error != "") {
			t.Fatalf("both or neither: %q", line)
		}
		if a.OK != nil && !json.Valid(a.OK) {
			t.Fatalf("ok is not JSON: %q", line)
		}
	})
}
