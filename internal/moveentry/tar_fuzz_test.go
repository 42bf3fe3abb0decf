package moveentry_test

import (
	"io"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/moveentry/movetest"
)

// FuzzTarReader reads arbitrary bytes as a backup archive: it must never
// panic, and an archive it reads whole holds only plain paths under the
// areas given, no deeper than MaxDepth, no link when links are refused,
// modes of permission bits only, and files no larger in all than the
// archive. Seeds: testdata/fuzz/FuzzTarReader (the good archive and each
// hostile one), replayed by go test.
func FuzzTarReader(f *testing.F) {
	f.Add(movetest.GoodHomeTar(), true)
	f.Fuzz(func(t *testing.T, data []byte, links bool) {
		ents, _, err := readTar(data, homeAreas, links)
		if err != io.EOF {
			return
		}
		var total int64
		for _, e := range ents {
			if _, err := moveentry.CheckPath(moveentry.PhaseSwitch, e.Kind, e.Path); err != nil {
				t.Fatalf("accepted %q: %v", e.Path, err)
			}
			if e.Path != "home" && !strings.HasPrefix(e.Path, "home/") {
				t.Fatalf("accepted %q outside home", e.Path)
			}
			if e.Mode&^0o777 != 0 {
				t.Fatalf("accepted mode %o", e.Mode)
			}
			if e.Kind == moveentry.KindLink && !links {
				t.Fatalf("accepted the link %q", e.Path)
			}
			total += e.Size
		}
		if total > int64(len(data)) {
			t.Fatalf("files of %d bytes from an archive of %d", total, len(data))
		}
	})
}
