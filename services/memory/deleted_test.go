package memory_test

import (
	"fmt"
	"os"
	"testing"
)

// The index keeps the path and title of the latest 10,000 documents
// deleted, for list {since}, and no more: 10,005 deleted leave the
// 10,000 latest, the first five forgotten (the positive control: below
// the cap every one is kept).
func TestDeletedKeepsTheLatest10000(t *testing.T) {
	d := newDirs(t, "ada")
	a, _ := openAgent(t, d)
	const n = 10005
	path := func(i int) string { return fmt.Sprintf("memory/d%02d/n%05d.md", i%100, i) }
	for i := 0; i < n; i++ {
		write(t, d.home+"/"+path(i), "x\n")
	}
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	// Deleted in two refreshes, oldest first: the first five, then the rest.
	for i := 0; i < 5; i++ {
		os.Remove(d.home + "/" + path(i))
	}
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got, _, err := a.Deleted(); err != nil || got != 5 {
		t.Fatalf("after 5 deleted: %d kept, %v", got, err)
	}
	if err := os.RemoveAll(d.home + "/memory"); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(d.home+"/memory", 0o700)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	got, oldest, err := a.Deleted()
	if err != nil || got != 10000 {
		t.Fatalf("after %d deleted: %d kept, %v", n, got, err)
	}
	for i := 0; i < 5; i++ {
		if oldest == path(i) {
			t.Errorf("the oldest kept is %s, one of the first five deleted", oldest)
		}
	}
}
