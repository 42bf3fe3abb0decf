package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases are lines json.Valid takes and refuses, for TestValid and
// FuzzValid's seeds: every escape, number form and literal, their broken
// forms, a control character in a string, invalid UTF-8 (taken), the
// nesting cap and one past it, and a large answer's line.
var validCases = []string{
	`{"ok":{"path":"a.txt","version":"v1","line":1,"lines":2,"text":"<one> & \"two\"\n\u2028\t\\ \/ \b\f\r é \xff"}}`,
	`[]`, `{}`, ` [ 1 , -0 , 0.5 , 1e9 , -2E-3 , 1.5e+7 , true , false , null , "" , { "a" : [ ] } ] `,
	`"\uD83D\uDE00"`, `"\u00e9"`, `-`, `01`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `falsey`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `[1 2]`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", `"a`, `{"a":1}}`,
	`[[[]]]`, strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	"", " ", "\v1", "1 2", "\ufeff1", "{\"a\":\"\x7f\x80\"}", "{\"a\":\"\t\"}",
	`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"` + strings.Repeat(`<p>a \"b\"</p>\n`, 8000) + `"}]}}`,
}

// TestValid: Valid takes what json.Valid takes, and refuses what it
// refuses (both kinds are among the cases: each answer is checked).
func TestValid(t *testing.T) {
	took, refused := 0, 0
	for _, c := range validCases {
		got, want := Valid([]byte(c)), json.Valid([]byte(c))
		if got != want {
			t.Errorf("%.60q: Valid %v, json.Valid %v", c, got, want)
		}
		if want {
			took++
		} else {
			refused++
		}
	}
	if took == 0 || refused == 0 {
		t.Fatalf("the cases hold %d valid lines and %d invalid: both kinds are needed", took, refused)
	}
}

// FuzzValid: the differential target: Valid and json.Valid give the same
// answer for any bytes.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("%q: Valid %v, json.Valid %v", b, got, want)
		}
	})
}
