package move_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/move"
)

// TestReceiveLeavesNoEmptyMoving: a receive, taken or refused, removes
// the ~/Link/Agents/.moving it made and left empty; one that holds
// anything else (a file not Link's, another receive's staging folder) is
// kept with what it holds; a link in its place is never followed nor
// removed, and the receive is refused.
func TestReceiveLeavesNoEmptyMoving(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	pub, priv := newKey(t)
	receive := func(to string, plain []byte) error {
		_, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(seal(t, pub, plain)))
		return err
	}
	for _, taken := range []bool{true, false} {
		to := receiverWith(t, id)
		plain := goodPlain(id)
		if !taken {
			plain = plain[:len(plain)-10] // cut: refused once unpacked
		}
		if err := receive(to, plain); (err == nil) != taken {
			t.Fatalf("taken %v: %v", taken, err)
		}
		if _, err := os.Lstat(filepath.Join(caps.Layout{Home: to}.Agents(), ".moving")); !os.IsNotExist(err) {
			t.Errorf("taken %v: .moving is left: %v", taken, err)
		}
	}

	// Something else there: kept, with what it holds.
	to := receiverWith(t, id)
	moving := filepath.Join(caps.Layout{Home: to}.Agents(), ".moving")
	other := filepath.Join(moving, "fedcba9876543210fedcba9876543210") // another receive's, fresh
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(moving, 0o700)
	if err := os.WriteFile(filepath.Join(moving, "notes"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := receive(to, goodPlain(id)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{other, filepath.Join(moving, "notes")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}

	// A link in its place: refused, the link and its target as they were.
	to = receiverWith(t, id)
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(caps.Layout{Home: to}.Agents(), ".moving")); err != nil {
		t.Fatal(err)
	}
	if err := receive(to, goodPlain(id)); err == nil {
		t.Fatal("a receive through a linked .moving was taken")
	}
	if fi, err := os.Lstat(filepath.Join(caps.Layout{Home: to}.Agents(), ".moving")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link: %v %v", fi, err)
	}
	if names, err := os.ReadDir(target); err != nil || len(names) != 0 {
		t.Errorf("the link's target: %v %v", names, err)
	}
}
