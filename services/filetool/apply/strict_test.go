package apply

import (
	"errors"
	"testing"
)

// TestArgumentsAreStrict: a call's arguments with a key twice, a key in
// another case, an unknown key or a null where a value is needed are
// refused as bad arguments, never read one way here and another by a
// reader in front (a tool bridge's schema check, a log); the same
// arguments spelt once, in their own case, are taken (the positive
// control). The file is read, and written, only by the good spellings.
func TestArgumentsAreStrict(t *testing.T) {
	w := newWorld(t, "work")
	w.put(t, "work/a.txt", "one\n")
	w.put(t, "work/b.txt", "two\n")
	for _, c := range []struct{ name, good, bad string }{
		{"read", `{"path":"work/a.txt"}`, `{"path":"work/a.txt","path":"work/b.txt"}`},
		{"read", `{"path":"work/a.txt"}`, `{"PATH":"work/a.txt"}`},
		{"read", `{"path":"work/a.txt"}`, `{"path":"work/a.txt","Path":"work/b.txt"}`},
		{"read", `{"path":"work/a.txt","line":1}`, `{"path":"work/a.txt","line":null}`},
		{"read", `{"path":"work/a.txt"}`, `{"path":null}`},
		{"read", `{"path":"work/a.txt"}`, `{"path":"work/a.txt","more":1}`},
		{"read", `{"p\u0061th":"work/a.txt"}`, `{"p\u0061th":"work/a.txt","path":"work/b.txt"}`},
		{"list", `{"path":"work"}`, `{"path":"work","path":"."}`},
		{"list", `{}`, `{"path":null}`},
		{"find", `{"path":"work","name":"*.txt"}`, `{"path":"work","name":"*.txt","NAME":"*"}`},
		{"write", `{"path":"work/c.txt","content":"x"}`, `{"path":"work/c.txt","content":"x","content":"y"}`},
		{"write", `{"path":"work/d.txt","content":"x"}`, `{"path":"work/d.txt","Content":"x"}`},
		{"replace", `{"path":"work/b.txt","old":"two","new":"2"}`, `{"path":"work/b.txt","old":"two","new":"2","all":null}`},
		{"replace", `{"path":"work/a.txt","old":"one","new":"1"}`, `{"path":"work/a.txt","old":"one","new":"1","new":"3"}`},
	} {
		if out, err := w.s.Call(c.name, []byte(c.bad)); !errors.Is(err, ErrUsage) {
			t.Errorf("%s %s: answered %v, %v; want bad arguments", c.name, c.bad, out, err)
		}
		if _, err := w.s.Call(c.name, []byte(c.good)); err != nil {
			t.Errorf("%s %s: %v", c.name, c.good, err)
		}
	}
	for name, want := range map[string]string{"work/a.txt": "1\n", "work/b.txt": "2\n", "work/c.txt": "x", "work/d.txt": "x"} {
		if got := w.get(t, name); got != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
}

// TestCallLineIsStrict: a call line with its name twice or in another
// case, or an unknown key, is refused; spelt plainly it is taken.
func TestCallLineIsStrict(t *testing.T) {
	for _, l := range []string{`{"name":"read","arguments":{"path":"a"}}`, `{"arguments":{"path":"a"},"name":"read"}`, `{ "name":"read"}`, `{"n\u0061me":"read"}`} {
		if _, err := DecodeCall([]byte(l)); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	for _, l := range []string{`{"name":"read","name":"write","arguments":{}}`, `{"NAME":"read","arguments":{}}`, `{"name":"read","Arguments":{}}`,
		`{"name":"read","arguments":{},"arguments":{"path":"a"}}`, `{"name":"read","more":1}`, `{"name":null}`, `{"name":"read","arguments":1}`} {
		if c, err := DecodeCall([]byte(l)); err == nil {
			t.Errorf("%s was taken: %+v", l, c)
		}
	}
}
