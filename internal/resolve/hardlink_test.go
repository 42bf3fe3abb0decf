package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHardLinkIsARegularFile shows what the package doc says of hard
// links: one beneath the root to a file outside reads that file (it is a
// regular file), and a write to it replaces the name, never writing into
// the file outside.
func TestHardLinkIsARegularFile(t *testing.T) {
	base := testTree(t)
	outside := filepath.Join(base, "outside", "shared")
	must(t, os.WriteFile(outside, []byte("shared"), 0o600))
	must(t, os.Link(outside, filepath.Join(base, "root", "hard")))
	r := openRoot(t, filepath.Join(base, "root"))
	if info, err := r.Stat("hard"); err != nil || info.Nlink != 2 || !info.Mode.IsRegular() {
		t.Fatalf("Stat(hard) = %+v, %v; want a regular file with 2 names", info, err)
	}
	b, v, err := r.ReadFile("hard", 100)
	if err != nil || string(b) != "shared" {
		t.Fatalf("ReadFile(hard) = %q, %v", b, err)
	}
	if _, err := r.Replace("hard", []byte("new"), v); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "shared" {
		t.Fatalf("the file outside now holds %q", b)
	}
	if b, _, _ := r.ReadFile("hard", 100); string(b) != "new" {
		t.Fatalf("the name holds %q", b)
	}
}

func TestNameCaps(t *testing.T) {
	long := strings.Repeat("x", MaxName)
	for _, c := range []struct {
		name string
		want error
	}{
		{long, nil},
		{long + "x", ErrInvalid},
		{strings.Repeat("a/", MaxComponent-1) + "a", nil},
		{strings.Repeat("a/", MaxComponent) + "a", ErrInvalid},
		{strings.Repeat(long+"/", 16) + "x", ErrInvalid}, // past MaxPath
		{"a/" + long + "x/..", ErrEscape},
	} {
		err := ValidatePath(c.name)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("ValidatePath(%d bytes) = %v; want %v", len(c.name), err, c.want)
		}
	}
}
