package moveentry_test

import (
	"io"
	"testing"

	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/moveentry/movetest"
)

// FuzzReader reads arbitrary bytes as a move's entries: it must never
// panic, and a stream it reads whole must hold only paths under their
// phase's areas, no deeper than MaxDepth, and modes of permission bits
// only. Seeds: testdata/fuzz/FuzzReader (the good stream and each hostile
// one), replayed by go test.
func FuzzReader(f *testing.F) {
	f.Add(movetest.Good(testID, "main").End().B.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		ents, _, err := readAll(data)
		if err != io.EOF {
			return
		}
		for _, e := range ents {
			if e.Path == "" {
				continue
			}
			if _, err := moveentry.CheckPath(e.Phase, e.Kind, e.Path); err != nil {
				t.Fatalf("accepted %q: %v", e.Path, err)
			}
			if e.Mode&^0o777 != 0 {
				t.Fatalf("accepted mode %o", e.Mode)
			}
		}
	})
}
