package fuzz

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

var fuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)

// TestEveryFuzzTargetHasSeeds fails for a Fuzz target whose package has
// no testdata/fuzz/<Target>/ with at least one seed file.
func TestEveryFuzzTargetHasSeeds(t *testing.T) {
	root := testenv.RepoRoot(t)
	n := 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
			n++
			seeds := filepath.Join(filepath.Dir(p), "testdata", "fuzz", m[1])
			ents, err := os.ReadDir(seeds)
			rel, _ := filepath.Rel(root, p)
			if err != nil || len(ents) == 0 {
				t.Errorf("%s: %s has no seed corpus in %s", rel, m[1], seeds)
			}
		}
		return nil
	})
	t.Logf("%d fuzz targets", n)
}
