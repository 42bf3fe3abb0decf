package mcpstdio

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases are lines json.Valid takes and refuses, for TestValidJSON
// and FuzzValidJSON's seeds.
var validCases = []string{
	`{"ok":{"path":"a.txt","version":"v1","line":1,"lines":2,"text":"<one> & \"two\"\n\u2028\t\\ \/ \b\f\r é \xff"}}`,
	`[]`, `{}`, ` [ 1 , -0 , 0.5 , 1e9 , -2E-3 , 1.5e+7 , true , false , null , "" , { "a" : [ ] } ] `,
	`"\uD83D\uDE00"`, `"\u00e9"`, `-`, `01`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `falsey`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `[1 2]`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", `"a`, `{"a":1}}`,
	`[[[]]]`, strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	"", " ", "\v1", "1 2", "\ufeff1",
}

// TestValidJSON: ValidJSON takes what json.Valid takes, no more.
func TestValidJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := ValidJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("%.60q: ValidJSON %v, json.Valid %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ValidJSON(b), json.Valid(b); got != want {
			t.Fatalf("%q: ValidJSON %v, json.Valid %v", b, got, want)
		}
	})
}
