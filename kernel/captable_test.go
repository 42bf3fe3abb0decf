package kernel

import (
	"errors"
	"os"
	"testing"
)

func TestCapTableRefusesByRule(t *testing.T) {
	tb := NewCapTable()
	s1 := tb.Begin("main")
	dir, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := tb.Grant("main", s1, "/x", RightRead, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Grant("other", s1, "/y", RightRead, nil); err == nil {
		t.Fatal("granted into another agent's start")
	}
	if _, err := tb.Lookup(h, "main"); err != nil {
		t.Fatal(err)
	}
	if _, d, err := tb.OpenDir(h, "main", RightRead); err != nil {
		t.Fatal(err)
	} else {
		d.Close()
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want error
	}{
		{"other agent", func() error { _, err := tb.Lookup(h, "other"); return err }, ErrOtherAgent},
		{"unknown", func() error { _, err := tb.Lookup(Handle{1}, "main"); return err }, ErrUnknownHandle},
		{"no write right", func() error { _, _, err := tb.OpenDir(h, "main", RightWrite); return err }, ErrNoRight},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			var r *Refusal
			if !errors.Is(err, tc.want) || !errors.As(err, &r) {
				t.Fatalf("want %v as a *Refusal, got %v", tc.want, err)
			}
		})
	}
	if n := tb.Revoke(s1); n != 1 {
		t.Fatalf("revoked %d", n)
	}
	if _, err := tb.Lookup(h, "main"); !errors.Is(err, ErrRevokedHandle) {
		t.Fatalf("after revoke: %v", err)
	}
	if _, err := dir.Stat(); err == nil {
		t.Fatal("the folder handle is still open after revocation")
	}
	s2 := tb.Begin("main")
	if s2 == s1 {
		t.Fatal("a start id was reused")
	}
	if _, err := tb.Lookup(h, "main"); !errors.Is(err, ErrRevokedHandle) {
		t.Fatalf("an earlier start's handle in a new start: %v", err)
	}
}

func TestParseHandle(t *testing.T) {
	for _, s := range []string{"", "zz", "0123456789abcdef0123456789abcdeg", "0123456789abcdef0123456789abcdef0"} {
		if _, err := ParseHandle(s); !errors.Is(err, ErrBadHandle) {
			t.Errorf("ParseHandle(%q) = %v", s, err)
		}
	}
	h, err := ParseHandle("0123456789abcdef0123456789ABCDEF")
	if err != nil || h.String() != "0123456789abcdef0123456789abcdef" {
		t.Errorf("ParseHandle: %v %v", h, err)
	}
}
