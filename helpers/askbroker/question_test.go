package askbroker

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeQuestion(t *testing.T) {
	good := `{"what":"mcp call","sandbox":"work","agent":"ann","call":"tools/call rm","allow":"lnk agent allow --tool x --allow rm"}`
	q, err := DecodeQuestion([]byte(good))
	if err != nil || q.Sandbox != "work" || q.Call != "tools/call rm" {
		t.Fatalf("DecodeQuestion(good) = %+v, %v", q, err)
	}
	// Accents and emoji are text, shown as written (the control).
	q, err = DecodeQuestion([]byte(`{"what":"mcp call","sandbox":"café","agent":"","call":"🙂","allow":"lnk agent allow --tool x --allow é"}`))
	if err != nil || q.Sandbox != "café" || q.Call != "🙂" || q.Allow != "lnk agent allow --tool x --allow é" {
		t.Fatalf("DecodeQuestion(accents, emoji) = %+v, %v", q, err)
	}
	for _, tc := range []struct{ name, in string }{
		{"not json", `hello`},
		{"array", `["what"]`},
		{"missing field", `{"what":"a","sandbox":"b","agent":"","call":"c"}`},
		{"extra field", `{"what":"a","sandbox":"b","agent":"","call":"c","allow":"d","answer":"yes"}`},
		{"repeated field", `{"what":"a","what":"b","sandbox":"b","agent":"","call":"c","allow":"d"}`},
		{"not a string", `{"what":1,"sandbox":"b","agent":"","call":"c","allow":"d"}`},
		{"empty call", `{"what":"a","sandbox":"b","agent":"","call":" ","allow":"d"}`},
		// Empty once cleaned: a question showing nothing is never asked.
		{"invisible call", `{"what":"a","sandbox":"b","agent":"","call":"\u200b\u202e\u001b\n\u00ad","allow":"d"}`},
		{"invisible sandbox", `{"what":"a","sandbox":"\u2066\u2069","agent":"","call":"c","allow":"d"}`},
		{"invisible allow", `{"what":"a","sandbox":"b","agent":"","call":"c","allow":"\ufeff"}`},
		{"trailing data", good + `{}`},
		{"too large", `{"what":"` + strings.Repeat("a", MaxQuestionBytes) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeQuestion([]byte(tc.in)); !errors.Is(err, ErrBadQuestion) {
				t.Errorf("DecodeQuestion(%.60q) = %v, want ErrBadQuestion", tc.in, err)
			}
		})
	}
}

func TestQuestionFieldsAreOneLine(t *testing.T) {
	q, err := DecodeQuestion([]byte(`{"what":"mcp\ncall","sandbox":"w\u202eork","agent":"a\u200bnn","call":"x\ny","allow":"lnk\r\nallow"}`))
	if err != nil {
		t.Fatal(err)
	}
	if q.What != "mcp call" || q.Sandbox != "work" || q.Agent != "ann" || q.Allow != "lnk allow" || q.Call != "x\ny" {
		t.Errorf("fields not cleaned: %+v", q)
	}
}

func FuzzDecodeQuestion(f *testing.F) {
	f.Add([]byte(`{"what":"mcp call","sandbox":"work","agent":"ann","call":"tools/call rm","allow":"lnk agent allow"}`))
	f.Add([]byte(`{"what":"a","sandbox":"b","agent":"","call":"c\u202e\n","allow":"d"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := DecodeQuestion(b)
		if err != nil {
			return
		}
		for _, s := range []string{q.What, q.Sandbox, q.Agent, q.Call, q.Allow} {
			for _, r := range s {
				if Forbidden(r) {
					t.Fatalf("decoded question keeps %U", r)
				}
			}
		}
		for _, s := range []string{q.What, q.Sandbox, q.Agent, q.Allow} {
			if strings.Contains(s, "\n") || utf8.RuneCountInString(s) > MaxLineRunes {
				t.Fatalf("one-line field %q holds a newline", s)
			}
		}
	})
}
