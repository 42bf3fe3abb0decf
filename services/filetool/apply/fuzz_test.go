package apply

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeCall: a line either decodes into a call with a name and
// object arguments, or is refused; and a session answers any call it
// decodes without panicking (over an empty folder).
func FuzzDecodeCall(f *testing.F) {
	f.Add([]byte(`{"name":"read","arguments":{"path":"a"}}`))
	f.Add([]byte(`{"name":"find","arguments":{"name":"**/*.go","text":"x+"}}`))
	f.Add([]byte(`{"name":"write","arguments":{"path":"../x","content":"y"}}`))
	f.Add([]byte(`{"name":"read","arguments":{"path":"a"} }`))
	f.Add([]byte(`{"name":"re\u0061d","arguments":{}}`))
	w := newWorld(f, "work")
	w.put(f, "work/a.txt", "one\ntwo\n")
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := DecodeCall(line)
		if err != nil {
			return
		}
		if d, err := decodedCall(line); err != nil || d.Name != c.Name || !bytes.Equal(d.Arguments, c.Arguments) {
			t.Fatalf("taken as %s %s, decoded as %s %s (%v)", c.Name, c.Arguments, d.Name, d.Arguments, err)
		}
		if c.Name == "" {
			t.Fatal("a call without a name was taken")
		}
		if len(c.Arguments) > 0 {
			var m map[string]json.RawMessage
			if json.Unmarshal(c.Arguments, &m) != nil {
				t.Fatalf("arguments that are not an object were taken: %s", c.Arguments)
			}
		}
		if out, err := w.s.Call(c.Name, c.Arguments); (out == nil) == (err == nil) {
			t.Fatalf("a call answered %v and %v", out, err)
		}
	})
}

// FuzzPlainPathArgs: arguments plainPathArgs takes are decoded by
// decodeArgs to the same path and nothing else.
func FuzzPlainPathArgs(f *testing.F) {
	for _, s := range []string{`{"path":"a.txt"}`, `{"path":"a\\u0041"}`, `{"path":"x","line":2}`, `{"path":"\"}`, `{"path":""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, ok := plainPathArgs(raw)
		if !ok {
			return
		}
		var a readArgs
		if err := decodeArgs("read", raw, &a); err != nil || a != (readArgs{Path: p}) {
			t.Fatalf("%s: taken as %q, decoded as %+v (%v)", raw, p, a, err)
		}
	})
}

// FuzzTakeSeen: a seen line is taken whole or not at all, and what it
// gives the session is only clean names with versions.
func FuzzTakeSeen(f *testing.F) {
	for _, s := range []string{`{"seen":{"a.txt":"v1"}}`, `{"seen":{"../x":"v"}}`, `{"seen":{"a":""}}`,
		`{"seen":{"a":"v"},"more":1}`, `{"seen":{"a":"v"}} {}`, `{"seen":{"work/b.md":"absent"}}`, `{"seen":null}`} {
		f.Add([]byte(s))
	}
	w := newWorld(f, "work")
	f.Fuzz(func(t *testing.T, line []byte) {
		before := len(w.s.seen)
		if err := w.s.takeSeen(line); err != nil {
			if len(w.s.seen) != before {
				t.Fatalf("a refused seen line changed the session: %s", line)
			}
			return
		}
		for name, v := range w.s.seen {
			if checkName("seen", name) != nil || v == "" || v == "absent" {
				t.Fatalf("taken: %q = %q from %s", name, v, line)
			}
		}
	})
}
