package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Members agrees with encoding/json on every object: the same keys, each
// value the same JSON; and refuses what is not one valid object.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a \"}\" b"}]}}`))
	f.Add([]byte(` { "id" : "x\\"y" , "method":"ping", "params":[1,{"a":[]}] } `))
	f.Add([]byte(`{"\u0069d":1,"id":2}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[1]`))
	f.Add([]byte(`{"id":1}{"id":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		type kv struct {
			k string
			v []byte
		}
		var got []kv
		err := Members(b, func(k string, v Span) { got = append(got, kv{k, b[v.Start:v.End]}) })
		var want map[string]json.RawMessage
		werr := json.Unmarshal(b, &want)
		if werr != nil || want == nil {
			if err == nil {
				t.Fatalf("took %q, which is not one object", b)
			}
			return
		}
		if err != nil {
			t.Fatalf("refused the object %q: %v", b, err)
		}
		last := map[string][]byte{}
		for _, m := range got {
			if !json.Valid(m.v) {
				t.Fatalf("%q: member %q is %q, not a value", b, m.k, m.v)
			}
			last[m.k] = m.v
		}
		if len(last) != len(want) {
			t.Fatalf("%q: %d keys, encoding/json %d", b, len(last), len(want))
		}
		for k, v := range want {
			var x, y bytes.Buffer
			json.Compact(&x, v)
			json.Compact(&y, last[k])
			if x.String() != y.String() {
				t.Fatalf("%q: %q is %q, encoding/json %q", b, k, y.String(), x.String())
			}
		}
	})
}

func TestSplice(t *testing.T) {
	line := []byte(`{"result":{"id":1}, "id" : 9 }`)
	var id Span
	if err := Members(line, func(k string, v Span) {
		if k == "id" {
			id = v
		}
	}); err != nil {
		t.Fatal(err)
	}
	if got := string(Splice(line, id, []byte(`"c"`))); got != `{"result":{"id":1}, "id" : "c" }` {
		t.Fatalf("%s", got)
	}
}
