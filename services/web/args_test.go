package web

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestArgsStrict: a call's arguments are read strictly: an unknown key,
// a key twice or in another case, a missing one, a wrong type, and a
// count out of range are each refused with why; the right ones are read
// (the controls).
func TestArgsStrict(t *testing.T) {
	for raw, want := range map[string]string{
		`{"url":"https://example.com/","url":"http://10.0.0.1/"}`: "given twice",
		`{"url":"https://example.com/","URL":"http://10.0.0.1/"}`: "given twice",
		`{"URL":"https://example.com/"}`:                          `no argument "URL"`,
		`{"url":"https://example.com/","extra":1}`:                `no argument "extra"`,
		`{}`:            `lacks its argument "url"`,
		`{"url":7}`:     "not a string",
		`[1]`:           "not one JSON object",
		`{"url":"x"`:    "not JSON",
		``:              `lacks its argument "url"`,
		`{"url":null}x`: "not JSON",
	} {
		if _, err := decodeFetch(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fetch %s: %v, want %q", raw, err, want)
		}
	}
	if a, err := decodeFetch(json.RawMessage(`{"url":"https://example.com/"}`)); err != nil || a.URL != "https://example.com/" {
		t.Errorf("a right fetch: %+v %v", a, err)
	}
	for raw, want := range map[string]string{
		`{"query":"x","count":0}`:   "1 to 20",
		`{"query":"x","count":21}`:  "1 to 20",
		`{"query":"x","count":1.5}`: "1 to 20",
		`{"query":"x","Count":3}`:   `no argument "Count"`,
		`{"count":3}`:               `lacks its argument "query"`,
	} {
		if _, err := decodeSearch(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("search %s: %v, want %q", raw, err, want)
		}
	}
	if a, err := decodeSearch(json.RawMessage(`{"query":"link","count":5}`)); err != nil || a.Query != "link" || a.Count != 5 {
		t.Errorf("a right search: %+v %v", a, err)
	}
}

// FuzzDecodeArgs: arguments that are taken hold exactly the known keys,
// each once in its own case, and decoding them with encoding/json gives
// the same values.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{`{"url":"https://example.com/"}`, `{"url":"a","URL":"b"}`, `{"query":"q","count":3}`, `{"query":"q","count":1e1}`, `{"url":"\u0075"}`, `{"u\u0072l":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if a, err := decodeFetch(b); err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) != nil || len(m) != 1 || m["url"] != a.URL {
				t.Fatalf("%q taken as %+v", b, a)
			}
		}
		if a, err := decodeSearch(b); err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) != nil || m["query"] != a.Query || a.Count < 0 || a.Count > 20 {
				t.Fatalf("%q taken as %+v", b, a)
			}
		}
	})
}
