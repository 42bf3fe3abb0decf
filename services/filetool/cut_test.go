package filetool_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLongAnswersAreCut: names of 255 bytes that JSON spells in six each
// (<, \u003c) would make a list of 6,000 entries, or a find of 1,000
// matching lines at a deep path, an answer past serve's 8 MiB, which it
// takes for a misbehaving process and ends. apply cuts each below it and
// says so (cut), and the session's one process answers on.
func TestLongAnswersAreCut(t *testing.T) {
	f := newFolders(t)
	long := strings.Repeat("<", 250)
	many := filepath.Join(f.files, "work", "many")
	if err := os.MkdirAll(many, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6000; i++ {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("%s%05d", long, i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	deep := filepath.Join(f.files, "work", "deep")
	for i := 0; i < 14; i++ {
		deep = filepath.Join(deep, long)
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deep, "f.txt"), []byte(strings.Repeat("match\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	starts := filepath.Join(f.aside, "starts")
	cs := connect(t, nil, applyIn(t, f, starts, "work")...)

	for _, c := range []struct {
		call, key string
		args      map[string]any
		whole     int // what an answer without a cap would hold
	}{
		{"list", "entries", map[string]any{"path": "work/many"}, 6000},
		{"find", "matches", map[string]any{"path": "work/deep", "text": "match", "max": 1000}, 1000},
	} {
		text, isErr := call(t, cs, c.call, c.args)
		if isErr {
			t.Fatalf("%s: %s", c.call, text)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			t.Fatalf("%s: %v", c.call, err)
		}
		got, _ := r[c.key].([]any)
		if r["cut"] != true || len(got) == 0 || len(got) >= c.whole || len(text) > 8<<20 {
			t.Fatalf("%s: cut %v, %d of %d, %d bytes", c.call, r["cut"], len(got), c.whole, len(text))
		}
	}
	if n := len(startsIn(t, starts)); n != 1 {
		t.Fatalf("the calls started %d processes", n)
	}
}
