package builtin

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseRequest: no body panics the parser or the rules; a request
// parsed is parsed the same twice; the answer calls only tools the
// request offers, each with one JSON object of arguments, in both modes.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(request(false, allTools, user("run ls work"))))
	f.Add([]byte(request(true, allTools, user("hi"), assistantCall("c", "run__command", `{"argv":["ls"]}`), toolAnswer("c", injected))))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRequest(b)
		if err != nil {
			if _, ok := err.(*RequestError); !ok {
				t.Fatalf("a refusal that is not a *RequestError: %T %v", err, err)
			}
			return
		}
		if _, err := ParseRequest(b); err != nil {
			t.Fatal("not the same twice")
		}
		offered := map[string]bool{}
		for _, tl := range r.Tools {
			offered[tl.Function.Name] = true
		}
		for _, obedient := range []bool{false, true} {
			rep := answer(r, obedient, sha256.Sum256(b))
			if len(rep.calls) > 0 && rep.text != "" {
				t.Fatal("words and calls at once")
			}
			for _, c := range rep.calls {
				if !offered[c.Function.Name] || !strings.HasPrefix(c.ID, "call_") {
					t.Fatalf("a call to %q, offered %v", c.Function.Name, offered)
				}
				var args map[string]any
				if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
					t.Fatalf("arguments %q: %v", c.Function.Arguments, err)
				}
			}
			newCompletion(r, rep, sha256.Sum256(b))
		}
	})
}

// FuzzSplitWords: a line splits, or is refused for a quote never closed;
// the words of a line joined back quoted split to the same words.
func FuzzSplitWords(f *testing.F) {
	f.Add(`grep -r "two words" 'a b' c\ d`)
	f.Fuzz(func(t *testing.T, line string) {
		w, err := splitWords(line)
		if err != nil {
			return
		}
		var q []string
		for _, x := range w {
			q = append(q, "'"+strings.ReplaceAll(x, "'", `'\''`)+"'")
		}
		w2, err := splitWords(strings.Join(q, " "))
		if err != nil || strings.Join(w2, "\x00") != strings.Join(w, "\x00") || len(w2) != len(w) {
			t.Fatalf("%q → %q → %q (%v)", line, w, w2, err)
		}
	})
}
