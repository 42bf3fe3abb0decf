package apply

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestListPastItsCapIsCut: a folder of 10,000 entries is listed whole;
// one more, and list answers the first 10,000 by name, marked cut, as it
// does past 4 MiB of names — never a refusal of the whole folder.
func TestListPastItsCapIsCut(t *testing.T) {
	w := newWorld(t, "work")
	dir := filepath.Join(w.files, "work", "many")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := maxList; i >= 1; i-- { // made last name first
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	list := func() *ListAnswer {
		t.Helper()
		out, err := w.s.Call("list", []byte(`{"path":"work/many"}`))
		if err != nil {
			t.Fatal(err)
		}
		return out.(*ListAnswer)
	}
	if a := list(); a.Cut || len(a.Entries) != maxList {
		t.Fatalf("%d entries: cut %v, %d listed", maxList, a.Cut, len(a.Entries))
	}
	if err := os.WriteFile(filepath.Join(dir, "f00000"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a := list()
	if !a.Cut || len(a.Entries) != maxList {
		t.Fatalf("%d entries: cut %v, %d listed", maxList+1, a.Cut, len(a.Entries))
	}
	if first, last := a.Entries[0].Name, a.Entries[maxList-1].Name; first != "f00000" || last != fmt.Sprintf("f%05d", maxList-1) {
		t.Fatalf("cut to %s … %s, not the first %d by name", first, last, maxList)
	}
}
